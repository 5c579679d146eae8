// tilescope-cli triton, run as a user runs it: its help and refusals; the autotuner stand-in's
// problem writer and grid tracer under Python's unittest (tests/data/triton-scripts/test_shim.py);
// and a script that autotunes Triton kernels, run to its end without a GPU: Triton's interpreter
// (TRITON_INTERPRET=1) launches the kernels on the CPU with NumPy-backed tensors, and a recording
// (--backend replay:) answers for the configs, so the winner the script goes on with is known.
//
// The Python is $TILESCOPE_PYTHON (a virtual environment with Triton and NumPy), else python3;
// without Triton in it the tests that need it report a skip with the reason (a failure under CI
// when TILESCOPE_PYTHON is set, where it should have Triton).

#include "clirun.h"
#include "testprograms.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QProcessEnvironment>
#include <QRegularExpression>
#include <QTemporaryDir>

#include <QtTest>

#include <nlohmann/json.hpp>

using Json = nlohmann::json;

namespace {

const QString kData = QStringLiteral(TILESCOPE_TEST_DATA "/triton-scripts");

/// Runs `program` with `args` in `dir`, with `env` added to this process's environment.
CliRun runWith(const QString& program, const QStringList& args, const QString& dir,
               const QList<QPair<QString, QString>>& env = {}, int timeoutMs = 180000) {
    QProcess p;
    p.setWorkingDirectory(dir);
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    for (const auto& [k, v] : env)
        environment.insert(k, v);
    p.setProcessEnvironment(environment);
    p.start(program, args);
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished();
        CliRun overran;
        overran.err = QStringLiteral("(overran its deadline of %1 ms)").arg(timeoutMs);
        return overran;
    }
    CliRun r;
    r.status = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    return r;
}

/// The JSON a test script prints after "SUMMARY ".
Json summary(const CliRun& r) {
    const QRegularExpressionMatch m =
        QRegularExpression(QStringLiteral("^SUMMARY (.*)$"), QRegularExpression::MultilineOption).match(r.out);
    return m.hasMatch() ? Json::parse(m.captured(1).toStdString(), nullptr, false) : Json();
}

} // namespace

// In a test function: without a Python that has Triton, a skip with the reason (a failure where
// it is required).
#define REQUIRE_TRITON()                                                                                               \
    do {                                                                                                               \
        if (m_python.isEmpty()) {                                                                                      \
            const QByteArray message_ = m_missing.toUtf8();                                                            \
            if (tritonRequired())                                                                                      \
                QFAIL(message_.constData());                                                                           \
            QSKIP(message_.constData());                                                                               \
        }                                                                                                              \
    } while (false)

class TestCliTriton : public QObject {
    Q_OBJECT

    QString m_python;  // an interpreter with Triton and NumPy
    QString m_missing; // why there is none
    QTemporaryDir m_dir;

    /// Whether the tests that need Triton must fail rather than skip without it: under CI, where
    /// TILESCOPE_PYTHON names the Python that should have it.
    static bool tritonRequired() { return underCi() && qEnvironmentVariableIsSet("TILESCOPE_PYTHON"); }

    /// `tilescope-cli triton ARGS` in the test's folder, the scripts' kernels run by Triton's
    /// interpreter, Tilescope's caches in the folder.
    CliRun triton(const QStringList& args, const QString& db = QStringLiteral("run.db")) {
        return runWith(QStringLiteral(TILESCOPE_CLI),
                       QStringList{"triton", "--python", m_python, "--db", m_dir.filePath(db)} + args, m_dir.path(),
                       {{QStringLiteral("TRITON_INTERPRET"), QStringLiteral("1")},
                        {QStringLiteral("TILESCOPE_CACHE_DIR"), m_dir.filePath(QStringLiteral("cache"))}});
    }

