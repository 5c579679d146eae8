// tilescope-cli analyze, run as a user runs it: its table and JSON on a kernel that fails to
// compile for some configs, and bad input refused with a message and status 2.

#include "clirun.h"

#include <QFile>
#include <QProcess>
#include <QStringList>
#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

#include <string>

namespace {

const char* const kBrokenProblem = TILESCOPE_SOURCE_DIR "/kernels/broken/broken.json";
const QString kCli = QStringLiteral(TILESCOPE_CLI);

// analyze compiles every config with NVRTC: give it the time a loaded machine needs.
CliRun runAnalyze(const QStringList& args) {
    return runCli(args, kCli, 300000);
}

} // namespace

class TestCliAnalyze : public QObject {
    Q_OBJECT

private slots:
    void cliAnalyze();
    void cliBadInput_data();
    void cliBadInput();
    void linesWithoutNvdisasm();
    void linesBySourceLine();
    void executedNeedsLinesAndAGpu();
};

// --executed runs the configs on this machine's GPU: it needs --lines, and without a GPU it is a
// clear exit 2 (the counts themselves are checked on the GPU, tests/gpu/tst_cudabackend).
void TestCliAnalyze::executedNeedsLinesAndAGpu() {
    const QString problem = QStringLiteral(TILESCOPE_SOURCE_DIR "/tests/data/sass/spill.json");
    const CliRun alone = runAnalyze({QStringLiteral("analyze"), problem, QStringLiteral("--executed")});
    QCOMPARE(alone.status, 2);
    QVERIFY2(alone.err.contains(QStringLiteral("--lines")), qPrintable(alone.err));

    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("TILESCOPE_NVDISASM"), QStringLiteral("/bin/true")); // found; the GPU is what is missing
    p.setProcessEnvironment(env);
    p.start(kCli, {QStringLiteral("analyze"), problem, QStringLiteral("--lines"), QStringLiteral("--executed"),
                   QStringLiteral("--no-cache")});
    QVERIFY(p.waitForFinished(120000));
    const QString err = QString::fromUtf8(p.readAllStandardError());
    if (p.exitCode() == 0)
        QSKIP("a GPU is here: tests/gpu/tst_cudabackend checks the executed counts");
    QCOMPARE(p.exitCode(), 2);
    QVERIFY2(err.contains(QStringLiteral("NVIDIA driver")), qPrintable(err));
    QVERIFY(p.readAllStandardOutput().isEmpty());
}

// --lines needs nvdisasm: without one (TILESCOPE_NVDISASM naming nothing), exit 2 before any
// compile, naming the option and what to set.
void TestCliAnalyze::linesWithoutNvdisasm() {
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("TILESCOPE_NVDISASM"), QStringLiteral("/nonexistent/nvdisasm"));
    p.setProcessEnvironment(env);
    p.start(kCli, {QStringLiteral("analyze"), QStringLiteral(TILESCOPE_SOURCE_DIR "/tests/data/sass/spill.json"),
                   QStringLiteral("--lines"), QStringLiteral("--no-cache")});
    QVERIFY(p.waitForFinished(60000));
    QCOMPARE(p.exitCode(), 2);
    const QString err = QString::fromUtf8(p.readAllStandardError());
    QVERIFY2(err.contains(QStringLiteral("--lines: TILESCOPE_NVDISASM names /nonexistent/nvdisasm")), qPrintable(err));
    QVERIFY(p.readAllStandardOutput().isEmpty());
}

