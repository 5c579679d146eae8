// tilescope-worker, run the way the engine runs it: posix_spawn with the request and reply pipes
// on descriptors 3 and 4. Without a usable device (this machine, CI) the worker must still start,
// say why in its hello ("no NVIDIA driver: ...") and exit with status 2. Its command line is
// checked too. What it does on a device is tests/gpu/tst_workergpu.cpp's (label gpu).

#include "workerprocess.h"

#include "measure/cuda/workerdepot.h"

#include <QProcess>
#include <QtTest>

#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

using namespace tilescope;

namespace {

struct Run {
    int exitCode = -1;
    QString out;
    QString err;
};

Run runWorker(const QStringList& args) {
    QProcess p;
    p.start(QString::fromUtf8(kWorker), args);
    Run run;
    if (!p.waitForFinished(30000)) {
        p.kill();
        p.waitForFinished();
        return run;
    }
    run.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    run.out = QString::fromUtf8(p.readAllStandardOutput());
    run.err = QString::fromUtf8(p.readAllStandardError());
    return run;
}

} // namespace

class TestWorker : public QObject {
    Q_OBJECT

private slots:
    void helpAndVersion();
    void badArguments_data();
    void badArguments();
    void withoutDevice();
    void unknownDevice();
    void depotHandsOverWarmWorkers();
};

void TestWorker::helpAndVersion() {
    const Run help = runWorker({"--help"});
    QCOMPARE(help.exitCode, 0);
    QVERIFY2(help.out.contains("--device N") && help.out.contains("--in FD") && help.out.contains("Exit status"),
             qPrintable(help.out));
    const Run version = runWorker({"--version"});
    QCOMPARE(version.exitCode, 0);
    QCOMPARE(version.out.trimmed(), QStringLiteral("tilescope-worker " TILESCOPE_VERSION));
}

void TestWorker::badArguments_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("message");
    QTest::newRow("no device") << QStringList{"--in", "0", "--out", "1"} << "--device is required";
    QTest::newRow("no pipes") << QStringList{"--device", "0"} << "--in and --out (or --stdio) are required";
    QTest::newRow("stdio and pipes") << QStringList{"--device", "0", "--stdio", "--in", "0", "--out", "1"}
                                     << "--stdio takes the place of --in and --out";
    QTest::newRow("not a number") << QStringList{"--device", "one", "--in", "0", "--out", "1"}
                                  << "--device: 'one' is not a number 0 or greater";
    QTest::newRow("negative") << QStringList{"--device", "-1", "--in", "0", "--out", "1"}
                              << "--device: '-1' is not a number 0 or greater";
    QTest::newRow("missing value") << QStringList{"--device", "0", "--in"} << "--in needs a value";
    QTest::newRow("unknown option") << QStringList{"--device", "0", "--frobnicate"}
                                    << "unknown argument '--frobnicate'";
    QTest::newRow("closed descriptor") << QStringList{"--device", "0", "--in", "97", "--out", "1"}
                                       << "file descriptor 97 is not open";
}

void TestWorker::badArguments() {
    QFETCH(QStringList, args);
    QFETCH(QString, message);
    const Run run = runWorker(args);
    QCOMPARE(run.exitCode, 1);
    QVERIFY2(run.err.contains(message), qPrintable(run.err));
    QVERIFY2(run.err.contains("Usage: tilescope-worker"), qPrintable(run.err));
    QVERIFY(run.out.isEmpty());
}

void TestWorker::withoutDevice() {
    Worker w;
    QVERIFY(w.start(0));
    worker::Hello hello;
    QVERIFY2(w.hello(hello), "no hello from the worker");
    QCOMPARE(hello.device.ordinal, 0);
    if (hello.ok) {
        QVERIFY(worker::writeFrame(w.requests, worker::encodeShutdown()));
        QCOMPARE(w.waitExit(30000), 0);
        QSKIP("device 0 is usable here: tst_workergpu (label gpu) checks the worker on it");
    }
    if (!driverPresent())
        QVERIFY2(hello.error.find("no NVIDIA driver") != std::string::npos, hello.error.c_str());
    QVERIFY(!hello.error.empty());
    QCOMPARE(w.waitExit(30000), 2);
    QVERIFY2(w.stderrText.find(hello.error) != std::string::npos, w.stderrText.c_str());
}

void TestWorker::unknownDevice() {
    Worker w;
    QVERIFY(w.start(999));
    worker::Hello hello;
    QVERIFY2(w.hello(hello), "no hello from the worker");
    QVERIFY(!hello.ok);
    QCOMPARE(hello.device.ordinal, 999);
    const char* expected = driverPresent() ? "no device 999" : "no NVIDIA driver";
    QVERIFY2(hello.error.find(expected) != std::string::npos, hello.error.c_str());
    QCOMPARE(w.waitExit(30000), 2);
}

namespace {

// Says hello on `w`'s reply pipe, shuts it down when it can measure, and waits for the end of its
// stderr (the process has ended; the depot, its parent, reaps it). The hello's device ordinal.
int helloAndEnd(const WorkerProcess& w) {
    worker::Frame frame;
    if (worker::readFrame(w.out, frame, 60000) != worker::ReadStatus::Ok)
        return -1;
    const worker::Hello hello = worker::decodeHello(frame);
    if (hello.ok)
        worker::writeFrame(w.in, worker::encodeShutdown());
    ::close(w.in);
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    char buffer[4096];
    for (;;) {
        const ssize_t n = ::read(w.err, buffer, sizeof buffer);
        if (n == 0)
            break;
        if (n < 0 && std::chrono::steady_clock::now() > until)
            return -2;
        if (n < 0)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ::close(w.out);
    ::close(w.err);
    return hello.device.ordinal;
}

} // namespace

// The depot of a script's warm workers: a tune adopts the worker started for its device, and the
// depot starts the device's next one once that worker has ended; a device it did not start one
// for gets one on demand; without the depot nothing is adopted.
void TestWorker::depotHandsOverWarmWorkers() {
    std::optional<WorkerDepot> depot(std::in_place, kWorker, std::vector<int>{0});
    const std::string socket = depot->socketPath();
    const std::optional<WorkerProcess> first = adoptWorker(socket, 0);
    QVERIFY(first && first->pid > 0);
    QCOMPARE(depot->adopted(), 1);
    QCOMPARE(helloAndEnd(*first), 0);
    // The next worker starts once the depot has seen the first end (it looks every 100 ms).
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    const std::optional<WorkerProcess> second = adoptWorker(socket, 0);
    QVERIFY(second && second->pid > 0);
    QVERIFY(second->pid != first->pid);
    QCOMPARE(helloAndEnd(*second), 0);
    const std::optional<WorkerProcess> other = adoptWorker(socket, 999);
    QVERIFY(other && other->pid > 0);
    QCOMPARE(helloAndEnd(*other), 999);
    QCOMPARE(depot->adopted(), 3);
    std::this_thread::sleep_for(std::chrono::milliseconds(300)); // a spare for device 0 again, never adopted
    const auto before = std::chrono::steady_clock::now();
    depot.reset();
    QVERIFY(std::chrono::steady_clock::now() - before < std::chrono::seconds(8));
    QVERIFY(!adoptWorker(socket, 0)); // the depot has gone, and its socket with it
    QVERIFY(!adoptWorker("/nonexistent/tilescope-depot", 0));
}

QTEST_GUILESS_MAIN(TestWorker)
#include "tst_worker.moc"
