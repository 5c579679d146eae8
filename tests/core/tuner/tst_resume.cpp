// Resuming a stored session: which session a run continues, where its results' configs are in
// the space, and what the strategy observes of them (scores from the time or the objective).

#include "exchange/configcodec.h"
#include "space/configspace.h"
#include "spec/tuningproblem.h"
#include "store/resultstore.h"
#include "tuner/objective.h"
#include "tuner/resume.h"

#include <QtTest>

using namespace tilescope;

namespace {

const std::string kTiny = TILESCOPE_TEST_DATA "/tuning/tiny.json";

SessionInfo tuning(std::uint64_t seed) {
    SessionInfo info;
    info.kernel = "scale";
    info.problemHash = "abc";
    info.shapeIndex = 0;
    info.backend = "replay:rec.json";
    info.strategy = "random";
    info.seed = seed;
    info.startedAt = "2026-01-02T03:04:05.000Z";
    return info;
}

ResultRecord stored(const ConfigValues& config, std::optional<std::uint64_t> index, ResultStatus status, double ms) {
    ResultRecord r;
    r.config = config;
    r.spaceIndex = index;
    r.measurement.status = status;
    r.measurement.time.medianMs = ms;
    return r;
}

} // namespace

class TestResume : public QObject {
    Q_OBJECT

    TuningProblem m_tiny = TuningProblem::load(kTiny);
    ConfigSpace m_space = ConfigSpace::build(m_tiny, 0);
    ConfigCodec m_codec{m_space};

private slots:
    void theSameTuningIsContinued() {
        ResultStore store = ResultStore::openInMemory();
        const std::int64_t id = store.createSession(tuning(1));
        store.append(id, stored(m_codec.toValues(m_space.at(3)), 3, ResultStatus::Ok, 1.0));
        store.append(id, stored(m_codec.toValues(m_space.at(4)), 4, ResultStatus::Skipped, 0));
        store.flush();
        store.setSessionState(id, SessionState::Cancelled);
        QVERIFY(!resumeSession(store, tuning(2))); // another seed: another tuning

        const std::optional<ResumedSession> resumed = resumeSession(store, tuning(1));
        QVERIFY(resumed);
        QCOMPARE(resumed->id, id);
        QCOMPARE(resumed->startedAt, std::string("2026-01-02T03:04:05.000Z"));
        QCOMPARE(resumed->prior.size(), std::size_t(2));
        QCOMPARE(store.session(id)->state, SessionState::Running);
    }

    void whereAStoredConfigIs() {
        const ConfigValues values = m_codec.toValues(m_space.at(5));
        QCOMPARE(spaceIndexOf(stored(values, 5, ResultStatus::Ok, 1), m_space, m_codec),
                 std::optional<std::uint64_t>(5));
        // An index that no longer holds the config (the space changed): found by its values.
        QCOMPARE(spaceIndexOf(stored(values, 6, ResultStatus::Ok, 1), m_space, m_codec),
                 std::optional<std::uint64_t>(5));
        QCOMPARE(spaceIndexOf(stored(values, m_space.size() + 3, ResultStatus::Ok, 1), m_space, m_codec),
                 std::optional<std::uint64_t>(5));
        QCOMPARE(spaceIndexOf(stored(values, std::nullopt, ResultStatus::Ok, 1), m_space, m_codec),
                 std::optional<std::uint64_t>(5));
        // A config the space does not have.
        ConfigValues gone = values;
        gone["BLOCK"] = 3;
        QVERIFY(!spaceIndexOf(stored(gone, 5, ResultStatus::Ok, 1), m_space, m_codec));
    }

    // One observation per config made done; placeholders and configs no longer in the space none.
    void priorResultsAreObservedOnce() {
        std::vector<ResultRecord> prior = {
            stored(m_codec.toValues(m_space.at(1)), 1, ResultStatus::Ok, 2.0),
            stored(m_codec.toValues(m_space.at(1)), 1, ResultStatus::Ok, 1.5),
            stored(m_codec.toValues(m_space.at(2)), 2, ResultStatus::Skipped, 0),
            stored(m_codec.toValues(m_space.at(3)), 3, ResultStatus::CompileError, 0),
        };
        ConfigValues gone = m_codec.toValues(m_space.at(4));
        gone["BLOCK"] = 3;
        prior.push_back(stored(gone, 4, ResultStatus::Ok, 0.1));
        prior[1].objective = 4.0;
        SessionTally tally;
        const std::vector<Observation> seen = takePrior(prior, m_space, m_codec, tally);
        QCOMPARE(seen.size(), std::size_t(2));
        QCOMPARE(seen[0].index, std::uint64_t(1));
        QCOMPARE(seen[0].score, 2.0);
        QVERIFY(seen[0].prior);
        QCOMPARE(seen[1].index, std::uint64_t(3));
        QCOMPARE(seen[1].status, ResultStatus::CompileError);
        QCOMPARE(tally.progress().counts.total, std::uint64_t(5));
        QCOMPARE(tally.progress().done, std::uint64_t(2));
        QCOMPARE(tally.skipped(), std::size_t(1));
    }

    // Lower is better: the time, or minus the objective when there is one.
    void scores() {
        ResultRecord r = stored(m_codec.toValues(m_space.at(0)), 0, ResultStatus::Ok, 2.5);
        QCOMPARE(observationOf(r, 0, false).score, 2.5);
        r.objective = 40.0;
        const Observation o = observationOf(r, 9, false);
        QCOMPARE(o.score, -40.0);
        QCOMPARE(o.index, std::uint64_t(9));
        QVERIFY(!o.prior);
        QVERIFY(!o.features);
    }
};

QTEST_GUILESS_MAIN(TestResume)
#include "tst_resume.moc"