// Where nvdisasm is installed: the spilling fixture's lines, most first, with their text, and the
// same counts in --json (tests/data/sass/spill.sass pins what NVRTC 13.0 and nvdisasm make of it).
void TestCliAnalyze::linesBySourceLine() {
    const CliRun probe =
        runProgram(QStringLiteral("/bin/sh"),
                   {QStringLiteral("-c"), QStringLiteral("command -v nvdisasm || test -x \"$TILESCOPE_NVDISASM\"")});
    if (probe.status != 0)
        QSKIP("nvdisasm is not installed (on PATH or as $TILESCOPE_NVDISASM)");
    const QString problem = QStringLiteral(TILESCOPE_SOURCE_DIR "/tests/data/sass/spill.json");
    const CliRun text =
        runAnalyze({QStringLiteral("analyze"), problem, QStringLiteral("--lines"), QStringLiteral("--no-cache")});
    QVERIFY2(text.status == 0, qPrintable(describe(text)));
    const qsizetype section = text.out.indexOf(QStringLiteral("Local memory by source line"));
    QVERIFY2(section >= 0, qPrintable(text.out));
    const QString lines = text.out.mid(section);
    QVERIFY2(lines.contains(QStringLiteral("98 spill stores and 102 spill loads, 4 local stores and 1 local loads")),
             qPrintable(lines));
    const qsizetype first = lines.indexOf(QStringLiteral("spill.cu:15"));
    QVERIFY2(first > 0 && first < lines.indexOf(QStringLiteral("spill.cu:17")), qPrintable(lines));
    QVERIFY(lines.contains(QStringLiteral("acc[j] = acc[j] * acc[(j + 5) % 48] + in[t * n + j];")));
    const CliRun json =
        runAnalyze({QStringLiteral("analyze"), problem, QStringLiteral("--lines"), QStringLiteral("--json")});
    QVERIFY2(json.status == 0, qPrintable(describe(json)));
    const auto records = nlohmann::json::parse(json.out.toStdString());
    QCOMPARE(records.size(), std::size_t(2));
    for (const auto& r : records) {
        const auto& l = r["lines"];
        QCOMPARE(l["spill_stores"].get<int>(), 98);
        QCOMPARE(l["local_stores"].get<int>(), 4);
        int stores = 0;
        for (const auto& line : l["local_lines"])
            stores += line["spill_stores"].get<int>();
        QCOMPARE(stores, 98);
        QCOMPARE(l["local_lines"][0]["line"].get<int>(), 15);
        QCOMPARE(l["local_lines"][0]["file"].get<std::string>(), std::string("spill.cu"));
    }
}

