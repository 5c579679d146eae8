// The final round: the leaders measured again in interleaved rounds, their samples pooled into a
// median with a bootstrap interval, and whether the winner held.

#include "analysis/confidence.h"
#include "model/configvalues.h"
#include "tuner/finalround.h"

#include <QtTest>

#include <atomic>
#include <map>

using namespace tilescope;

namespace {

// Answers each config with a fixed time (and a few samples when asked), records the order it
// was asked in, fails a config from a given round on, and cancels after a given round.
class RoundBackend : public Backend {
public:
    std::vector<std::vector<std::uint64_t>> orders;
    std::map<std::uint64_t, double> times;
    std::map<std::uint64_t, std::size_t> failFromRound;
    bool keepsSamples = true;
    std::atomic<bool>* cancelAfterFirst = nullptr;

    BackendInfo open(const TuningProblem&, std::size_t, const ConfigSpace&) override { return {}; }
    void measure(std::span<const MeasureItem> items, const MeasureControl& control, const MeasureSink& sink) override {
        const std::size_t round = orders.size();
        orders.emplace_back();
        for (std::size_t i = 0; i < items.size(); ++i) {
            const std::uint64_t index = items[i].index;
            orders.back().push_back(index);
            Measurement m;
            m.status = ResultStatus::Ok;
            m.benchmarkSeconds = 0.5;
            const double t = times[index];
            m.time.medianMs = t;
            if (keepsSamples && control.keepSamples)
                for (int k = 0; k < control.samplesPerConfig; ++k)
                    m.samplesMs.push_back(t + 0.01 * k);
            if (const auto f = failFromRound.find(index); f != failFromRound.end() && round >= f->second) {
                m.status = ResultStatus::Crashed;
                m.message = "illegal address";
            }
            sink(i, m);
        }
        if (cancelAfterFirst)
            cancelAfterFirst->store(true);
    }
};

std::vector<MeasureItem> itemsOf(std::initializer_list<std::uint64_t> indices) {
    std::vector<MeasureItem> items;
    for (const std::uint64_t index : indices) {
        MeasureItem item;
        item.index = index;
        items.push_back(item);
    }
    return items;
}

ResultRecord okResult(const std::string& value, double ms, std::int64_t id) {
    ResultRecord r;
    r.id = id;
    r.config = ConfigValues{{"X", value}};
    r.measurement.status = ResultStatus::Ok;
    r.measurement.time.medianMs = ms;
    return r;
}

// A remeasured config with the interval [low, high] around `ms`.
Remeasurement remeasured(const std::string& value, double ms, double low, double high, std::int64_t id) {
    Remeasurement x;
    x.result = okResult(value, ms, id);
    x.result.measurement.time.ciLowMs = low;
    x.result.measurement.time.ciHighMs = high;
    x.firstMs = ms;
    x.rounds = 5;
    return x;
}

} // namespace

class TestFinalRound : public QObject {
    Q_OBJECT

private slots:
    // Every round measures each config once, starting one further along each time.
    void roundsRotate() {
        RoundBackend backend;
        backend.times = {{4, 1.0}, {7, 2.0}, {9, 3.0}};
        const std::vector<MeasureItem> items = itemsOf({4, 7, 9});
        MeasureControl control;
        control.keepSamples = true;
        control.samplesPerConfig = 2;
        DeviceStateRange states;
        const std::vector<RoundPool> pools = measureInterleaved(backend, items, control, 4, states);
        const std::vector<std::vector<std::uint64_t>> expected = {{4, 7, 9}, {7, 9, 4}, {9, 4, 7}, {4, 7, 9}};
        QCOMPARE(backend.orders, expected);
        QCOMPARE(pools.size(), std::size_t(3));
        for (const RoundPool& pool : pools) {
            QCOMPARE(pool.rounds, std::size_t(4));
            QCOMPARE(pool.samples.size(), std::size_t(8));
            QCOMPARE(pool.seconds, 2.0);
            QVERIFY(!pool.failed);
            QVERIFY(pool.last);
        }
        QCOMPARE(pools[1].samples.front(), 2.0);
    }

    // A backend that keeps no samples gives each round's median.
    void withoutSamplesEachRoundGivesItsMedian() {
        RoundBackend backend;
        backend.keepsSamples = false;
        backend.times = {{1, 1.5}};
        MeasureControl control;
        DeviceStateRange states;
        const auto pools = measureInterleaved(backend, itemsOf({1}), control, 3, states);
        QCOMPARE(pools.at(0).samples, (std::vector<double>{1.5, 1.5, 1.5}));
    }

    // After a config fails, nothing more of it is pooled.
    void aFailureEndsAConfigsPool() {
        RoundBackend backend;
        backend.times = {{1, 1.0}, {2, 2.0}};
        backend.failFromRound = {{2, 1}};
        MeasureControl control;
        DeviceStateRange states;
        const auto pools = measureInterleaved(backend, itemsOf({1, 2}), control, 3, states);
        QCOMPARE(pools[0].rounds, std::size_t(3));
        QCOMPARE(pools[1].rounds, std::size_t(1));
        QVERIFY(pools[1].failed);
        QCOMPARE(pools[1].failed->status, ResultStatus::Crashed);
        QCOMPARE(pools[1].seconds, 1.0); // the round that failed took its time too
        QCOMPARE(pools[1].samples.size(), std::size_t(1));
    }

