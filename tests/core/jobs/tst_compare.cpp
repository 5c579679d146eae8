// The compare use case (core/jobs/compare.h), as the CLI's compare and the workbench's Compare
// panel run it, on a database a real TuningSession wrote by replaying the demo recording: session
// 1 the whole space, session 2 100 configs drawn at random, both answered by the same recording.
//
// - the two sessions compared: every config correct in session 2 matched, the same time on both
//   sides (ratio 1, rank correlation 1), each winner's loss on the other side, the labels;
// - the CSV written with a row per matched config, as comparisonCsv() gives it;
// - a side handed over (the panel's results on screen) gives the same comparison as one read;
// - which session was taken when none was named is said;
// - bad requests refused with InputError: a session not there, a file that is none, two
//   recordings of different problems.

#include "jobs/compare.h"

#include "base/error.h"
#include "demodatabase.h"

#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

using namespace tilescope;

class TestCompare : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    std::string m_db;
    std::int64_t m_all = 0;  // the session of the whole space
    std::int64_t m_some = 0; // the session of 100 configs
    std::size_t m_someOk = 0;

    std::string path(const char* name) const { return m_dir.filePath(QString::fromUtf8(name)).toStdString(); }

    CompareRequest request() const {
        CompareRequest r;
        r.pathA = m_db;
        r.pathB = m_db;
        r.sessionA = m_all;
        r.sessionB = m_some;
        return r;
    }

private slots:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        m_db = path("demo.db");
        test::writeDemoDatabase(m_db);
        const ResultStore store = ResultStore::open(m_db, StoreMode::ReadOnly);
        const std::vector<SessionInfo> sessions = store.sessions();
        QCOMPARE(sessions.size(), std::size_t(2));
        m_all = std::min(sessions[0].id, sessions[1].id);
        m_some = std::max(sessions[0].id, sessions[1].id);
        const SessionData some = store.load(m_some);
        m_someOk = static_cast<std::size_t>(
            std::count_if(some.results.begin(), some.results.end(), [](const ResultRecord& r) { return r.ok(); }));
        QVERIFY(m_someOk > 10);
    }

    void twoSessionsOfOneRecordingAgree() {
        const CompareOutcome outcome = runCompare(request());
        const DeviceComparison& c = outcome.comparison;
        QCOMPARE(c.configs.size(), m_someOk);
        QCOMPARE(c.okB, m_someOk);
        QVERIFY(c.okA > c.okB);
        QCOMPARE(c.shared.size(), std::size_t(outcome.a->info.parameters.size()));
        for (const ComparedConfig& x : c.configs) {
            QCOMPARE(x.timeA, x.timeB);
            QCOMPARE(x.ratio, 1.0);
        }
        QCOMPARE(c.medianRatio, 1.0);
        QVERIFY2(std::abs(c.spearman - 1.0) < 1e-12, std::to_string(c.spearman).c_str());
        // B's winner is among A's configs, and no faster there than A's best.
        QVERIFY(c.bOnA);
        QVERIFY(c.bOnA->loss() >= 0);
        QVERIFY(c.bOnA->rankThere >= 1);
        QVERIFY(std::is_sorted(c.configs.begin(), c.configs.end(),
                               [](const ComparedConfig& x, const ComparedConfig& y) { return x.timeA < y.timeA; }));

        const std::string device = outcome.a->info.deviceName;
        QVERIFY(!device.empty());
        QCOMPARE(c.labelA, device + " (demo.db, session " + std::to_string(m_all) + ")");
        QCOMPARE(c.labelB, device + " (demo.db, session " + std::to_string(m_some) + ")");
        QVERIFY(outcome.csvWritten.empty());

        CompareRequest unnamed = request();
        unnamed.labelSessions = false;
        QCOMPARE(runCompare(unnamed).comparison.labelA, device + " (demo.db)");
    }

    void csvHasARowPerMatchedConfig() {
        CompareRequest r = request();
        r.csvPath = path("compare.csv");
        const CompareOutcome outcome = runCompare(r);
        QCOMPARE(outcome.csvWritten, r.csvPath);
        std::ifstream in(r.csvPath);
        std::ostringstream text;
        text << in.rdbuf();
        const std::string csv = text.str();
        QCOMPARE(csv, comparisonCsv(outcome.comparison));
        QCOMPARE(static_cast<std::size_t>(std::count(csv.begin(), csv.end(), '\n')),
                 outcome.comparison.configs.size() + 1);
        QVERIFY(csv.find("time_a_ms,time_b_ms,ratio,rank_a,rank_b\n") != std::string::npos);
    }

    void aSideHandedOverComparesAsOneRead() {
        const CompareOutcome read = runCompare(request());
        CompareRequest handed = request();
        handed.pathA.clear();
        handed.a = read.a;
        const CompareOutcome outcome = runCompare(handed);
        QCOMPARE(outcome.a.get(), read.a.get());
        QCOMPARE(outcome.comparison.configs.size(), read.comparison.configs.size());
        QCOMPARE(outcome.comparison.labelA, read.comparison.labelA);
        QCOMPARE(outcome.comparison.spearman, read.comparison.spearman);
    }

    void theSessionTakenIsSaid() {
        std::vector<std::string> notes;
        CompareEvents events;
        events.sessionPicked = [&](const std::string& note) { notes.push_back(note); };
        CompareRequest r = request();
        r.sessionB.reset(); // the newest with results: the 100 configs
        const CompareOutcome outcome = runCompare(r, events);
        QCOMPARE(outcome.b->info.id, m_some);
        QCOMPARE(notes.size(), std::size_t(1));
        QVERIFY2(notes.front().find(std::to_string(m_some)) != std::string::npos, notes.front().c_str());
    }

    void badRequestsAreRefused() {
        CompareRequest noSuch = request();
        noSuch.sessionB = 99;
        QVERIFY_THROWS_EXCEPTION(InputError, runCompare(noSuch));

        CompareRequest notResults = request();
        notResults.pathA = TILESCOPE_SOURCE_DIR "/kernels/sgemm/sgemm.cu";
        QVERIFY_THROWS_EXCEPTION(InputError, runCompare(notResults));

        // Another problem's recording: no parameter in common.
        CompareRequest other = request();
        other.pathB = TILESCOPE_TEST_DATA "/tuning/tiny_ktcache.json";
        other.sessionB.reset();
        other.csvPath = path("never.csv");
        QVERIFY_THROWS_EXCEPTION(InputError, runCompare(other));
        QVERIFY(!QFileInfo::exists(m_dir.filePath(QStringLiteral("never.csv"))));
    }
};

QTEST_GUILESS_MAIN(TestCompare)
#include "tst_compare.moc"
