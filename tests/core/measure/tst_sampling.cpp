// The worker's timing rule as arithmetic (Sampler): when the warm-up ends, when sampling stops,
// and the statistics, without a GPU.

#include "measure/cuda/sampling.h"

#include <QtTest>

#include <cmath>
#include <limits>

using namespace tilescope;
using worker::Sampler;
using worker::TimingRule;

namespace {
// Adds `ms` until the sampler says stop (or `limit` samples); the count it stopped at.
int samplesUntilStop(Sampler& sampler, const std::function<double(int)>& ms, int limit = 1000000) {
    for (int i = 0; i < limit; ++i) {
        if (sampler.add(ms(i)))
            return sampler.count();
    }
    return -1;
}
} // namespace

class TestSampling : public QObject {
    Q_OBJECT

private slots:
    void steadyKernelStopsAtTheMinimum() {
        TimingRule rule; // 10..200 samples, 0.5 % deviation, 0.25 s
        Sampler sampler(rule);
        QCOMPARE(samplesUntilStop(sampler, [](int) { return 0.010; }), 10);
    }

    void twoNoisySamplesDoNotStopAtTheMinimum() {
        // With a minimum of two, two samples far apart are not enough: their deviation is counted.
        TimingRule rule;
        rule.minSamples = 2;
        rule.maxSeconds = 1000;
        Sampler noisy(rule);
        QCOMPARE(samplesUntilStop(
                     noisy, [](int i) { return i % 2 ? 0.010 : 0.020; }, 2),
                 -1);
        Sampler steady(rule);
        QCOMPARE(samplesUntilStop(steady, [](int) { return 0.010; }), 2);
    }

    void noisyKernelStopsAtTheMaximum() {
        TimingRule rule;
        rule.maxSeconds = 1000;
        Sampler sampler(rule);
        QCOMPARE(samplesUntilStop(sampler, [](int i) { return i % 2 ? 0.010 : 0.020; }), 200);
    }

    void noiseThatSettlesStopsWhenTheDeviationIsLowEnough() {
        TimingRule rule;
        rule.maxSeconds = 1000;
        rule.targetRelStdev = 0.05;
        // Steady growth of 1 % a sample: stdev/mean is under 5 % at the minimum count.
        Sampler sampler(rule);
        const int stopped = samplesUntilStop(sampler, [](int i) { return 0.010 * (1 + 0.01 * i); });
        QVERIFY2(stopped >= 10 && stopped < 200, std::to_string(stopped).c_str());
        // One outlier, then a steady kernel: the median's interval is tight at the minimum count,
        // although stdev/mean is 9 % there (an outlier moves the mean, not the median).
        Sampler outlier(rule);
        QCOMPARE(samplesUntilStop(outlier, [](int i) { return i == 0 ? 0.013 : 0.010; }), 10);
        QVERIFY(outlier.stats().stdevMs / 0.0103 > 0.05);
    }

    void medianIntervalIgnoresOutliers() {
        // 0.1 % jitter with every seventh sample 50 % slower (a clock dip): stdev/mean stays near
        // 17 %, but the median's interval is tight after a few dozen samples.
        TimingRule rule;
        rule.maxSeconds = 1000;
        Sampler sampler(rule);
        const int stopped =
            samplesUntilStop(sampler, [](int i) { return i % 7 == 3 ? 1.5 : 1.0 + 0.001 * ((i * 37) % 5 - 2); });
        QVERIFY2(stopped >= 10 && stopped <= 40, std::to_string(stopped).c_str());
        const auto [low, high] = sampler.medianInterval();
        QVERIFY(low >= 0.998 && high <= 1.002 && low <= high);
        QVERIFY(sampler.stats().stdevMs > 0.1);
        // The interval's ranks: n = 25 spans ranks 7 to 17 (0-based), the median's 95 % interval.
        Sampler ranks(rule);
        for (int i = 0; i < 25; ++i)
            ranks.add(static_cast<double>(24 - i));
        QCOMPARE(ranks.medianInterval(), (std::pair<double, double>{7.0, 17.0}));
        QCOMPARE(Sampler(rule).medianInterval(), (std::pair<double, double>{0.0, 0.0}));
    }

