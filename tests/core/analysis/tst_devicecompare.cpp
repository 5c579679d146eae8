// core/analysis's comparison of two recordings of one space (devicecompare.h): matched configs,
// rank agreement, the configs that fail on one device only, and refused mismatches.

#include "analysis/devicecompare.h"
#include "base/error.h"

#include <QtTest>

#include <cmath>
#include <string>
#include <vector>

using namespace tilescope;

class TestDeviceCompare : public QObject {
    Q_OBJECT

private slots:
    void deviceComparison();
};

void TestDeviceCompare::deviceComparison() {
    // Spearman: identical orders 1, reversed -1, ties share ranks, too few values NaN.
    QCOMPARE(spearmanCorrelation({1, 2, 3, 4}, {10, 20, 30, 40}), 1.0);
    QCOMPARE(spearmanCorrelation({1, 2, 3, 4}, {4, 3, 2, 1}), -1.0);
    QVERIFY(std::abs(spearmanCorrelation({1, 2, 3, 4, 5}, {2, 1, 4, 3, 5}) - 0.8) < 1e-12);
    QVERIFY(std::isnan(spearmanCorrelation({1, 2}, {1, 2})));
    QVERIFY(std::isnan(spearmanCorrelation({1, 2, 3}, {5, 5, 5})));

    // Two GPUs: B is twice as slow everywhere except that its order of the two fastest is swapped;
    // B also records a clock parameter fixed to one value, A a parameter B lacks with two values
    // (A's best over it is taken), and A has a config that failed on B.
    auto result = [](int block, int vec, double ms, ResultStatus status = ResultStatus::Ok) {
        ResultRecord r;
        r.config = ConfigValues{};
        r.config["BLOCK"] = block;
        r.config["VEC"] = vec;
        r.measurement.status = status;
        r.measurement.time.medianMs = ms;
        return r;
    };
    auto withUnroll = [&](int block, int unroll, double ms) {
        ResultRecord r = result(block, 1, ms);
        r.config["UNROLL"] = unroll;
        return r;
    };
    CompareSide a;
    a.label = "A GPU";
    a.info.shape = {{"N", 1024}};
    a.results = {withUnroll(64, 1, 1.0),  withUnroll(64, 2, 1.3),  withUnroll(128, 1, 1.1),
                 withUnroll(256, 1, 1.5), withUnroll(512, 1, 2.0), withUnroll(1024, 1, 3.0),
                 withUnroll(64, 4, 9.0),  withUnroll(2048, 1, 0.5)}; // 2048 fails on B
    CompareSide b;
    b.label = "B GPU";
    b.info.shape = {{"N", 1024}};
    for (auto r : {result(64, 1, 2.4), result(128, 1, 2.2), result(256, 1, 3.0), result(512, 1, 4.0),
                   result(1024, 1, 6.0), result(2048, 1, 0, ResultStatus::LaunchError)}) {
        r.config["clock"] = 1080;
        b.results.push_back(r);
    }
    const DeviceComparison c = compareSides(a, b, 2);
    QCOMPARE(c.shared, (std::vector<std::string>{"BLOCK", "VEC"}));
    QCOMPARE(c.leftOut.size(), std::size_t(2));
    QVERIFY2(c.leftOut[0].find("UNROLL (only A; 3 values, its best taken)") == 0, c.leftOut[0].c_str());
    QVERIFY2(c.leftOut[1].find("clock (only B; always 1080)") == 0, c.leftOut[1].c_str());
    QCOMPARE(c.okA, std::size_t(6));
    QCOMPARE(c.okB, std::size_t(5));
    QCOMPARE(c.configs.size(), std::size_t(5));
    QCOMPARE(c.configs.front().config.at("BLOCK").asInt(), 64); // fastest on A first
    QCOMPARE(c.configs.front().timeA, 1.0);                     // UNROLL's best
    QCOMPARE(c.configs.front().rankB, 2.0);
    QVERIFY(std::abs(c.medianRatio - 2.0) < 1e-12);
    QVERIFY(std::abs(c.maxRatio - 2.4) < 1e-12);
    QVERIFY(std::abs(c.minRatio - 2.0) < 1e-12);
    QVERIFY(std::abs(c.spearman - 0.9) < 1e-12);
    QVERIFY(c.aOnB && c.bOnA);
    QCOMPARE(c.aOnB->config.at("BLOCK").asInt(), 64);
    QVERIFY(std::abs(c.aOnB->loss() - (2.4 / 2.2 - 1)) < 1e-12);
    QCOMPARE(c.aOnB->rankThere, 2.0);
    QCOMPARE(c.bOnA->config.at("BLOCK").asInt(), 128);
    QVERIFY(std::abs(c.bOnA->loss() - 0.1) < 1e-12);
    QCOMPARE(c.topK, std::size_t(2));
    QCOMPARE(c.topOverlap, std::size_t(2)); // 64 and 128 are both sides' top two
    QVERIFY(c.sizeNote.empty());
    const std::vector<std::string> lines = comparisonSentences(c);
    QVERIFY(lines.size() >= 5);
    QVERIFY2(lines[0].find("5 configs ran on both (6 ok on A, 5 on B), matched on BLOCK, VEC") == 0, lines[0].c_str());

    // Different problem sizes are said; no shared parameter or no common Ok config is an error.
    CompareSide bigger = b;
    bigger.info.shape = {{"N", 4096}};
    QVERIFY(compareSides(a, bigger).sizeNote.find("different problem sizes") != std::string::npos);
    CompareSide unrelated;
    unrelated.label = "other";
    ResultRecord x;
    x.config = ConfigValues{};
    x.config["TILE"] = 8;
    x.measurement.status = ResultStatus::Ok;
    x.measurement.time.medianMs = 1;
    unrelated.results.push_back(x);
    QVERIFY_THROWS_EXCEPTION(InputError, compareSides(a, unrelated));
    CompareSide failed = b;
    for (ResultRecord& r : failed.results)
        r.measurement.status = ResultStatus::CompileError;
    QVERIFY_THROWS_EXCEPTION(InputError, compareSides(a, failed));
}

QTEST_GUILESS_MAIN(TestDeviceCompare)
#include "tst_devicecompare.moc"
