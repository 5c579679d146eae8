#include "compile/threadpool.h"

#ifdef __linux__
#include <sched.h>
#endif

namespace tilescope {

unsigned ThreadPool::machineThreads() {
    const unsigned n = std::thread::hardware_concurrency();
    return n == 0 ? 1 : n;
}

unsigned ThreadPool::usableThreads() {
#ifdef __linux__
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        if (const int n = CPU_COUNT(&set); n > 0)
            return static_cast<unsigned>(n);
#endif
    return machineThreads();
}

ThreadPool::ThreadPool(unsigned threads) {
    const unsigned n = threads == 0 ? usableThreads() : threads;
    m_threads.reserve(n);
    for (unsigned i = 0; i < n; ++i)
        m_threads.emplace_back([this] { run(); });
}

ThreadPool::~ThreadPool() {
    {
        std::lock_guard lock(m_mutex);
        m_stopping = true;
    }
    m_wake.notify_all();
    for (std::thread& thread : m_threads)
        thread.join();
}

void ThreadPool::post(std::function<void()> job) {
    {
        std::lock_guard lock(m_mutex);
        m_jobs.push_back(std::move(job));
    }
    m_wake.notify_one();
}

void ThreadPool::run() {
    for (;;) {
        std::function<void()> job;
        {
            std::unique_lock lock(m_mutex);
            m_wake.wait(lock, [this] { return m_stopping || !m_jobs.empty(); });
            if (m_jobs.empty())
                return; // stopping, and nothing left to run
            job = std::move(m_jobs.front());
            m_jobs.pop_front();
        }
        job();
    }
}

} // namespace tilescope
