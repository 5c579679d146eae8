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
        Sampler sampler(rule);
        // One outlier, then a steady kernel: stdev/mean falls under 5 % once enough samples dilute it.
        const int stopped = samplesUntilStop(sampler, [](int i) { return i == 0 ? 0.013 : 0.010; });
        QVERIFY2(stopped > 10 && stopped < 200, std::to_string(stopped).c_str());
        const TimingStats t = sampler.stats();
        QVERIFY(t.stdevMs / 0.010 <= 0.05 + 1e-12);
        QVERIFY(t.stdevMs / 0.010 > 0.04); // and not long after it crossed
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
};

QTEST_GUILESS_MAIN(TestSampling)
#include "tst_sampling.moc"