    /// The sessions of a database, as `show --json` lists its newest's results: their count.
    static int sessionCount(const QString& db) {
        const CliRun r = runCli({"show", db});
        const QRegularExpressionMatch m = QRegularExpression(QStringLiteral("Sessions \\(([0-9]+)\\)")).match(r.out);
        return m.hasMatch() ? m.captured(1).toInt() : -1;
    }

private slots:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        QStringList candidates;
        if (const QString env = qEnvironmentVariable("TILESCOPE_PYTHON"); !env.isEmpty())
            candidates << env;
        candidates << QStringLiteral("python3");
        for (const QString& candidate : candidates) {
            if (runProcess(candidate, {"-c", "import triton, numpy"}) == 0) {
                m_python = candidate;
                break;
            }
        }
        if (m_python.isEmpty())
            m_missing = QStringLiteral("no Python with Triton and NumPy (tried %1): the stand-in's tests cannot run "
                                       "(python3 -m venv V && V/bin/pip install triton numpy, then "
                                       "TILESCOPE_PYTHON=V/bin/python)")
                            .arg(candidates.join(QStringLiteral(", ")));
        for (const QString& f : QDir(kData).entryList(QDir::Files))
            QVERIFY(QFile::copy(kData + "/" + f, m_dir.filePath(f)));
    }

    // --help names every option and where the manual says more.
    void help() {
        const CliRun r = runCli({"triton", "--help"});
        QCOMPARE(r.status, 0);
        for (const char* option :
             {"--backend", "--db", "--strategy", "--budget", "--space", "--retune", "--open", "--python", "--tune-arg"})
            QVERIFY2(r.out.contains(QLatin1String(option)), option);
        QVERIFY(r.out.contains("Triton scripts"));
        QVERIFY(r.out.contains("SCRIPT.py [ARGS...]"));
    }

    // What it refuses before running anything: exit status 2 and what is wrong.
    void refusedOptions_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        QTest::newRow("no script") << QStringList{} << "give the Python script to run";
        QTest::newRow("missing script") << QStringList{"nothere.py"} << "nothere.py: no such script";
        QTest::newRow("unknown option") << QStringList{"--bogus", "x.py"} << "--bogus: no such option of triton";
        QTest::newRow("bad backend") << QStringList{"--backend", "gpu9", "autotuned.py"} << "gpu9";
        QTest::newRow("bad strategy") << QStringList{"--strategy", "magic", "autotuned.py"} << "magic";
        QTest::newRow("bad space") << QStringList{"--space", "wide", "autotuned.py"} << "wide";
        QTest::newRow("zero budget") << QStringList{"--budget", "0", "autotuned.py"} << "--budget";
    }
    void refusedOptions() {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        const CliRun r = runWith(QStringLiteral(TILESCOPE_CLI), QStringList{"triton"} + args, m_dir.path());
        QVERIFY2(r.status == 2, qPrintable(describe(r)));
        QVERIFY2(r.err.contains(message), qPrintable(describe(r)));
    }

    // No Python at all: exit status 2, saying how to install it.
    void noPython() {
        const CliRun r =
            runWith(QStringLiteral(TILESCOPE_CLI),
                    {"triton", "--python", m_dir.filePath("no-such-python3"), "autotuned.py"}, m_dir.path());
        QVERIFY2(r.status == 2, qPrintable(describe(r)));
        QVERIFY2(r.err.contains("cannot start") && r.err.contains("pip install triton"), qPrintable(describe(r)));
    }

    // A Python without the triton module (its site-packages left out with -S): exit status 2,
    // saying how to install it and naming the interpreter.
    void noTritonModule() {
        const QString wrapper = m_dir.filePath("python-without-site");
        QFile f(wrapper);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("#!/bin/sh\nexec python3 -S \"$@\"\n");
        f.close();
        QVERIFY(f.setPermissions(f.permissions() | QFileDevice::ExeOwner));
        if (runProcess(QStringLiteral("python3"), {"-S", "-c", "import triton"}) == 0)
            QSKIP("python3 -S imports triton here, so it cannot stand for a Python without it");
        const CliRun r =
            runWith(QStringLiteral(TILESCOPE_CLI), {"triton", "--python", wrapper, "autotuned.py"}, m_dir.path());
        QVERIFY2(r.status == 2, qPrintable(describe(r)));
        QVERIFY2(r.err.contains("has no triton module") && r.err.contains("pip install triton"),
                 qPrintable(describe(r)));
    }

    // The problem writer, the grid tracer, the spaces and the winners store, under unittest; the
    // problems written are read back by this build's `space`.
    void standInUnits() {
        REQUIRE_TRITON();
        const QString shim = QFileInfo(QStringLiteral(TILESCOPE_CLI)).dir().filePath(QStringLiteral("python"));
        const CliRun r = runWith(
            m_python, {"test_shim.py"}, m_dir.path(),
            {{QStringLiteral("PYTHONPATH"), shim}, {QStringLiteral("TILESCOPE_CLI"), QStringLiteral(TILESCOPE_CLI)}});
        QVERIFY2(r.status == 0, qPrintable(describe(r)));
        QVERIFY2(r.err.contains(QRegularExpression(QStringLiteral("Ran [0-9]+ tests"))), qPrintable(describe(r)));
    }

    // A script with an autotuned kernel runs to its end: the problem is written beside the
    // database, the recording's fastest config wins, the script computes with it; one line says
    // so. A second run reuses the winner without a session; --retune measures again.
    void scriptRunsWithTheWinner() {
        REQUIRE_TRITON();
        const QString db = m_dir.filePath("add.db");
        CliRun r = triton({"--backend", "replay:add.t4.json", "autotuned.py"}, QStringLiteral("add.db"));
        QVERIFY2(r.status == 0, qPrintable(describe(r)));
        Json s = summary(r);
        QVERIFY2(s.is_object(), qPrintable(describe(r)));
        QCOMPARE(s["ok"], Json(true));
        QCOMPARE(s["ok_again"], Json(true));
        QCOMPARE(s["best"]["BLOCK"], Json(128));
        QCOMPARE(s["best"]["num_warps"], Json(4));
        QCOMPARE(s["cache"], Json(1));
        QCOMPARE(s["timings"], Json(3));
        QVERIFY2(r.err.contains(QRegularExpression(QStringLiteral(
                     "Tilescope autotuning for function add_kernel, with key as \\(1000, 'torch.float32', "
                     "'torch.float32', 'torch.float32'\\), finished after [0-9.]+s \\(3 configs, session 1 of "))),
                 qPrintable(describe(r)));
        QVERIFY2(r.err.contains("best config selected: BLOCK: 128, num_warps: 4"), qPrintable(describe(r)));
        QCOMPARE(sessionCount(db), 1);

        const QStringList problems = QDir(m_dir.filePath("add.triton")).entryList({"add_kernel-*"}, QDir::Dirs);
        QCOMPARE(problems.size(), 1);
        const QString problem = m_dir.filePath("add.triton/" + problems.front() + "/problem.json");
        const CliRun count = runCli({"space", problem, "--count"});
        QVERIFY2(count.status == 0 && count.out.contains("3 valid"), qPrintable(describe(count)));
        QVERIFY(QFile::exists(m_dir.filePath("add.triton/" + problems.front() + "/autotuned.py")));
        QVERIFY(QFile::exists(m_dir.filePath("add.triton/winners.json")));

        r = triton({"--backend", "replay:add.t4.json", "autotuned.py"}, QStringLiteral("add.db"));
        QVERIFY2(r.status == 0, qPrintable(describe(r)));
        s = summary(r);
        QCOMPARE(s["best"]["BLOCK"], Json(128));
        QCOMPARE(s["ok"], Json(true));
        QVERIFY2(r.err.contains("reused the winner of session 1") && r.err.contains("nothing measured"),
                 qPrintable(describe(r)));
        QCOMPARE(sessionCount(db), 1);

        r = triton({"--backend", "replay:add.t4.json", "--retune", "autotuned.py"}, QStringLiteral("add.db"));
        QVERIFY2(r.status == 0, qPrintable(describe(r)));
        QVERIFY2(r.err.contains("session 2 of"), qPrintable(describe(r)));
        QCOMPARE(sessionCount(db), 2);

        // Another strategy is another question: measured again.
        r = triton({"--backend", "replay:add.t4.json", "--strategy", "random", "--budget", "2", "autotuned.py"},
                   QStringLiteral("add.db"));
        QVERIFY2(r.status == 0, qPrintable(describe(r)));
        QCOMPARE(sessionCount(db), 3);
    }

    // --space expand: the configs' values and their neighbours, every combination, written as value
    // lists; the recording answers for the three it holds (the rest are skipped), so its best wins.
    void expandedSpace() {
        REQUIRE_TRITON();
        const CliRun r = triton({"--backend", "replay:add.t4.json", "--space", "expand", "autotuned.py"},
                                QStringLiteral("expand.db"));
        QVERIFY2(r.status == 0, qPrintable(describe(r)));
        QCOMPARE(summary(r)["best"]["BLOCK"], Json(128));
        QVERIFY2(r.err.contains("(60 configs, session 1 of"), qPrintable(describe(r)));
        const QStringList problems = QDir(m_dir.filePath("expand.triton")).entryList({"add_kernel-*"}, QDir::Dirs);
        QCOMPARE(problems.size(), 1);
        QFile f(m_dir.filePath("expand.triton/" + problems.front() + "/problem.json"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const Json doc = Json::parse(f.readAll().toStdString());
        QVERIFY2(!doc["Tilescope"].contains("Configs"), doc.dump().c_str());
        const Json& parameters = doc["ConfigurationSpace"]["TuningParameters"];
        QCOMPARE(parameters[0]["Name"], Json("BLOCK"));
        QCOMPARE(parameters[0]["Values"], Json({32, 64, 128, 256, 512}));
        QCOMPARE(parameters[1]["Name"], Json("num_warps"));
        QCOMPARE(parameters[1]["Values"], Json({1, 2, 4, 8}));
        QCOMPARE(parameters[2]["Name"], Json("num_stages"));
        QCOMPARE(parameters[2]["Values"], Json({2, 3, 4}));
        QCOMPARE(doc["KernelSpecification"]["GlobalSize"]["X"], Json("(1000 + (BLOCK - 1)) // BLOCK"));
    }

    // On the analysis backend each config is compiled for sm_90 by Triton, nothing is timed, and
    // the config that ranks first by what compiling told (occupancy first) wins; the script goes on
    // with it.
    void analysisBackend() {
        REQUIRE_TRITON();
        const CliRun r = triton({"--backend", "analysis:sm_90", "autotuned.py"}, QStringLiteral("analysis.db"));
        if (r.status == 2 && r.err.contains("tilescope-cli tune failed") && r.err.contains("Triton"))
            QSKIP(qPrintable("this build does not compile Triton kernels: " + r.err.right(400)));
        QVERIFY2(r.status == 0, qPrintable(describe(r)));
        QCOMPARE(summary(r)["best"]["BLOCK"], Json(64));
        QCOMPARE(summary(r)["ok"], Json(true));
        QVERIFY2(r.err.contains("the analysis backend measured no time for add_kernel: the winner is the config "
                                "that ranks first by occupancy"),
                 qPrintable(describe(r)));
        const CliRun show = runCli({"show", m_dir.filePath("analysis.db"), "--json"});
        QCOMPARE(show.status, 0);
        const Json results = Json::parse(show.out.toStdString());
        QCOMPARE(results.size(), std::size_t(3));
        for (const Json& row : results)
            QVERIFY2(row.contains("registers") && row["status"] == "analysed", row.dump().c_str());
        QCOMPARE(results[0]["config"]["BLOCK"], Json(64)); // show's best first is the winner
    }

    // reset_to_zero: the argument is written as zeros, and after tuning Triton's reset leaves it
    // zeroed for the launch, which adds the input to it.
    void resetToZero() {
        REQUIRE_TRITON();
        const CliRun r =
            triton({"--backend", "replay:add.t4.json", "autotuned.py", "reset"}, QStringLiteral("reset.db"));
        QVERIFY2(r.status == 0, qPrintable(describe(r)));
        QCOMPARE(summary(r)["ok"], Json(true));
        const QStringList problems =
            QDir(m_dir.filePath("reset.triton")).entryList({"accumulate_kernel-*"}, QDir::Dirs);
        QCOMPARE(problems.size(), 1);
        QFile f(m_dir.filePath("reset.triton/" + problems.front() + "/problem.json"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const Json doc = Json::parse(f.readAll().toStdString());
        const Json& out = doc["KernelSpecification"]["Arguments"][1];
        QCOMPARE(out["Name"], Json("out_ptr"));
        QCOMPARE(out["FillType"], Json("Constant"));
        QCOMPARE(out["AccessType"], Json("ReadWrite"));
    }

    // What the stand-in cannot honour stops the script with exit status 2 and names it, with
    // the script's line.
    void refusals_data() {
        QTest::addColumn<QString>("which");
        QTest::addColumn<QString>("message");
        QTest::newRow("pre_hook") << "pre_hook"
                                  << "Tilescope cannot run the pre_hook of @triton.autotune of copy_kernel";
        QTest::newRow("post_hook") << "post_hook"
                                   << "Tilescope cannot run the post_hook of @triton.autotune of copy_kernel";
        QTest::newRow("do_bench") << "do_bench"
                                  << "Tilescope cannot use the do_bench of @triton.autotune of copy_kernel";
        QTest::newRow("a config's pre_hook") << "config_pre_hook"
                                             << "Tilescope cannot run the pre_hook of the config BLOCK: 64";
        QTest::newRow("a kernel in a function") << "nested"
                                                << "Tilescope cannot tune inner_kernel (autotuned.py line";
        QTest::newRow("None for a pointer") << "none_argument"
                                            << "Tilescope cannot pass None as the argument 'y_ptr' of add_kernel";
        QTest::newRow("a host-side tensor descriptor")
            << "tensor_descriptor"
            << "Tilescope cannot pass the argument 'x_ptr' of copy_kernel: it is a host-side tensor descriptor";
    }
    void refusals() {
        REQUIRE_TRITON();
        QFETCH(QString, which);
        QFETCH(QString, message);
        const CliRun r = triton({"--backend", "replay:add.t4.json", "autotuned.py", which}, which + ".db");
        QVERIFY2(r.status == 2, qPrintable(describe(r)));
        QVERIFY2(r.err.contains("error: autotuned.py line "), qPrintable(describe(r)));
        QVERIFY2(r.err.contains(message), qPrintable(describe(r)));
        QVERIFY2(!r.out.contains("SUMMARY"), qPrintable(describe(r)));
    }

    // The stand-in outside `tilescope-cli triton` says where it belongs.
    void outsideTheCommand() {
        REQUIRE_TRITON();
        const QString shim = QFileInfo(QStringLiteral(TILESCOPE_CLI)).dir().filePath(QStringLiteral("python"));
        QProcess p;
        p.setWorkingDirectory(m_dir.path());
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.remove(QStringLiteral("TILESCOPE_CLI"));
        env.insert(QStringLiteral("PYTHONPATH"), shim);
        env.insert(QStringLiteral("TRITON_INTERPRET"), QStringLiteral("1"));
        env.insert(QStringLiteral("TILESCOPE_TRITON"), QStringLiteral("{\"db\": \"%1\"}").arg(m_dir.filePath("o.db")));
        p.setProcessEnvironment(env);
        p.start(m_python, {"-m", "tilescope_triton", "autotuned.py"});
        QVERIFY(p.waitForFinished(120000));
        QVERIFY(p.exitCode() != 0);
        const QString err = QString::fromUtf8(p.readAllStandardError());
        QVERIFY2(err.contains("`tilescope-cli triton SCRIPT.py`"), qPrintable(err));
    }
};

QTEST_GUILESS_MAIN(TestCliTriton)
#include "tst_cli_triton.moc"