void TestCliAnalyze::cliAnalyze() {
    QVERIFY2(QFile::exists(kCli), qPrintable(kCli + QStringLiteral(" is missing: the tests build it")));
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString csv = dir.filePath(QStringLiteral("out.csv"));
    const QStringList args = {QStringLiteral("analyze"),
                              QString::fromLatin1(kBrokenProblem),
                              QStringLiteral("--arch"),
                              QStringLiteral("sm_90,sm_80"),
                              QStringLiteral("--sample"),
                              QStringLiteral("6"),
                              QStringLiteral("--seed"),
                              QStringLiteral("3"),
                              QStringLiteral("--cache-dir"),
                              dir.filePath(QStringLiteral("cache")),
                              QStringLiteral("--json"),
                              QStringLiteral("--csv"),
                              csv};
    const CliRun first = runAnalyze(args);
    QVERIFY2(first.status == 0, qPrintable(first.err));
    const nlohmann::json records = nlohmann::json::parse(first.out.toStdString());
    QVERIFY(records.is_array());
    QCOMPARE(records.size(), std::size_t(12));
    std::size_t errors = 0;
    for (const auto& record : records) {
        for (const char* key : {"config", "arch", "registers", "spill_stores", "spill_loads", "stack_frame",
                                "shared_bytes", "occupancy", "limiter"})
            QVERIFY2(record.contains(key), key);
        QVERIFY(record["config"].contains("BLOCK") && record["config"].contains("ITEMS"));
        // UNROLL=3 is the broken variant: those, and only those, do not compile.
        const bool broken = record["config"]["UNROLL"].get<int>() == 3;
        QCOMPARE(QString::fromStdString(record["status"].get<std::string>()),
                 QString::fromLatin1(broken ? "compile_error" : "ok"));
        if (record["status"] == "compile_error") {
            ++errors;
            QVERIFY(record["registers"].is_null());
            QVERIFY(record["log"].get<std::string>().find("deliberate syntax error") != std::string::npos);
        } else {
            QCOMPARE(record["status"].get<std::string>(), std::string("ok"));
            QVERIFY(record["registers"].get<int>() > 0);
            QVERIFY(record["occupancy"].get<double>() > 0);
            QCOMPARE(record["shared_bytes"].get<std::int64_t>(), 4 * record["config"]["BLOCK"].get<std::int64_t>());
        }
    }
    QCOMPARE(errors, std::size_t(6)); // the sample of seed 3 holds three UNROLL=3 configs, each for two archs
    QVERIFY(first.err.contains(QStringLiteral("Summary")));
    QVERIFY2(first.err.contains(QStringLiteral("compiled 12/12")), qPrintable(first.err));

    QFile csvFile(csv);
    QVERIFY(csvFile.open(QIODevice::ReadOnly));
    const QStringList lines = QString::fromUtf8(csvFile.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 13);
    QVERIFY(lines[0].startsWith(QStringLiteral("index,BLOCK,ITEMS,UNROLL,arch,status,registers")));

    // Again: everything from the cache, the same records bar the cached flag; the text table.
    QStringList textArgs = args.mid(0, 10);
    const CliRun second = runAnalyze(textArgs);
    QVERIFY2(second.status == 0, qPrintable(second.err));
    QVERIFY2(second.err.contains(QStringLiteral("12 from the cache")), qPrintable(second.err));
    QVERIFY(second.out.contains(QStringLiteral("occ %")));
    QVERIFY(second.out.contains(QStringLiteral("Summary")));
    QVERIFY2(second.out.contains(QStringLiteral("Compile errors")), qPrintable(second.out));
    QVERIFY2(second.out.contains(QStringLiteral("deliberate syntax error")), qPrintable(second.out));
}

void TestCliAnalyze::cliBadInput_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("inMessage");
    const QString problem = QString::fromLatin1(kBrokenProblem);
    QTest::newRow("unknown arch") << QStringList{QStringLiteral("analyze"), problem, QStringLiteral("--arch"),
                                                 QStringLiteral("sm_91")}
                                  << "sm_91";
    QTest::newRow("arch without a table")
        << QStringList{QStringLiteral("analyze"), problem, QStringLiteral("--arch"), QStringLiteral("sm_88")}
        << "occupancy limits";
    QTest::newRow("shape out of range") << QStringList{QStringLiteral("analyze"), problem, QStringLiteral("--shape"),
                                                       QStringLiteral("4")}
                                        << "shape 4";
    QTest::newRow("missing problem") << QStringList{QStringLiteral("analyze"), QStringLiteral("/no/such/problem.json")}
                                     << "no/such/problem.json";
    QTest::newRow("all and sample") << QStringList{QStringLiteral("analyze"), problem, QStringLiteral("--all"),
                                                   QStringLiteral("--sample"), QStringLiteral("3")}
                                    << "exclude";
    QTest::newRow("cache-dir and no-cache")
        << QStringList{QStringLiteral("analyze"), problem, QStringLiteral("--no-cache"), QStringLiteral("--cache-dir"),
                       QStringLiteral("/tmp")}
        << "exclude";
}

void TestCliAnalyze::cliBadInput() {
    QFETCH(QStringList, args);
    QFETCH(QString, inMessage);
    QVERIFY2(QFile::exists(kCli), qPrintable(kCli + QStringLiteral(" is missing: the tests build it")));
    const CliRun run = runAnalyze(args);
    QCOMPARE(run.status, 2);
    QVERIFY2(run.err.contains(inMessage, Qt::CaseInsensitive), qPrintable(run.err));
    QVERIFY(run.out.isEmpty());
}

QTEST_GUILESS_MAIN(TestCliAnalyze)
#include "tst_cli_analyze.moc"
