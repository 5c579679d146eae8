// The compile pool's threads (compile/threadpool.h): its size, FIFO order on one thread, every
// job run once, jobs posted from jobs, and the destructor running what is already posted.

#include "compile/threadpool.h"

#include <QtTest>

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
    void oneThreadRunsInOrder();
    void everyJobRunsOnce();
    void threadsRunConcurrently();
    void destructorRunsWhatIsPosted();
    void jobsPostJobs();
};

void TestThreadPool::size() {
    QCOMPARE(ThreadPool(3).size(), 3u);
    QCOMPARE(ThreadPool(0).size(), ThreadPool::machineThreads());
    QVERIFY(ThreadPool::machineThreads() >= 1);
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
