// The views' one helper for work off the GUI thread: superseded jobs deliver nothing, results
// arrive on the GUI thread, a destroyed receiver gets nothing (and nothing crashes), a running
// job sees its cancel flag, and a task waits for its jobs when it goes.

#include "common/backgroundtask.h"

#include <QObject>
#include <QSignalSpy>
#include <QTest>
#include <QThread>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

using namespace tilescope::views;

namespace {

constexpr int kTimeoutMs = 10'000;

// A gate a job waits at until the test opens it (or ten seconds pass, so that a failing test ends).
struct Gate {
    std::atomic<bool> open{false};
    void wait() const {
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (!open.load() && std::chrono::steady_clock::now() < until)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
};

// Waits until `job` is cancelled (or ten seconds pass); whether it saw the flag.
bool waitForCancel(const BackgroundJob& job) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!job.isCancelled() && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return job.isCancelled();
}

// A receiver that owns its task, as the views do.
class Owner : public QObject {
public:
    explicit Owner(std::atomic<bool>* sawCancel)
        : m_sawCancel(sawCancel) {}
    void startWaiting(std::atomic<bool>* running) {
        m_task.start(
            [running, sawCancel = m_sawCancel](const BackgroundJob& job) {
                running->store(true);
                sawCancel->store(waitForCancel(job));
                return 1;
            },
            [this](int) { ++delivered; });
    }
    int delivered = 0;

private:
    std::atomic<bool>* m_sawCancel;
    BackgroundTask m_task{this};
};

} // namespace

class TestBackgroundTask : public QObject {
    Q_OBJECT
private slots:
    void deliversOnTheGuiThread();
    void supersededResultIsDropped();
    void supersedeWithoutStarting();
    void stagesArriveInOrder();
    void receiverDestroyedBeforeTheJobEnds();
    void ownerDestroyedWhileItsJobRuns();
    void runningJobSeesCancel();
    void runningJobSeesSupersession();
};

void TestBackgroundTask::deliversOnTheGuiThread() {
    QObject receiver;
    BackgroundTask task(&receiver);
    QThread* workThread = nullptr;
    QThread* deliverThread = nullptr;
    int value = 0;
    task.start(
        [&workThread]() {
            workThread = QThread::currentThread();
            return 42;
        },
        [&](int result) {
            deliverThread = QThread::currentThread();
            value = result;
        });
    QTRY_COMPARE_WITH_TIMEOUT(value, 42, kTimeoutMs);
    QCOMPARE(deliverThread, QThread::currentThread());
    QCOMPARE(deliverThread, receiver.thread());
    QVERIFY(workThread != nullptr);
    QVERIFY(workThread != QThread::currentThread());

    // Work without a result: deliver is called with nothing.
    bool done = false;
    task.start([]() {}, [&done]() { done = true; });
    QTRY_VERIFY_WITH_TIMEOUT(done, kTimeoutMs);
}

void TestBackgroundTask::supersededResultIsDropped() {
    QObject receiver;
    BackgroundTask task(&receiver, 2);
    Gate gate;
    std::atomic<bool> firstRunning{false};
    std::atomic<bool> firstDone{false};
    std::vector<int> delivered;
    task.start(
        [&](const BackgroundJob&) {
            firstRunning.store(true);
            gate.wait();
            firstDone.store(true);
            return 1;
        },
        [&](int v) { delivered.push_back(v); });
    QTRY_VERIFY_WITH_TIMEOUT(firstRunning.load(), kTimeoutMs);
    task.start([]() { return 2; }, [&](int v) { delivered.push_back(v); });
    QTRY_COMPARE_WITH_TIMEOUT(delivered.size(), std::size_t(1), kTimeoutMs);
    gate.open.store(true); // the first job ends now, after the second
    QTRY_VERIFY_WITH_TIMEOUT(firstDone.load(), kTimeoutMs);
    QTest::qWait(100); // what it posted has arrived by now, and was dropped
    QCOMPARE(delivered, std::vector<int>{2});

    // A job superseded before it began does not run at all.
    BackgroundTask single(&receiver, 1);
    Gate hold;
    std::atomic<int> ranFirst{0};
    std::atomic<int> ranSecond{0};
    bool secondDelivered = false;
    single.start([&hold]() { hold.wait(); }); // keeps the one thread busy
    single.start([&ranFirst]() { ++ranFirst; }, []() {});
    single.start([&ranSecond]() { ++ranSecond; }, [&secondDelivered]() { secondDelivered = true; });
    hold.open.store(true);
    QTRY_VERIFY_WITH_TIMEOUT(secondDelivered, kTimeoutMs);
    QCOMPARE(ranFirst.load(), 0);
    QCOMPARE(ranSecond.load(), 1);
}

