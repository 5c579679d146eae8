// tilescope-worker, run the way the engine runs it: posix_spawn with the request and reply pipes
// on descriptors 3 and 4. Without a usable device (this machine, CI) the worker must still start,
// say why in its hello ("no NVIDIA driver: ...") and exit with status 2. Its command line is
// checked too. What it does on a device is tests/gpu/tst_workergpu.cpp's (label gpu).

#include "workerprocess.h"

#include <QProcess>
#include <QtTest>

#include <string>

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

QTEST_GUILESS_MAIN(TestWorker)
#include "tst_worker.moc"
