// The export use case (core/jobs/export.h), as the CLI's export and the workbench's export dialog
// run it, on a database a real TuningSession wrote by replaying the demo recording (two sessions):
//
// - CSV of every session written whole to the file named, and what was written named;
// - T4 takes the newest session with results (and says which), and reads back as that session;
// - the JSON cache of one session holds its best config, as the store ranks it;
// - sessions handed over (the dialog's) give the same text as those read, and nothing is written
//   without an output;
// - one chosen config as the one entry of a C++ header, and none for a config without a result;
// - bad requests refused with InputError before anything is written: a session not there, a
//   database with no sessions, a file that is none, T4 of two sessions, a folder not there.

#include "jobs/export.h"

#include "base/error.h"
#include "demodatabase.h"
#include "exchange/bestconfigs.h"
#include "exchange/recording.h"
#include "model/configjson.h"

#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <fstream>
#include <sstream>

using namespace tilescope;

namespace {

std::string readFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

std::size_t lineCount(const std::string& text) {
    return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

} // namespace

class TestExport : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    std::string m_db;
    std::vector<SessionData> m_sessions; // as the store holds them, by id

    std::string path(const char* name) const { return m_dir.filePath(QString::fromUtf8(name)).toStdString(); }

    ExportRequest request(ExportFormat format, const char* output = "") const {
        ExportRequest r;
        r.database = m_db;
        r.options.format = format;
        r.output = *output ? path(output) : std::string();
        return r;
    }

