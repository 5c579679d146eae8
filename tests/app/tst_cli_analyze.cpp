// tilescope-cli analyze, run as a user runs it: its table and JSON on a kernel that fails to
// compile for some configs, and bad input refused with a message and status 2.

#include "clirun.h"

#include <QFile>
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
};

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
