// tilescope-worker, run the way the engine runs it: posix_spawn with the request and reply pipes
// on descriptors 3 and 4. Without an NVIDIA driver (this machine, CI) the worker must still
// start, say why in its hello ("no NVIDIA driver: ...") and exit with status 2; with a driver it
// must greet with its device and shut down cleanly on request or when the engine goes away.
// Its command line is checked too.
// With a GPU, requests it cannot understand end it with status 4 and the reason on stderr.

#include "measure/cuda/argumentdata.h"
#include "measure/cuda/launchplan.h"
#include "measure/cuda/workerprotocol.h"
#include "spec/tuningproblem.h"

#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

using namespace tilescope;

namespace {

// The worker as built, unless $TILESCOPE_WORKER names another (as for the engine): the build's
// absolute paths may not exist where the suite runs (a GPU machine).
const char* workerPath() {
    const char* env = std::getenv("TILESCOPE_WORKER");
    return env && *env ? env : TILESCOPE_WORKER;
}
const char* const kWorker = workerPath();

// A pipe end moved to a descriptor >= 10 (close-on-exec), so that the spawn's dup2 to 3 and 4
// always copies: dup2(3, 3) would keep close-on-exec and the worker would not see it.
int highFd(int fd) {
    const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 10);
    ::close(fd);
    return moved;
}

bool driverPresent() {
    static const bool present = [] {
        void* library = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
        return library != nullptr; // left loaded: the answer cannot change
    }();
    return present;
}

/// A worker started as the engine starts it.
struct Worker {
    pid_t pid = -1;
    int requests = -1; // we write
    int replies = -1;  // we read
    int errors = -1;   // its stderr
    std::string stderrText;

    ~Worker() {
        if (pid > 0) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, nullptr, 0);
        }
        closeRequests();
        for (int fd : {replies, errors}) {
            if (fd >= 0)
                ::close(fd);
        }
    }

    /// Starts the worker on `device`, with `environment` ("NAME=value") added to ours.
    bool start(int device, const std::vector<std::string>& environment = {}) {
        int toWorker[2];
        int fromWorker[2];
        int errPipe[2];
        if (::pipe(toWorker) != 0 || ::pipe(fromWorker) != 0 || ::pipe(errPipe) != 0)
            return false;
        const int childIn = highFd(toWorker[0]);
        const int childOut = highFd(fromWorker[1]);
        const int childErr = highFd(errPipe[1]);
        requests = highFd(toWorker[1]);
        replies = highFd(fromWorker[0]);
        errors = highFd(errPipe[0]);

        std::vector<std::string> args = {kWorker, "--device", std::to_string(device), "--in", "3", "--out", "4"};
        std::vector<char*> argv;
        for (std::string& a : args)
            argv.push_back(a.data());
        argv.push_back(nullptr);
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_adddup2(&actions, childIn, 3);
        posix_spawn_file_actions_adddup2(&actions, childOut, 4);
        posix_spawn_file_actions_adddup2(&actions, childErr, 2);
        std::vector<std::string> env;
        for (char** e = environ; *e; ++e) {
            const std::string entry = *e;
            const std::string name = entry.substr(0, entry.find('='));
            const bool replaced = std::any_of(environment.begin(), environment.end(), [&](const std::string& mine) {
                return mine.substr(0, mine.find('=')) == name;
            });
            if (!replaced)
                env.push_back(entry);
        }
        env.insert(env.end(), environment.begin(), environment.end());
        std::vector<char*> envp;
        for (std::string& e : env)
            envp.push_back(e.data());
        envp.push_back(nullptr);
        const int rc = ::posix_spawn(&pid, kWorker, &actions, nullptr, argv.data(), envp.data());
        posix_spawn_file_actions_destroy(&actions);
        ::close(childIn);
        ::close(childOut);
        ::close(childErr);
        if (rc != 0)
            pid = -1;
        return rc == 0;
    }

    void closeRequests() {
        if (requests >= 0)
            ::close(requests);
        requests = -1;
    }

    /// The exit status, or -1 when it did not exit within `ms` (it is then killed).
    int waitExit(int ms) {
        const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
        int status = 0;
        pid_t got = 0;
        while ((got = ::waitpid(pid, &status, WNOHANG)) == 0 && std::chrono::steady_clock::now() < until)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        if (got == 0) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, nullptr, 0);
            pid = -1;
            return -1;
        }
        pid = -1;
        // Its stderr is complete once it has exited.
        char buffer[4096];
        ssize_t n = 0;
        while ((n = ::read(errors, buffer, sizeof buffer)) > 0)
            stderrText.append(buffer, static_cast<std::size_t>(n));
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }

    std::optional<worker::Frame> reply() {
        worker::Frame frame;
        if (worker::readFrame(replies, frame, 60000) != worker::ReadStatus::Ok)
            return std::nullopt;
        return frame;
    }

    std::optional<worker::Opened> open(const worker::Open& request) {
        if (!worker::writeFrame(requests, worker::encode(request)))
            return std::nullopt;
        const auto frame = reply();
        if (!frame || worker::frameType(*frame) != "opened")
            return std::nullopt;
        return worker::decodeOpened(*frame);
    }

    std::optional<worker::Result> measure(const worker::Measure& request, std::vector<char> cubin) {
        if (!worker::writeFrame(requests, worker::encode(request, std::move(cubin))))
            return std::nullopt;
        const auto frame = reply();
        if (!frame || worker::frameType(*frame) != "result")
            return std::nullopt;
        return worker::decodeResult(*frame);
    }

    bool hello(worker::Hello& out) {
        worker::Frame frame;
        if (worker::readFrame(replies, frame, 60000) != worker::ReadStatus::Ok)
            return false;
        if (worker::frameType(frame) != "hello")
            return false;
        out = worker::decodeHello(frame);
        return true;
    }
};

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
    void missingDriver();
    void unknownDevice();
    void engineGoesAway();
    void badRequests();
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
    QTest::newRow("no pipes") << QStringList{"--device", "0"} << "--in and --out are required";
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