void TestBackgroundTask::supersedeWithoutStarting() {
    QObject receiver;
    BackgroundTask task(&receiver);
    Gate gate;
    std::atomic<bool> running{false};
    bool delivered = false;
    task.start(
        [&]() {
            running.store(true);
            gate.wait();
        },
        [&]() { delivered = true; });
    QTRY_VERIFY_WITH_TIMEOUT(running.load(), kTimeoutMs);
    task.supersede();
    QVERIFY(task.isCancelled());
    gate.open.store(true);
    task.stop();
    QTest::qWait(50);
    QVERIFY(!delivered);
}

void TestBackgroundTask::stagesArriveInOrder() {
    QObject receiver;
    BackgroundTask task(&receiver);
    std::vector<int> stages;
    task.start([&stages](const BackgroundJob& job) {
        for (int i = 0; i < 5; ++i)
            job.post([&stages, i]() {
                QCOMPARE(QThread::currentThread(), QCoreApplication::instance()->thread());
                stages.push_back(i);
            });
    });
    QTRY_COMPARE_WITH_TIMEOUT(stages.size(), std::size_t(5), kTimeoutMs);
    QCOMPARE(stages, (std::vector<int>{0, 1, 2, 3, 4}));
}

void TestBackgroundTask::receiverDestroyedBeforeTheJobEnds() {
    auto* receiver = new QObject;
    BackgroundTask task(receiver);
    Gate gate;
    std::atomic<bool> running{false};
    std::atomic<bool> done{false};
    bool delivered = false;
    task.start(
        [&]() {
            running.store(true);
            gate.wait();
            done.store(true);
            return std::make_shared<int>(7);
        },
        [&](std::shared_ptr<int>) { delivered = true; });
    QTRY_VERIFY_WITH_TIMEOUT(running.load(), kTimeoutMs);
    delete receiver;
    gate.open.store(true);
    QTRY_VERIFY_WITH_TIMEOUT(done.load(), kTimeoutMs);
    QTest::qWait(100); // still the newest job, but its receiver is gone
    QVERIFY(!delivered);

    // Posted before the receiver went, still queued when it went: dropped too.
    auto* second = new QObject;
    BackgroundTask other(second);
    std::atomic<bool> posted{false};
    other.start([&posted]() { posted.store(true); }, [&delivered]() { delivered = true; });
    // Waits without handling events: the result is posted by now, and not delivered.
    for (int i = 0; i < kTimeoutMs && !posted.load(); ++i)
        QThread::msleep(1);
    QThread::msleep(50);
    delete second;
    QTest::qWait(50);
    QVERIFY(!delivered);
}

void TestBackgroundTask::ownerDestroyedWhileItsJobRuns() {
    // The owner's task waits for the job in its destructor; the job sees the cancel flag and
    // ends, and its result is not delivered to the half-destroyed owner.
    std::atomic<bool> sawCancel{false};
    std::atomic<bool> running{false};
    auto owner = std::make_unique<Owner>(&sawCancel);
    owner->startWaiting(&running);
    QTRY_VERIFY_WITH_TIMEOUT(running.load(), kTimeoutMs);
    owner.reset();
    QVERIFY(sawCancel.load());
    QTest::qWait(50); // nothing left to deliver to
}

void TestBackgroundTask::runningJobSeesCancel() {
    QObject receiver;
    BackgroundTask task(&receiver);
    std::atomic<bool> running{false};
    int result = -1;
    task.start(
        [&running](const BackgroundJob& job) {
            running.store(true);
            return waitForCancel(job) ? 1 : 0;
        },
        [&result](int r) { result = r; });
    QTRY_VERIFY_WITH_TIMEOUT(running.load(), kTimeoutMs);
    QVERIFY(!task.isCancelled());
    task.cancel();
    QVERIFY(task.isCancelled());
    // Cancelled, not superseded: what the job reports still arrives.
    QTRY_COMPARE_WITH_TIMEOUT(result, 1, kTimeoutMs);
}

void TestBackgroundTask::runningJobSeesSupersession() {
    QObject receiver;
    BackgroundTask task(&receiver, 2);
    std::atomic<bool> running{false};
    std::atomic<bool> sawCancel{false};
    std::atomic<bool> sawSuperseded{false};
    task.start([&](const BackgroundJob& job) {
        running.store(true);
        sawCancel.store(waitForCancel(job));
        sawSuperseded.store(job.isSuperseded());
        job.cancelFlag(); // the same flag, for core calls that poll one
    });
    QTRY_VERIFY_WITH_TIMEOUT(running.load(), kTimeoutMs);
    bool second = false;
    task.start([]() {}, [&second]() { second = true; });
    QTRY_VERIFY_WITH_TIMEOUT(second, kTimeoutMs);
    QVERIFY(!task.isCancelled()); // the newest job's flag
    task.stop();
    QVERIFY(sawCancel.load());
    QVERIFY(sawSuperseded.load());
}

QTEST_MAIN(TestBackgroundTask)
#include "tst_backgroundtask.moc"
