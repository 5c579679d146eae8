// The Pareto front of two objectives against a brute-force front on random point sets (ties,
// duplicates, NaN and both directions included).

#include "analysis/pareto.h"

#include <QtTest>

#include <cmath>
#include <random>
#include <set>

using namespace tilescope;

namespace {

// Brute force: a point is on the front when no other point is at least as good on both
// objectives and better on one.
std::set<std::size_t> bruteForce(const std::vector<std::array<double, 2>>& p, std::array<bool, 2> higher) {
    auto better = [&](std::size_t k, double a, double b) { return higher[k] ? a > b : a < b; };
    auto atLeast = [&](std::size_t k, double a, double b) { return a == b || better(k, a, b); };
    std::set<std::size_t> front;
    for (std::size_t i = 0; i < p.size(); ++i) {
        if (std::isnan(p[i][0]) || std::isnan(p[i][1]))
            continue;
        bool dominated = false;
        for (std::size_t j = 0; j < p.size() && !dominated; ++j) {
            if (j == i || std::isnan(p[j][0]) || std::isnan(p[j][1]))
                continue;
            dominated = atLeast(0, p[j][0], p[i][0]) && atLeast(1, p[j][1], p[i][1]) &&
                        (better(0, p[j][0], p[i][0]) || better(1, p[j][1], p[i][1]));
        }
        if (!dominated)
            front.insert(i);
    }
    return front;
}

} // namespace

class TestPareto : public QObject {
    Q_OBJECT

private slots:
    void handMade() {
        // time (lower) and energy (lower): (1, 9) and (3, 3) and (9, 1) trade; (4, 4) is beaten by (3, 3).
        const std::vector<std::array<double, 2>> p{{4, 4}, {1, 9}, {3, 3}, {9, 1}, {9, 2}, {NAN, 0}};
        QCOMPARE(paretoFront(p), (std::vector<std::size_t>{1, 2, 3}));
        // Time (lower) against throughput (higher): the fastest and the highest-throughput ones.
        const std::vector<std::array<double, 2>> q{{1, 10}, {2, 30}, {3, 20}, {2, 30}};
        QCOMPARE(paretoFront(q, {false, true}), (std::vector<std::size_t>{0, 1, 3}));
        QVERIFY(paretoFront({}).empty());
    }

    void randomSetsMatchBruteForce() {
        std::mt19937_64 rng(20261203);
        for (int trial = 0; trial < 500; ++trial) {
            const std::size_t n = rng() % 60;
            const int range = 1 + static_cast<int>(rng() % 12); // small ranges make ties
            std::vector<std::array<double, 2>> p(n);
            for (auto& point : p) {
                point = {double(rng() % range), double(rng() % range)};
                if (rng() % 25 == 0)
                    point[rng() % 2] = NAN;
            }
            const std::array<bool, 2> higher{rng() % 2 == 0, rng() % 2 == 0};
            const std::vector<std::size_t> front = paretoFront(p, higher);
            QCOMPARE(std::set<std::size_t>(front.begin(), front.end()), bruteForce(p, higher));
            QCOMPARE(std::set<std::size_t>(front.begin(), front.end()).size(), front.size());
        }
    }

    void hypervolumeMatchesASweep() {
        // By hand: two points against (10, 10): (2, 6) and (5, 3) dominate 8*4 + 5*3 = 47.
        QCOMPARE(hypervolume({{2, 6}, {5, 3}}, {10, 10}), 47.0);
        QCOMPARE(hypervolume({{2, 6}, {5, 3}, {6, 7}, {11, 1}}, {10, 10}), 47.0); // dominated and outside add nothing
        QCOMPARE(hypervolume({}, {10, 10}), 0.0);
        // Random sets against an independent sweep over every distinct first coordinate.
        std::mt19937 rng(11);
        std::uniform_int_distribution<int> coordinate(0, 40);
        for (int trial = 0; trial < 200; ++trial) {
            std::vector<std::array<double, 2>> points(1 + trial % 30);
            for (auto& p : points)
                p = {double(coordinate(rng)), double(coordinate(rng))};
            const std::array<double, 2> ref{35, 38};
            std::set<double> xs{ref[0]};
            for (const auto& p : points)
                if (p[0] < ref[0])
                    xs.insert(p[0]);
            double area = 0;
            for (auto it = xs.begin(); std::next(it) != xs.end(); ++it) {
                double low = ref[1];
                for (const auto& p : points)
                    if (p[0] <= *it && p[1] < low)
                        low = p[1];
                area += (*std::next(it) - *it) * (ref[1] - low);
            }
            QCOMPARE(hypervolume(points, ref), area);
        }
    }
};

QTEST_GUILESS_MAIN(TestPareto)
#include "tst_pareto.moc"
