// On a GPU: tilescope-worker, run the way the engine runs it (posix_spawn, the request and reply
// pipes on descriptors 3 and 4). It greets with its device and shuts down cleanly on request or
// when the engine goes away; requests it cannot understand end it with status 4 and the reason on
// stderr. Without a usable device the suite reports a skip with the worker's reason.
// (Without a device the worker is tests/core/measure/tst_worker.cpp's.)

#include "workerprocess.h"

#include <QtTest>

#include <chrono>
#include <csignal>
#include <string>
#include <thread>

using namespace tilescope;

class TestWorkerGpu : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void greetsWithItsDevice();
    void engineGoesAway();
    void ignoresTheTerminalsInterrupt();
    void badRequests();
};

void TestWorkerGpu::initTestCase() {
    Worker w;
    QVERIFY(w.start(0));
    worker::Hello hello;
    QVERIFY2(w.hello(hello), "no hello from the worker");
    if (!hello.ok) {
        QCOMPARE(w.waitExit(30000), 2);
        QSKIP(qPrintable(QString::fromStdString("the worker cannot use device 0: " + hello.error)));
    }
    QVERIFY(worker::writeFrame(w.requests, worker::encodeShutdown()));
    QCOMPARE(w.waitExit(30000), 0);
}

void TestWorkerGpu::greetsWithItsDevice() {
    Worker w;
    QVERIFY(w.start(0));
    worker::Hello hello;
    QVERIFY2(w.hello(hello), "no hello from the worker");
    QVERIFY2(hello.ok, hello.error.c_str());
    QCOMPARE(hello.device.ordinal, 0);
    qInfo("device 0: %s %s, %s, %d SMs, driver %d%s%s", hello.device.name.c_str(), hello.device.arch.c_str(),
          hello.device.uuid.c_str(), hello.device.smCount, hello.device.driverVersion,
          hello.device.cuptiNote.empty() ? "" : "; CUPTI: ", hello.device.cuptiNote.c_str());
    QVERIFY(hello.error.empty());
    QVERIFY(hello.device.uuid.rfind("GPU-", 0) == 0 && hello.device.uuid.size() == 40);
    QVERIFY(hello.device.arch.rfind("sm_", 0) == 0);
    QVERIFY(hello.device.smCount > 0);
    QVERIFY(hello.device.l2Bytes > 0);
    // The memory roof of the regime diagnostic: a device-to-device copy, well past the L2. Any GPU
    // copies faster than 50 GB/s and slower than 20 TB/s.
    qInfo("device 0: copy %.0f GB/s", hello.device.copyGBps);
    QVERIFY(hello.device.copyGBps > 50 && hello.device.copyGBps < 20000);
    QVERIFY(worker::writeFrame(w.requests, worker::encodeShutdown()));
    QCOMPARE(w.waitExit(30000), 0);
}

void TestWorkerGpu::engineGoesAway() {
    Worker w;
    QVERIFY(w.start(0));
    worker::Hello hello;
    QVERIFY2(w.hello(hello), "no hello from the worker");
    QVERIFY2(hello.ok, hello.error.c_str());
    // The engine died: its end of the request pipe closes, and the worker must end quietly.
    w.closeRequests();
    QCOMPARE(w.waitExit(30000), 0);
}

void TestWorkerGpu::ignoresTheTerminalsInterrupt() {
    // Ctrl-C interrupts the terminal's whole process group, the engine's workers included; the
    // engine stops after the results in hand, so its worker must outlive the keystroke (killed by
    // it, the config it was measuring was recorded as crashed).
    Worker w;
    QVERIFY(w.start(0));
    worker::Hello hello;
    QVERIFY2(w.hello(hello), "no hello from the worker");
    QVERIFY2(hello.ok, hello.error.c_str());
    QCOMPARE(::kill(w.pid, SIGINT), 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    QCOMPARE(::waitpid(w.pid, nullptr, WNOHANG), 0);
    QVERIFY(worker::writeFrame(w.requests, worker::encodeShutdown()));
    QCOMPARE(w.waitExit(30000), 0);
    // SIGTERM still ends it.
    Worker t;
    QVERIFY(t.start(0));
    QVERIFY2(t.hello(hello), "no hello from the worker");
    QCOMPARE(::kill(t.pid, SIGTERM), 0);
    QCOMPARE(t.waitExit(30000), 128 + SIGTERM);
}

void TestWorkerGpu::badRequests() {
    {
        // shutdown: exit 0.
        Worker w;
        QVERIFY(w.start(0, {}));
        worker::Hello hello;
        QVERIFY(w.hello(hello) && hello.ok);
        QVERIFY(worker::writeFrame(w.requests, worker::encodeShutdown()));
        QCOMPARE(w.waitExit(30000), 0);
    }
    {
        // The engine goes away: exit 0.
        Worker w;
        QVERIFY(w.start(0, {}));
        worker::Hello hello;
        QVERIFY(w.hello(hello) && hello.ok);
        w.closeRequests();
        QCOMPARE(w.waitExit(30000), 0);
    }
    {
        // A request it does not know: exit 4 with the reason on stderr.
        Worker w;
        QVERIFY(w.start(0, {}));
        worker::Hello hello;
        QVERIFY(w.hello(hello) && hello.ok);
        QVERIFY(worker::writeFrame(w.requests, worker::Frame{R"({"type": "bogus"})", {}}));
        QCOMPARE(w.waitExit(30000), 4);
        QVERIFY2(w.stderrText.find("unknown request 'bogus'") != std::string::npos, w.stderrText.c_str());
    }
    {
        // A frame that ends early: exit 4.
        Worker w;
        QVERIFY(w.start(0, {}));
        worker::Hello hello;
        QVERIFY(w.hello(hello) && hello.ok);
        const char partial[] = {16, 0, 0, 0, 0, 0, 0, 0, '{'};
        QVERIFY(::write(w.requests, partial, sizeof partial) == static_cast<ssize_t>(sizeof partial));
        w.closeRequests();
        QCOMPARE(w.waitExit(30000), 4);
        QVERIFY2(w.stderrText.find("broken request frame") != std::string::npos, w.stderrText.c_str());
    }
    {
        // A malformed measure request: exit 4.
        Worker w;
        QVERIFY(w.start(0, {}));
        worker::Hello hello;
        QVERIFY(w.hello(hello) && hello.ok);
        QVERIFY(worker::writeFrame(w.requests, worker::Frame{R"({"type": "measure", "id": "x"})", {}}));
        QCOMPARE(w.waitExit(30000), 4);
        QVERIFY2(w.stderrText.find("measure") != std::string::npos, w.stderrText.c_str());
    }
}

QTEST_GUILESS_MAIN(TestWorkerGpu)
#include "tst_workergpu.moc"