    // Runs `r` and checks it is refused with an InputError whose message holds `expected`.
    static void expectRefused(const ExportRequest& r, const std::string& expected) {
        try {
            runExport(r);
        } catch (const InputError& e) {
            QVERIFY2(e.message().find(expected) != std::string::npos, e.what());
            return;
        }
        QFAIL(("not refused; expected: " + expected).c_str());
    }

private slots:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        m_db = path("demo.db");
        test::writeDemoDatabase(m_db);
        const ResultStore store = ResultStore::open(m_db, StoreMode::ReadOnly);
        for (const SessionInfo& s : store.sessions())
            m_sessions.push_back(store.load(s.id));
        std::sort(m_sessions.begin(), m_sessions.end(),
                  [](const SessionData& a, const SessionData& b) { return a.info.id < b.info.id; });
        QCOMPARE(m_sessions.size(), std::size_t(2));
        QVERIFY(m_sessions[0].results.size() > m_sessions[1].results.size());
    }

    void csvOfEverySessionIsWritten() {
        const ExportOutcome outcome = runExport(request(ExportFormat::Csv, "all.csv"));
        QVERIFY(outcome.written);
        QCOMPARE(outcome.written->path, path("all.csv"));
        QCOMPARE(outcome.written->formatName, std::string("csv"));
        QCOMPARE(outcome.written->bytes, outcome.text.size());
        QCOMPARE(outcome.sessions.size(), std::size_t(2));
        const std::string file = readFile(path("all.csv"));
        QCOMPARE(file, outcome.text);
        // A header, then a row per result of both sessions.
        QCOMPARE(lineCount(file), 1 + m_sessions[0].results.size() + m_sessions[1].results.size());
    }

    void t4TakesTheNewestSessionWithResults() {
        std::vector<std::pair<std::int64_t, std::size_t>> picked;
        ExportEvents events;
        events.sessionPicked = [&](std::int64_t id, std::size_t count) { picked.emplace_back(id, count); };
        const ExportOutcome outcome = runExport(request(ExportFormat::T4, "newest.t4.json"), events);
        QCOMPARE(picked.size(), std::size_t(1));
        QCOMPARE(picked.front().first, m_sessions[1].info.id);
        QCOMPARE(picked.front().second, std::size_t(2));
        QCOMPARE(outcome.sessions.size(), std::size_t(1));
        QCOMPARE(outcome.sessions.front().id, m_sessions[1].info.id);

        const std::vector<SessionData> back = readRecording(path("newest.t4.json"));
        QCOMPARE(back.size(), std::size_t(1));
        QCOMPARE(back.front().results.size(), m_sessions[1].results.size());
        QCOMPARE(back.front().info.deviceName, m_sessions[1].info.deviceName);

        // --session picks another, and nothing is said of a choice.
        ExportRequest first = request(ExportFormat::T4, "first.t4.json");
        first.session = m_sessions[0].info.id;
        picked.clear();
        QCOMPARE(runExport(first, events).sessions.front().id, m_sessions[0].info.id);
        QVERIFY(picked.empty());
        QCOMPARE(readRecording(path("first.t4.json")).front().results.size(), m_sessions[0].results.size());
    }

    void jsonHoldsTheSessionsBest() {
        ExportRequest r = request(ExportFormat::BestConfigsJson, "best.json");
        r.session = m_sessions[0].info.id;
        const ExportOutcome outcome = runExport(r);
        const std::vector<BestConfig> best = parseBestConfigsJson(readFile(path("best.json")), "best.json");
        QCOMPARE(best.size(), std::size_t(1));
        const std::optional<ResultRecord> stored =
            ResultStore::open(m_db, StoreMode::ReadOnly).best(m_sessions[0].info.id);
        QVERIFY(stored);
        QCOMPARE(configJson(best.front().config), configJson(stored->config));
        QCOMPARE(best.front().sessionId, m_sessions[0].info.id);
        QVERIFY(best.front().timeMs > 0);
        QCOMPARE(outcome.written->formatName, std::string("json"));
    }

    void sessionsHandedOverGiveTheSameText() {
        ExportRequest fromDb = request(ExportFormat::Triton);
        fromDb.options.topK = 3;
        fromDb.source = "the demo";
        ExportRequest handed = fromDb;
        handed.database.clear();
        handed.sessions = m_sessions;
        const ExportOutcome a = runExport(fromDb);
        const ExportOutcome b = runExport(handed);
        QVERIFY(!a.written && !b.written);
        QVERIFY(!a.text.empty());
        QCOMPARE(b.text, a.text);
        QVERIFY2(a.text.find("triton.Config(") != std::string::npos, a.text.c_str());
        // "-" is standard output for the CLI: the text only.
        ExportRequest dash = fromDb;
        dash.output = "-";
        QVERIFY(!runExport(dash).written);
    }

    void chosenConfigIsTheHeadersOneEntry() {
        const SessionData& session = m_sessions[0];
        const ResultRecord* slow = nullptr; // a correct result that is not the best
        for (const ResultRecord& r : session.results)
            if (r.ok() && (!slow || r.timeMs() > slow->timeMs()))
                slow = &r;
        QVERIFY(slow);
        const std::optional<ExportWritten> written =
            exportChosenConfig(session.info, session.results, configJson(slow->config), path("chosen.h"));
        QVERIFY(written);
        QCOMPARE(written->formatName, std::string("cpp"));
        const std::vector<BestConfig> entries = parseTunedConfigs(readFile(path("chosen.h")), "chosen.h");
        QCOMPARE(entries.size(), std::size_t(1));
        QCOMPARE(configJson(entries.front().config), configJson(slow->config));

        QVERIFY(!exportChosenConfig(session.info, session.results, R"({"nothing":1})", path("none.json")));
        QVERIFY(!QFileInfo::exists(m_dir.filePath(QStringLiteral("none.json"))));
    }

    void badRequestsAreRefused() {
        ExportRequest noSuch = request(ExportFormat::Csv, "never.csv");
        noSuch.session = 99;
        expectRefused(noSuch, "no session 99");

        const std::string empty = path("empty.db");
        ResultStore::open(empty);
        ExportRequest none = request(ExportFormat::Csv, "never.csv");
        none.database = empty;
        expectRefused(none, "holds no sessions to export");

        ExportRequest notResults = request(ExportFormat::Csv, "never.csv");
        notResults.database = TILESCOPE_SOURCE_DIR "/kernels/sgemm/sgemm.cu";
        QVERIFY_THROWS_EXCEPTION(InputError, runExport(notResults));

        ExportRequest twoInT4 = request(ExportFormat::T4, "never.t4.json");
        twoInT4.database.clear();
        twoInT4.sessions = m_sessions;
        QVERIFY_THROWS_EXCEPTION(InputError, runExport(twoInT4));
        QVERIFY(!QFileInfo::exists(m_dir.filePath(QStringLiteral("never.csv"))));
        QVERIFY(!QFileInfo::exists(m_dir.filePath(QStringLiteral("never.t4.json"))));

        ExportRequest noFolder = request(ExportFormat::Csv, "no/such/folder/x.csv");
        expectRefused(noFolder, "does not exist");
        QVERIFY_THROWS_EXCEPTION(InputError, writeExport(path("no/such/folder/y.csv"), "x", ExportFormat::Csv));
    }
};

QTEST_GUILESS_MAIN(TestExport)
#include "tst_export.moc"