    void cancellingStopsTheRounds() {
        RoundBackend backend;
        std::atomic<bool> cancel{false};
        backend.cancelAfterFirst = &cancel;
        backend.times = {{1, 1.0}};
        MeasureControl control;
        control.cancel = &cancel;
        DeviceStateRange states;
        const auto pools = measureInterleaved(backend, itemsOf({1}), control, 5, states);
        QCOMPARE(backend.orders.size(), std::size_t(1));
        QCOMPARE(pools[0].rounds, std::size_t(1));
    }

    void pooledTimingOfSamples() {
        const std::vector<double> samples = {3, 1, 2, 5, 4};
        const TimingStats t = pooledTiming(samples, 11);
        QCOMPARE(t.medianMs, 3.0);
        QCOMPARE(t.minMs, 1.0);
        QCOMPARE(t.maxMs, 5.0);
        QCOMPARE(t.samples, 5);
        QVERIFY(qFuzzyCompare(t.stdevMs, std::sqrt(2.5)));
        QVERIFY(t.ciLowMs <= t.medianMs && t.medianMs <= t.ciHighMs);
        // The same samples and seed give the same interval.
        QCOMPARE(pooledTiming(samples, 11), t);
        QCOMPARE(pooledTiming(std::vector<double>{2.0}, 1).stdevMs, 0.0);
    }

    void aRemeasurementTakesThePooledTiming() {
        RoundPool pool;
        pool.samples = {1.0, 1.1, 0.9};
        pool.rounds = 3;
        pool.seconds = 1.5;
        ResultRecord first = okResult("a", 0.8, 7);
        first.measurement.benchmarkSeconds = 2;
        const auto x = remeasurementOf(first, pool, 1);
        QVERIFY(x);
        QCOMPARE(x->firstMs, 0.8);
        QCOMPARE(x->rounds, std::size_t(3));
        QVERIFY(x->failure.empty());
        QCOMPARE(x->result.id, std::int64_t(7));
        QCOMPARE(x->result.timeMs(), 1.0);
        QCOMPARE(x->result.measurement.time.samples, 3);
        QCOMPARE(x->result.measurement.benchmarkSeconds, 3.5);
    }

    void aFailedRemeasurementKeepsTheResult() {
        RoundPool pool;
        Measurement m;
        m.status = ResultStatus::Crashed;
        m.message = "illegal address";
        pool.failed = m;
        const ResultRecord first = okResult("a", 0.8, 7);
        const auto x = remeasurementOf(first, pool, 1);
        QVERIFY(x);
        QCOMPARE(x->failure, std::string("crashed: illegal address"));
        QCOMPARE(x->result.timeMs(), 0.8);
        // Nothing measured (cancelled): nothing to say.
        QVERIFY(!remeasurementOf(first, RoundPool{}, 1));
    }

    void theWinnerHeld() {
        std::vector<Remeasurement> xs = {remeasured("b", 2.0, 1.95, 2.05, 2), remeasured("a", 1.0, 0.98, 1.02, 1)};
        const std::string note = concludeFinalRound(xs, configKey(xs[1].result.config));
        QCOMPARE(xs[0].result.id, std::int64_t(1)); // best first
        QVERIFY2(note.rfind("the winner held when the best 2 were measured again, interleaved in 5 rounds: 1 ms "
                            "(95 %: 0.98-1.02; the search measured 1 ms)",
                            0) == 0,
                 note.c_str());
        QVERIFY2(note.find("its 95 % interval is apart from the others'") != std::string::npos, note.c_str());
        QVERIFY(xs[0].indistinguishable);
        QVERIFY(!xs[1].indistinguishable);
    }

    void anotherWonAndTiesAreNamed() {
        std::vector<Remeasurement> xs = {remeasured("a", 1.2, 1.1, 1.3, 1), remeasured("b", 1.0, 0.9, 1.15, 2),
                                         remeasured("c", 3.0, 2.9, 3.1, 3)};
        const std::string note = concludeFinalRound(xs, configKey(okResult("a", 0, 0).config));
        QCOMPARE(xs[0].result.id, std::int64_t(2));
        QVERIFY2(note.find("another of the best 3 won: 1 ms") != std::string::npos, note.c_str());
        QVERIFY2(note.find("the first winner's result was a lucky sample") != std::string::npos, note.c_str());
        QVERIFY2(note.find("; 1 of the others cannot be told apart from it") != std::string::npos, note.c_str());
        QVERIFY(xs[0].indistinguishable && xs[1].indistinguishable && !xs[2].indistinguishable);
    }

    void failuresComeLast() {
        Remeasurement failed = remeasured("a", 0.5, 0.4, 0.6, 1);
        failed.failure = "crashed: illegal address";
        std::vector<Remeasurement> xs = {failed, remeasured("b", 1.0, 0.9, 1.1, 2)};
        const std::string note = concludeFinalRound(xs, configKey(failed.result.config));
        QCOMPARE(xs[0].result.id, std::int64_t(2));
        QVERIFY(!xs[1].failure.empty());
        QVERIFY2(note.find("another of the best 2 won") != std::string::npos, note.c_str());
        // One interval only (the failed one has none that counts): nothing to compare with.
        QVERIFY2(note.find("95 % interval") == std::string::npos, note.c_str());
    }

    void whenAllFailedThereIsNoWinner() {
        Remeasurement a = remeasured("a", 0.5, 0.4, 0.6, 1);
        a.failure = "timeout";
        std::vector<Remeasurement> xs = {a};
        QCOMPARE(concludeFinalRound(xs, configKey(a.result.config)),
                 std::string("the best 1 configs measured again all failed (timeout)"));
        std::vector<Remeasurement> none;
        QCOMPARE(concludeFinalRound(none, ""), std::string());
    }
};

QTEST_GUILESS_MAIN(TestFinalRound)
#include "tst_finalround.moc"
