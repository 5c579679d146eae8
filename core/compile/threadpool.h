#pragma once

// A fixed set of worker threads running posted jobs in FIFO order. Jobs are independent and
// must not throw (an escaping exception ends the program, as in a plain std::thread).

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tilescope {

class ThreadPool {
public:
    /// `threads` == 0: one per hardware thread this process may run on (usableThreads()).
    explicit ThreadPool(unsigned threads = 0);
    /// Runs every job already posted, then joins the threads.
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    unsigned size() const { return static_cast<unsigned>(m_threads.size()); }
    void post(std::function<void()> job);

    /// hardware_concurrency(), or 1 when the platform cannot tell.
    static unsigned machineThreads();
    /// The hardware threads this process may run on: its CPU affinity (taskset, a cpuset, an MPI
    /// launcher's binding), else machineThreads().
    static unsigned usableThreads();

private:
    void run();

    std::mutex m_mutex;
    std::condition_variable m_wake;
    std::deque<std::function<void()>> m_jobs;
    bool m_stopping = false;
    std::vector<std::thread> m_threads;
};

} // namespace tilescope