    void clearlySlowerConfigsStopEarly() {
        TimingRule rule;
        rule.maxSeconds = 1000;
        rule.targetRelStdev = 1e-9; // only the slower rule or the count can stop it (samples never tie)
        rule.slowerThanMs = 1.0;
        // Twice the best: stopped at 5 samples, all above the bound.
        Sampler slow(rule);
        QCOMPARE(samplesUntilStop(slow, [](int i) { return 2.0 + 0.01 * (i % 3); }), 5);
        QVERIFY(slow.raced());
        // Around the bound: sampled fully.
        Sampler close(rule);
        QCOMPARE(samplesUntilStop(close, [](int i) { return i % 2 ? 0.99 : 1.01; }), 200);
        QVERIFY(!close.raced());
        // Just above the bound, 5 % slower than it with 1 % of noise: five samples tell.
        Sampler near(rule);
        QCOMPARE(samplesUntilStop(near, [](int i) { return 1.05 + 0.01 * (i % 3 - 1); }), 5);
        QVERIFY(near.raced());
        // One sample of five below the bound keeps it sampling until its interval clears.
        Sampler lucky(rule);
        const int taken = samplesUntilStop(lucky, [](int i) { return i == 2 ? 0.98 : 1.2; });
        QVERIFY2(taken > 5 && taken < 200, std::to_string(taken).c_str());
        QVERIFY(lucky.raced());
        // Faster than the bound, or no bound: sampled fully.
        Sampler fast(rule);
        QCOMPARE(samplesUntilStop(fast, [](int i) { return 0.5 + 0.001 * ((i * 37) % 101); }), 200);
        rule.slowerThanMs = 0;
        Sampler none(rule);
        QCOMPARE(samplesUntilStop(none, [](int i) { return 2.0 + 0.001 * ((i * 37) % 101); }), 200);
    }

    void timeCapStopsButNotBeforeThreeSamples() {
        TimingRule rule;
        rule.maxSeconds = 0.25;
        {
            Sampler sampler(rule);
            QCOMPARE(samplesUntilStop(sampler, [](int i) { return i % 2 ? 100.0 : 130.0; }), 3);
        }
        {
            Sampler sampler(rule);
            QCOMPARE(samplesUntilStop(sampler, [](int i) { return i % 2 ? 1000.0 : 1300.0; }), 3);
        }
        {
            Sampler sampler(rule); // 40 and 20 ms: 0.24 s after 8 samples, 0.28 s after 9
            QCOMPARE(samplesUntilStop(sampler, [](int i) { return i % 2 ? 20.0 : 40.0; }), 9);
        }
    }

    void insaneRulesAreMadeSane() {
        TimingRule rule;
        rule.minSamples = 0;
        rule.maxSamples = -5;
        rule.targetRelStdev = std::numeric_limits<double>::quiet_NaN();
        rule.maxSeconds = std::numeric_limits<double>::infinity();
        Sampler sampler(rule);
        QCOMPARE(samplesUntilStop(sampler, [](int i) { return 1.0 + i; }), 1); // max = min = 1
        TimingRule huge;
        huge.minSamples = 1 << 30;
        huge.maxSamples = 1 << 30;
        huge.maxSeconds = 1e30;
        Sampler capped(huge);
        QCOMPARE(samplesUntilStop(capped, [](int) { return 1.0; }), Sampler::kSampleCap);
    }

    void statistics() {
        TimingRule rule;
        rule.minSamples = 4;
        rule.maxSamples = 4;
        Sampler sampler(rule);
        for (double ms : {4.0, 1.0, 3.0})
            QVERIFY(!sampler.add(ms));
        QVERIFY(sampler.add(2.0));
        const TimingStats t = sampler.stats();
        QCOMPARE(t.samples, 4);
        QCOMPARE(t.medianMs, 2.5);
        QCOMPARE(t.minMs, 1.0);
        QCOMPARE(t.maxMs, 4.0);
        QVERIFY(std::abs(t.stdevMs - std::sqrt(5.0 / 3.0)) < 1e-12);

        rule.minSamples = 3;
        rule.maxSamples = 3;
        Sampler odd(rule);
        for (double ms : {7.0, 5.0, 9.0})
            odd.add(ms);
        QCOMPARE(odd.stats().medianMs, 7.0);
        QCOMPARE(Sampler(rule).stats().samples, 0);
        QCOMPARE(Sampler(rule).stats().medianMs, 0.0);
    }

    void warmUp() {
        TimingRule rule;
        rule.warmupSeconds = 0.005;
        const Sampler sampler(rule);
        QVERIFY(!sampler.warmedUp(0, 1.0, 10.0)); // at least one launch
        QVERIFY(!sampler.warmedUp(1, 0.001, 0.01));
        QVERIFY(sampler.warmedUp(5, 0.005, 0.01));                                 // kernel time reached
        QVERIFY(sampler.warmedUp(500, 0.0001, 0.005 + Sampler::kWarmupWallSlack)); // launch-bound kernels
        QVERIFY(sampler.warmedUp(Sampler::kMaxWarmupLaunches, 0.0, 0.0));
        TimingRule none;
        none.warmupSeconds = -1;
        QVERIFY(Sampler(none).warmedUp(1, 0.0, 0.0)); // one launch is always made
    }

