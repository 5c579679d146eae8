// The compile pool's threads (compile/threadpool.h): its size (by default the CPUs the process may
// run on: a binding to one CPU gives one thread), FIFO order on one thread, every job run once,
// jobs posted from jobs, and the destructor running what is already posted.

#include "compile/threadpool.h"

#include <QtTest>

#include <sched.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

using namespace tilescope;

class TestThreadPool : public QObject {
    Q_OBJECT
private slots:
    void size();
    void boundToOneCpu();
    void oneThreadRunsInOrder();
    void everyJobRunsOnce();
    void threadsRunConcurrently();
    void destructorRunsWhatIsPosted();
    void jobsPostJobs();
};

void TestThreadPool::size() {
    QCOMPARE(ThreadPool(3).size(), 3u);
    QCOMPARE(ThreadPool(0).size(), ThreadPool::usableThreads());
    QVERIFY(ThreadPool::machineThreads() >= 1);
    QVERIFY(ThreadPool::usableThreads() >= 1 && ThreadPool::usableThreads() <= ThreadPool::machineThreads());
}

void TestThreadPool::boundToOneCpu() {
    // As mpirun binds a rank to a core: the pool's default is one thread, not one per CPU.
    cpu_set_t was;
    CPU_ZERO(&was);
    QCOMPARE(sched_getaffinity(0, sizeof was, &was), 0);
    int first = 0;
    while (!CPU_ISSET(first, &was))
        ++first;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    QCOMPARE(sched_setaffinity(0, sizeof one, &one), 0);
    const unsigned usable = ThreadPool::usableThreads();
    const unsigned pool = ThreadPool(0).size();
    QCOMPARE(sched_setaffinity(0, sizeof was, &was), 0);
    QCOMPARE(usable, 1u);
    QCOMPARE(pool, 1u);
    QCOMPARE(ThreadPool::usableThreads(), unsigned(CPU_COUNT(&was)));
}

void TestThreadPool::oneThreadRunsInOrder() {
    std::vector<int> order;
    {
        ThreadPool pool(1);
        for (int i = 0; i < 100; ++i)
            pool.post([&order, i] { order.push_back(i); }); // one thread: no lock needed
    }
    QCOMPARE(order.size(), std::size_t(100));
    for (int i = 0; i < 100; ++i)
        QCOMPARE(order[static_cast<std::size_t>(i)], i);
}

void TestThreadPool::everyJobRunsOnce() {
    constexpr int kJobs = 5000;
    std::vector<std::atomic<int>> runs(kJobs);
    {
        ThreadPool pool(4);
        for (int i = 0; i < kJobs; ++i)
            pool.post([&runs, i] { runs[static_cast<std::size_t>(i)].fetch_add(1); });
    }
    for (int i = 0; i < kJobs; ++i)
        QCOMPARE(runs[static_cast<std::size_t>(i)].load(), 1);
}

// Two jobs that each wait for the other finish only if two threads run them at once.
void TestThreadPool::threadsRunConcurrently() {
    std::atomic<int> arrived{0};
    std::atomic<bool> bothSeen{true};
    {
        ThreadPool pool(2);
        for (int j = 0; j < 2; ++j)
            pool.post([&] {
                arrived.fetch_add(1);
                const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
                while (arrived.load() < 2 && std::chrono::steady_clock::now() < until)
                    std::this_thread::yield();
                if (arrived.load() < 2)
                    bothSeen = false;
            });
    }
    QVERIFY(bothSeen.load());
}

void TestThreadPool::destructorRunsWhatIsPosted() {
    std::atomic<int> done{0};
    {
        ThreadPool pool(2);
        for (int i = 0; i < 50; ++i)
            pool.post([&done] {
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
                done.fetch_add(1);
            });
    } // joins only after the queue is empty
    QCOMPARE(done.load(), 50);
}

void TestThreadPool::jobsPostJobs() {
    std::atomic<int> done{0};
    std::mutex threadsMutex;
    std::set<std::thread::id> threads;
    {
        ThreadPool pool(3);
        for (int i = 0; i < 10; ++i)
            pool.post([&] {
                {
                    std::lock_guard lock(threadsMutex);
                    threads.insert(std::this_thread::get_id());
                }
                pool.post([&done] { done.fetch_add(1); });
                done.fetch_add(1);
            });
    }
    QCOMPARE(done.load(), 20);
    QVERIFY(!threads.empty() && threads.size() <= 3);
}

QTEST_GUILESS_MAIN(TestThreadPool)
#include "tst_threadpool.moc"