void TestWorker::missingDriver() {
    Worker w;
    QVERIFY(w.start(0));
    worker::Hello hello;
    QVERIFY2(w.hello(hello), "no hello from the worker");
    QCOMPARE(hello.device.ordinal, 0);
    if (driverPresent() && hello.ok) {
        // A machine with a GPU: the worker greets with its device and shuts down on request.
        qInfo("device 0: %s %s, %s, %d SMs, driver %d%s%s", hello.device.name.c_str(), hello.device.arch.c_str(),
              hello.device.uuid.c_str(), hello.device.smCount, hello.device.driverVersion,
              hello.device.cuptiNote.empty() ? "" : "; CUPTI: ", hello.device.cuptiNote.c_str());
        QVERIFY(hello.error.empty());
        QVERIFY(hello.device.uuid.rfind("GPU-", 0) == 0 && hello.device.uuid.size() == 40);
        QVERIFY(hello.device.arch.rfind("sm_", 0) == 0);
        QVERIFY(hello.device.smCount > 0);
        QVERIFY(hello.device.l2Bytes > 0);
        QVERIFY(worker::writeFrame(w.requests, worker::encodeShutdown()));
        QCOMPARE(w.waitExit(30000), 0);
        return;
    }
    QVERIFY(!hello.ok);
    if (!driverPresent())
        QVERIFY2(hello.error.find("no NVIDIA driver") != std::string::npos, hello.error.c_str());
    QCOMPARE(w.waitExit(30000), 2);
    QVERIFY2(w.stderrText.find(hello.error) != std::string::npos, w.stderrText.c_str());
    if (driverPresent())
        QSKIP(qPrintable(
            QString("a driver is present but device 0 cannot be used: %1").arg(QString::fromStdString(hello.error))));
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

void TestWorker::engineGoesAway() {
    Worker w;
    QVERIFY(w.start(0));
    worker::Hello hello;
    QVERIFY2(w.hello(hello), "no hello from the worker");
    if (!hello.ok) {
        QCOMPARE(w.waitExit(30000), 2);
        QSKIP("the worker cannot use device 0 here (no driver or no GPU): nothing more to check");
    }
    // The engine died: its end of the request pipe closes, and the worker must end quietly.
    w.closeRequests();
    QCOMPARE(w.waitExit(30000), 0);
}

void TestWorker::badRequests() {
    // Needs a worker that greets: a machine with a GPU.
    {
        Worker probe;
        QVERIFY(probe.start(0, {}));
        worker::Hello hello;
        QVERIFY(probe.hello(hello));
        if (!hello.ok)
            QSKIP(qPrintable(QString::fromStdString("no usable device: " + hello.error)));
        QVERIFY(worker::writeFrame(probe.requests, worker::encodeShutdown()));
        QCOMPARE(probe.waitExit(30000), 0);
    }
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

QTEST_GUILESS_MAIN(TestWorker)
#include "tst_worker.moc"