    // The warm-up's batches: what reaches the warm-up time at the pace so far, growing at most
    // fourfold a step, never past the launch cap; a simulated warm-up of a 40 us kernel ends at
    // the warm-up time in a few synchronisations, where one a launch took 125.
    void warmUpBatches() {
        TimingRule rule;
        rule.warmupSeconds = 0.005;
        const Sampler sampler(rule);
        QCOMPARE(sampler.warmupBatch(1, 40e-6), 4);     // 124 wanted, 4 times the one so far
        QCOMPARE(sampler.warmupBatch(100, 4.96e-3), 1); // one more reaches it
        QCOMPARE(sampler.warmupBatch(10, 1e-3), 40);    // 40 wanted, up to 40 allowed
        QCOMPARE(sampler.warmupBatch(20, 1e-3), 80);    // 80 wanted, up to 80 allowed
        QCOMPARE(sampler.warmupBatch(1, 0.5), 1);       // past the warm-up already: at least one
        QCOMPARE(sampler.warmupBatch(1, 0.0), 4);       // a launch too short to time
        QCOMPARE(sampler.warmupBatch(Sampler::kMaxWarmupLaunches - 3, 0.0), 3); // the cap
        QCOMPARE(sampler.warmupBatch(0, std::nan("")), 4);                      // nonsense in: a batch all the same
        int launches = 1, syncs = 1;
        double seconds = 40e-6;
        while (!sampler.warmedUp(launches, seconds, seconds)) {
            const int batch = sampler.warmupBatch(launches, seconds);
            launches += batch;
            seconds += batch * 40e-6;
            ++syncs;
        }
        QCOMPARE(launches, 125);
        QVERIFY2(syncs <= 6, std::to_string(syncs).c_str());
    }

    // The warm-up is the rule's on a worker's first config or after an idle gap, and short where the
    // worker timed samples a moment ago; never longer than the rule asks.
    void warmUpAfterAGap() {
        const double inf = std::numeric_limits<double>::infinity();
        QCOMPARE(Sampler::warmupFor(0.005, inf), 0.005);                         // the first config
        QCOMPARE(Sampler::warmupFor(0.005, Sampler::kWarmGapSeconds), 0.005);    // idle long enough to cool
        QCOMPARE(Sampler::warmupFor(0.005, 0.02), Sampler::kShortWarmupSeconds); // right after the last one
        QCOMPARE(Sampler::warmupFor(0.0, 0.02), 0.0);                            // the rule asks for less
        QCOMPARE(Sampler::warmupFor(0.005, std::nan("")), 0.005);                // unknown: the rule's
        QCOMPARE(Sampler::warmupFor(std::nan(""), inf), 0.0);                    // nonsense in: none
        // A 40 us kernel right after another config: 13 launches where the rule's warm-up takes 125.
        TimingRule rule;
        rule.warmupSeconds = Sampler::warmupFor(0.005, 0.001);
        const Sampler sampler(rule);
        int launches = 1;
        double seconds = 40e-6;
        while (!sampler.warmedUp(launches, seconds, seconds)) {
            const int batch = sampler.warmupBatch(launches, seconds);
            launches += batch;
            seconds += batch * 40e-6;
        }
        QCOMPARE(launches, 13);
    }

    // Batches of launches a sample: only where nothing is written or restored between launches and
    // the kernel is shorter than kBatchBelowSeconds; enough to span kBatchSeconds, capped.
    void samplesOfBatchedLaunches() {
        QCOMPARE(Sampler::launchesPerSample(2e-6, true), 25); // 50 us of 2 us launches
        QCOMPARE(Sampler::launchesPerSample(9e-6, true), 6);
        QCOMPARE(Sampler::launchesPerSample(Sampler::kBatchBelowSeconds, true), 1);
        QCOMPARE(Sampler::launchesPerSample(1e-3, true), 1);
        QCOMPARE(Sampler::launchesPerSample(2e-6, false), 1); // a flush or a restore between launches
        QCOMPARE(Sampler::launchesPerSample(0.1e-6, true), Sampler::kMaxBatch);
        QCOMPARE(Sampler::launchesPerSample(0.0, true), Sampler::kMaxBatch);
        QCOMPARE(Sampler::launchesPerSample(std::nan(""), true), Sampler::kMaxBatch);
        // The time cap counts every launch of a batch: 25 launches of 2 us a sample reach 1 ms of
        // kernel time in 20 samples, where 20 single launches would be 40 us.
        TimingRule rule;
        rule.minSamples = 3;
        rule.maxSamples = 1000;
        rule.maxSeconds = 1e-3;
        rule.targetRelStdev = 0;
        Sampler batched(rule);
        int samples = 0;
        while (!batched.add(samples % 2 ? 0.002 : 0.0021, 25))
            ++samples;
        QCOMPARE(batched.count(), 20);
        Sampler single(rule);
        for (int i = 0; i < 20; ++i)
            QVERIFY(!single.add(i % 2 ? 0.002 : 0.0021));
    }
};

QTEST_GUILESS_MAIN(TestSampling)
#include "tst_sampling.moc"
