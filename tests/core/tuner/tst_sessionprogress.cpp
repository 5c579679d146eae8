// The tally of a session's results: counts per status, configs done, the best, placeholders
// that a later result replaces, the prior results of a resumed session, the rate.

#include "tuner/sessionprogress.h"

#include <QtTest>

using namespace tilescope;

namespace {

ResultRecord result(ResultStatus status, double ms = 0, const std::string& message = {}) {
    ResultRecord r;
    r.measurement.status = status;
    r.measurement.time.medianMs = ms;
    r.measurement.message = message;
    r.measurement.compileSeconds = 0.25;
    r.measurement.benchmarkSeconds = 0.5;
    return r;
}

} // namespace

class TestSessionProgress : public QObject {
    Q_OBJECT

private slots:
    void resultsCountAndTheBestIsTheFastest() {
        SessionTally tally;
        QVERIFY(tally.add(result(ResultStatus::Ok, 2.0), 0));
        QVERIFY(!tally.add(result(ResultStatus::Ok, 3.0), 1));
        QVERIFY(!tally.add(result(ResultStatus::CompileError), 2));
        QVERIFY(tally.add(result(ResultStatus::Ok, 1.0), 3));
        const SessionProgress& p = tally.progress();
        QCOMPARE(p.done, std::uint64_t(4));
        QCOMPARE(p.thisRun, std::uint64_t(4));
        QCOMPARE(p.counts.total, std::uint64_t(4));
        QCOMPARE(p.counts.of(ResultStatus::Ok), std::uint64_t(3));
        QCOMPARE(p.counts.of(ResultStatus::CompileError), std::uint64_t(1));
        QVERIFY(p.best);
        QCOMPARE(p.best->timeMs(), 1.0);
        QCOMPARE(p.recordedSeconds, 3.0);
        QCOMPARE(tally.done().size(), std::size_t(4));
    }

    // A skipped config is not done; a later result of it replaces its placeholder in the counts.
    void aPlaceholderIsReplaced() {
        SessionTally tally;
        tally.add(result(ResultStatus::Skipped), 5);
        QCOMPARE(tally.progress().done, std::uint64_t(0));
        QCOMPARE(tally.skipped(), std::size_t(1));
        QCOMPARE(tally.progress().counts.of(ResultStatus::Skipped), std::uint64_t(1));
        tally.add(result(ResultStatus::Ok, 1.0), 5);
        QCOMPARE(tally.progress().done, std::uint64_t(1));
        QCOMPARE(tally.skipped(), std::size_t(0));
        QCOMPARE(tally.progress().counts.of(ResultStatus::Skipped), std::uint64_t(0));
        QCOMPARE(tally.progress().counts.total, std::uint64_t(1));
        QCOMPARE(tally.progress().thisRun, std::uint64_t(2));
    }

    // A resumed session's results: each config done once, observed once; placeholders kept;
    // results of configs the space no longer has counted but never done.
    void priorResults() {
        SessionTally tally;
        QVERIFY(tally.addPrior(result(ResultStatus::Ok, 2.0), 1));
        QVERIFY(!tally.addPrior(result(ResultStatus::Ok, 1.5), 1));
        QVERIFY(!tally.addPrior(result(ResultStatus::Skipped), 2));
        QVERIFY(!tally.addPrior(result(ResultStatus::Ok, 0.5), std::nullopt));
        const SessionProgress& p = tally.progress();
        QCOMPARE(p.done, std::uint64_t(1));
        QCOMPARE(p.thisRun, std::uint64_t(0));
        QCOMPARE(p.counts.total, std::uint64_t(4));
        QCOMPARE(tally.skipped(), std::size_t(1));
        QCOMPARE(p.best->timeMs(), 0.5); // the best stored, whether the space still has it or not
        // This run's result of the skipped config replaces it.
        tally.add(result(ResultStatus::Timeout), 2);
        QCOMPARE(tally.skipped(), std::size_t(0));
        QCOMPARE(tally.progress().done, std::uint64_t(2));
    }

    void implausibleConfigsAreNamedByTheFastest() {
        SessionTally tally;
        QCOMPARE(tally.implausibleNote(), std::string());
        ResultRecord slow = result(ResultStatus::Implausible, 0.02, "below the floor of 0.05 ms");
        slow.config = ConfigValues{{"BLOCK", 64}};
        ResultRecord fast = result(ResultStatus::Implausible, 0.01, "below the floor of 0.04 ms");
        fast.config = ConfigValues{{"BLOCK", 128}};
        tally.addPrior(slow, 0);
        QCOMPARE(tally.implausibleNote(), "1 config ran faster than physics allows and never rank (the fastest, " +
                                              describeConfig(slow.config) + ": below the floor of 0.05 ms)");
        tally.add(fast, 1);
        QCOMPARE(tally.implausibleNote(), "2 configs ran faster than physics allows and never rank (the fastest, " +
                                              describeConfig(fast.config) + ": below the floor of 0.04 ms)");
        QVERIFY(!tally.progress().best); // implausible results never rank
    }

    void rates() {
        SessionTally tally;
        tally.setTotal(10);
        tally.updateRates(0);
        QCOMPARE(tally.progress().rate, 0.0);
        QCOMPARE(tally.progress().etaSeconds, -1.0);
        for (std::uint64_t i = 0; i < 4; ++i)
            tally.add(result(ResultStatus::Ok, 1.0 + static_cast<double>(i)), i);
        tally.updateRates(2);
        QCOMPARE(tally.progress().elapsedSeconds, 2.0);
        QCOMPARE(tally.progress().rate, 2.0);
        QCOMPARE(tally.progress().etaSeconds, 3.0);
    }
};

QTEST_GUILESS_MAIN(TestSessionProgress)
#include "tst_sessionprogress.moc"
