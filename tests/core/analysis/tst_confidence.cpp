// core/analysis's confidence (confidence.h): the bootstrap interval of a median covers the true
// median at close to its level under a noise model of kernel timings, and the set of configs
// that cannot be told apart from the best.

#include "analysis/confidence.h"

#include <QtTest>

#include <cmath>
#include <random>
#include <vector>

using namespace tilescope;

class TestConfidence : public QObject {
    Q_OBJECT

private slots:
    void bootstrapCoversTheMedian();
    void indistinguishableSet();
};

// A noise model of kernel timings: 1 % log-normal jitter, and one sample in 20 slowed by 10 to
// 30 % (a clock dip, another process). The 95 % bootstrap interval of the median of 25 samples
// holds the model's true median (estimated from 2 million draws) at close to the stated rate (the
// percentile bootstrap of a median covers a little under its level at this size: 92.7 % here).
void TestConfidence::bootstrapCoversTheMedian() {
    std::mt19937_64 rng(7);
    std::normal_distribution<double> jitter(0.0, 0.01);
    std::bernoulli_distribution slowed(0.05);
    std::uniform_real_distribution<double> slowBy(1.1, 1.3);
    auto draw = [&] { return 0.2 * std::exp(jitter(rng)) * (slowed(rng) ? slowBy(rng) : 1.0); };
    std::vector<double> many(2'000'000);
    for (double& x : many)
        x = draw();
    const double trueMedian = medianOf(many);
    int covered = 0;
    double width = 0;
    constexpr int kTrials = 600;
    for (int t = 0; t < kTrials; ++t) {
        std::vector<double> samples(25);
        for (double& x : samples)
            x = draw();
        const MedianInterval ci = bootstrapMedian(samples, 0.95, 1000, static_cast<std::uint64_t>(t) + 1);
        QVERIFY(ci.low <= ci.median && ci.median <= ci.high);
        covered += ci.low <= trueMedian && trueMedian <= ci.high;
        width += ci.relativeHalfWidth();
    }
    const double rate = static_cast<double>(covered) / kTrials;
    qInfo("95 %% bootstrap interval of the median of 25 samples: covers the true median in %.1f %% of %d trials, "
          "mean half-width %.2f %%",
          100 * rate, kTrials, 100 * width / kTrials);
    QVERIFY2(rate >= 0.90 && rate <= 0.99, qPrintable(QString::number(rate)));
    // A 50 % interval is narrower and covers less often.
    int coveredHalf = 0;
    for (int t = 0; t < kTrials; ++t) {
        std::vector<double> samples(25);
        for (double& x : samples)
            x = draw();
        const MedianInterval ci = bootstrapMedian(samples, 0.5, 1000, static_cast<std::uint64_t>(t) + 1);
        coveredHalf += ci.low <= trueMedian && trueMedian <= ci.high;
    }
    QVERIFY(coveredHalf < covered);
    // Edge cases: the same seed gives the same interval; one sample, none, NaN left out.
    const std::vector<double> few = {1.0, 1.2, 0.9, 1.1, 1.05};
    const MedianInterval a = bootstrapMedian(few, 0.95, 500, 3);
    const MedianInterval b = bootstrapMedian(few, 0.95, 500, 3);
    QCOMPARE(a.low, b.low);
    QCOMPARE(a.high, b.high);
    QCOMPARE(a.median, 1.05);
    const std::vector<double> one = {2.0, std::nan("")};
    const MedianInterval single = bootstrapMedian(one);
    QCOMPARE(single.samples, std::size_t(1));
    QCOMPARE(single.low, 2.0);
    QCOMPARE(single.high, 2.0);
    QCOMPARE(bootstrapMedian(std::vector<double>{}).samples, std::size_t(0));
    QCOMPARE(medianOf({4.0, 1.0, 3.0, 2.0}), 2.5);
}

void TestConfidence::indistinguishableSet() {
    auto interval = [](double median, double low, double high) {
        MedianInterval m;
        m.median = median;
        m.low = low;
        m.high = high;
        return m;
    };
    // The best (index 2), two that overlap it (0 touches its upper end), one clearly slower.
    const std::vector<MedianInterval> four = {interval(1.05, 1.03, 1.07), interval(1.20, 1.15, 1.25),
                                              interval(1.00, 0.98, 1.03), interval(1.02, 1.00, 1.04)};
    QCOMPARE(indistinguishableFromBest(four), (std::vector<std::size_t>{2, 0, 3}));
    // A tight best alone.
    const std::vector<MedianInterval> apart = {interval(1.0, 0.999, 1.001), interval(1.01, 1.005, 1.015)};
    QCOMPARE(indistinguishableFromBest(apart), (std::vector<std::size_t>{0}));
    // Ties go to the earlier; nothing in, nothing out.
    const std::vector<MedianInterval> tie = {interval(1.0, 0.9, 1.1), interval(1.0, 0.95, 1.05)};
    QCOMPARE(indistinguishableFromBest(tie), (std::vector<std::size_t>{0, 1}));
    QVERIFY(indistinguishableFromBest({}).empty());
    // From samples: two configs 0.2 % apart in 1 % noise cannot be told apart; 5 % apart they can.
    std::mt19937_64 rng(11);
    std::normal_distribution<double> noise(0.0, 0.01);
    auto samplesAt = [&](double ms) {
        std::vector<double> xs(40);
        for (double& x : xs)
            x = ms * (1 + noise(rng));
        return xs;
    };
    const std::vector<MedianInterval> close = {bootstrapMedian(samplesAt(1.0)), bootstrapMedian(samplesAt(1.002))};
    QCOMPARE(indistinguishableFromBest(close).size(), std::size_t(2));
    const std::vector<MedianInterval> far = {bootstrapMedian(samplesAt(1.0)), bootstrapMedian(samplesAt(1.05))};
    QCOMPARE(indistinguishableFromBest(far), (std::vector<std::size_t>{0}));
}

QTEST_GUILESS_MAIN(TestConfidence)
#include "tst_confidence.moc"
