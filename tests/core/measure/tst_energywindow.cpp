// Energy per launch from checkpoints of NVML's energy counter (measure/cuda/energywindow.h), with
// numbers: a counter that steps every 20 ms under a known power and launch rate gives that power
// and energy back, its interval covers the truth and narrows with steadier power, and a window
// without launches or steps gives nothing.

#include "measure/cuda/energywindow.h"
#include "measure/metricnames.h"
#include "model/measurement.h"

#include <QtTest>

#include <random>

using namespace tilescope;
using namespace tilescope::worker;

namespace {

// Checkpoints of a board drawing `watts` (plus noise of `noise` W per step) while completing
// `rate` launches a second, its counter stepping every `period` s with whole mJ.
std::vector<EnergyCheckpoint> board(double watts, double noise, double rate, double period, int steps,
                                    unsigned seed = 1) {
    std::mt19937 rng(seed);
    std::normal_distribution<double> jitter(0, noise);
    std::vector<EnergyCheckpoint> out;
    double mJ = 1e9;
    for (int i = 0; i <= steps; ++i) {
        const double t = 0.2 + i * period;
        if (i > 0)
            mJ += std::floor((watts + jitter(rng)) * period * 1000.0);
        out.push_back({t, mJ, static_cast<std::uint64_t>(std::floor(t * rate))});
    }
    return out;
}

} // namespace

class TestEnergyWindow : public QObject {
    Q_OBJECT

private slots:
    void steadyBoard() {
        // 400 W, 10,000 launches a second: 40 mJ a launch.
        const auto e = estimateEnergy(board(400, 0, 10000, 0.02, 60));
        QVERIFY(e);
        QVERIFY(std::abs(e->watts - 400) < 0.5);
        QVERIFY(std::abs(e->joulesPerLaunch - 0.04) < 0.0001);
        QCOMPARE(e->windows, 5);
        QVERIFY(e->joulesLow <= e->joulesPerLaunch && e->joulesPerLaunch <= e->joulesHigh);
        QVERIFY(e->joulesHigh - e->joulesLow < 0.0005);
        QCOMPARE(e->launches, std::uint64_t(12000));
    }

    void noisyBoardIntervalCoversTheTruth() {
        int covered = 0;
        double width = 0;
        for (unsigned seed = 1; seed <= 40; ++seed) {
            const auto e = estimateEnergy(board(300, 60, 5000, 0.02, 60, seed));
            QVERIFY(e);
            covered += (e->wattsLow <= 300 && 300 <= e->wattsHigh) ? 1 : 0;
            width += e->wattsHigh - e->wattsLow;
        }
        QVERIFY2(covered >= 34, qPrintable(QString::number(covered))); // about 95 % of 40
        const auto steady = estimateEnergy(board(300, 5, 5000, 0.02, 60));
        QVERIFY(steady->wattsHigh - steady->wattsLow < width / 40);
    }

    void nothingToEstimate() {
        QVERIFY(!estimateEnergy({}));
        QVERIFY(!estimateEnergy({{0.1, 5, 10}}));
        QVERIFY(!estimateEnergy({{0.1, 5, 10}, {0.2, 9, 10}})); // no launch completed
        QVERIFY(!estimateEnergy({{0.1, 5, 10}, {0.1, 9, 20}})); // no time
        // Two checkpoints: one window, no spread.
        const auto e = estimateEnergy({{0.0, 0, 0}, {1.0, 500000, 1000}});
        QVERIFY(e);
        QCOMPARE(e->joulesPerLaunch, 0.5);
        QCOMPARE(e->watts, 500.0);
        QCOMPARE(e->windows, 1);
    }

    void counterPeriodIsTheMedianStep() {
        QCOMPARE(counterPeriod({}), 0.0);
        QCOMPARE(counterPeriod({1.0}), 0.0);
        QCOMPARE(counterPeriod({0.0, 0.02, 0.04, 0.1, 0.12}), 0.02);
    }

    void energyIsNotACuptiMetric() {
        const std::vector<std::string> asked = {"default", "energy", "dram__bytes_read.sum", "energy-check"};
        const std::vector<std::string> cupti = cuptiMetricNames(asked);
        QVERIFY(std::find(cupti.begin(), cupti.end(), "energy") == cupti.end());
        QVERIFY(std::find(cupti.begin(), cupti.end(), "energy-check") == cupti.end());
        QCOMPARE(cupti.size(), defaultMetricNames().size()); // dram__bytes_read.sum is in the default set
        QVERIFY(wantsEnergy(asked) && wantsEnergyCheck(asked));
        QVERIFY(wantsEnergy({"power"}) && !wantsEnergyCheck({"power"}));
        QVERIFY(!wantsEnergy({"default"}));
        QCOMPARE(metricLabel(kEnergyMetric), std::string("energy J / launch"));
    }
};

QTEST_GUILESS_MAIN(TestEnergyWindow)
#include "tst_energywindow.moc"
