// Shapes as an axis: the shape x config matrix and the dispatch table chosen from it.
//
// - On random matrices (missing cells included), planWithinRegret meets its bound on every shape
//   with the fewest configs, and the lowest worst regret among tables of that size, as brute force
//   over every subset of configs finds them; planWithEntries gives the lowest worst regret of
//   any table of at most K configs.
// - On recorded sessions (the fp32 softmax's three shapes measured on the H200): the matrix, the
//   bound met, the one-config table equal to the best config measured on every shape.
// - The exported C++ header compiles and dispatches shapes between and beyond the tuned ones to
//   the entry of the nearest tuned shape, as nearestShape() does.
// - Recordings that cannot make a table say why.

#include "base/error.h"
#include "exchange/recording.h"
#include "shapes/dispatchtable.h"
#include "testprograms.h"

#include <QTemporaryDir>
#include <QtTest>

#include <fstream>
#include <random>

using namespace tilescope;

namespace {

constexpr double kEps = 1e-9;

SessionData session(const std::string& kernel, std::vector<std::pair<std::string, std::int64_t>> shape,
                    const std::vector<std::pair<int, double>>& timesByConfig) {
    SessionData s;
    s.info.kernel = kernel;
    s.info.shape = std::move(shape);
    for (const auto& [config, ms] : timesByConfig) {
        ResultRecord r;
        r.config = ConfigValues{};
        r.config["TILE"] = config;
        r.measurement.status = ResultStatus::Ok;
        r.measurement.time.medianMs = ms;
        s.results.push_back(r);
    }
    return s;
}

/// A random matrix: `shapes` x `configs`, about a quarter of the cells missing (every shape keeps
/// one), times from 1 to 2 ms with ties.
ShapeConfigMatrix randomMatrix(std::mt19937& rng, std::size_t shapes, std::size_t configs) {
    std::vector<SessionData> sessions;
    std::uniform_int_distribution<int> tenth(0, 10);
    std::bernoulli_distribution missing(0.25);
    for (std::size_t s = 0; s < shapes; ++s) {
        std::vector<std::pair<int, double>> times;
        for (std::size_t c = 0; c < configs; ++c)
            if (!missing(rng) || c == s % configs)
                times.emplace_back(static_cast<int>(c), 1.0 + 0.1 * tenth(rng));
        sessions.push_back(session("k", {{"M", static_cast<std::int64_t>(1) << s}}, times));
    }
    return buildShapeConfigMatrix(sessions, "", "random");
}

struct Brute {
    std::size_t size = 0;
    double worst = 0;
};

double worstOf(const ShapeConfigMatrix& m, std::uint32_t subset) {
    double worst = 0;
    for (std::size_t s = 0; s < m.shapes.size(); ++s) {
        double r = std::numeric_limits<double>::infinity();
        for (std::size_t c = 0; c < m.configs.size(); ++c)
            if ((subset >> c) & 1u)
                if (const auto g = m.regret(s, c))
                    r = std::min(r, *g);
        worst = std::max(worst, r);
    }
    return worst;
}

/// The smallest subset within `bound`, and the lowest worst regret among those of that size.
Brute bruteWithin(const ShapeConfigMatrix& m, double bound) {
    Brute b{m.configs.size() + 1, 0};
    for (std::uint32_t subset = 1; subset < (1u << m.configs.size()); ++subset) {
        const double worst = worstOf(m, subset);
        if (!std::isfinite(worst) || worst > bound + 1e-12)
            continue; // a shape without a measured config, or beyond the bound
        const std::size_t size = static_cast<std::size_t>(__builtin_popcount(subset));
        if (size < b.size || (size == b.size && worst < b.worst))
            b = {size, worst};
    }
    return b;
}

double bruteWithEntries(const ShapeConfigMatrix& m, std::size_t k) {
    double best = std::numeric_limits<double>::infinity();
    for (std::uint32_t subset = 1; subset < (1u << m.configs.size()); ++subset)
        if (static_cast<std::size_t>(__builtin_popcount(subset)) <= k)
            best = std::min(best, worstOf(m, subset));
    return best;
}

void checkTable(const ShapeConfigMatrix& m, const DispatchTable& t) {
    QCOMPARE(t.choice.size(), m.shapes.size());
    QCOMPARE(t.regret.size(), m.shapes.size());
    double worst = 0;
    for (std::size_t s = 0; s < m.shapes.size(); ++s) {
        QVERIFY(t.choice[s] < t.entries.size());
        const auto r = m.regret(s, t.entries[t.choice[s]]);
        QVERIFY(r.has_value());
        QVERIFY(std::fabs(*r - t.regret[s]) < kEps);
        // The chosen entry is the shape's fastest entry.
        for (std::size_t e : t.entries)
            if (const auto other = m.regret(s, e))
                QVERIFY(*other >= *r - kEps);
        worst = std::max(worst, *r);
    }
    QVERIFY(std::fabs(worst - t.worstRegret) < kEps);
}

std::filesystem::path shapesData(const char* name) {
    return std::filesystem::path(TILESCOPE_TEST_DATA) / "shapes" / name;
}

} // namespace

class TestShapes : public QObject {
    Q_OBJECT

private slots:
    void smallestTableAgreesWithBruteForce() {
        std::mt19937 rng(7);
        int tables = 0;
        int beyond = 0;
        for (int trial = 0; trial < 60; ++trial) {
            const std::size_t shapes = 2 + static_cast<std::size_t>(trial % 5);
            const std::size_t configs = 2 + static_cast<std::size_t>(trial % 8);
            const ShapeConfigMatrix m = randomMatrix(rng, shapes, configs);
            for (const double bound : {0.0, 0.05, 0.2, 0.5}) {
                const DispatchTable t = planWithinRegret(m, bound);
                checkTable(m, t);
                QVERIFY(t.proven);
                QVERIFY2(t.worstRegret <= bound + kEps, qPrintable(QString::number(t.worstRegret)));
                const Brute b = bruteWithin(m, bound);
                QCOMPARE(t.entries.size(), b.size);
                QVERIFY2(std::fabs(t.worstRegret - b.worst) < kEps,
                         qPrintable(QStringLiteral("trial %1 bound %2: worst %3, brute force %4")
                                        .arg(trial)
                                        .arg(bound)
                                        .arg(t.worstRegret)
                                        .arg(b.worst)));
                ++tables;
            }
            for (std::size_t k = 1; k <= 3; ++k) {
                const DispatchTable t = planWithEntries(m, k);
                checkTable(m, t);
                const double brute = bruteWithEntries(m, k);
                if (std::isfinite(brute)) {
                    QVERIFY(t.entries.size() <= k);
                    QVERIFY(std::fabs(t.worstRegret - brute) < kEps);
                } else {
                    // No k configs were measured on every shape: the smallest table that was.
                    QCOMPARE(t.entries.size(), bruteWithin(m, std::numeric_limits<double>::infinity()).size);
                    QVERIFY(t.entries.size() > k);
                    ++beyond;
                }
            }
        }
        QCOMPARE(tables, 240);
        QVERIFY(beyond > 0); // the random matrices do hold such cases
    }

    void knownCase() {
        // Config 0 is best on small M, 2 on large M, 1 within 4 % everywhere.
        const std::vector<SessionData> sessions = {
            session("gemm", {{"M", 1}}, {{0, 1.00}, {1, 1.03}, {2, 1.50}}),
            session("gemm", {{"M", 64}}, {{0, 1.00}, {1, 1.04}, {2, 1.20}}),
            session("gemm", {{"M", 4096}}, {{0, 2.00}, {1, 1.02}, {2, 1.00}}),
        };
        const ShapeConfigMatrix m = buildShapeConfigMatrix(sessions, "", "known");
        QCOMPARE(m.shapes.size(), std::size_t(3));
        QCOMPARE(m.configs.size(), std::size_t(3));
        const DispatchTable loose = planWithinRegret(m, 0.05);
        QCOMPARE(loose.entries.size(), std::size_t(1));
        QCOMPARE(m.configs[loose.entries[0]].at("TILE").asInt(), 1);
        QVERIFY(std::fabs(loose.worstRegret - 0.04) < kEps);
        const DispatchTable tight = planWithinRegret(m, 0.01);
        QCOMPARE(tight.entries.size(), std::size_t(2));
        QCOMPARE(tight.worstRegret, 0.0);
        const DispatchTable one = planWithEntries(m, 1);
        QCOMPARE(m.configs[one.entries[0]].at("TILE").asInt(), 1);
        // The same config in two sessions of one shape keeps its lower median.
        std::vector<SessionData> again = sessions;
        again.push_back(session("gemm", {{"M", 4096}}, {{0, 0.5}}));
        QCOMPARE(buildShapeConfigMatrix(again, "gemm", "x").bestMs(2), 0.5);
    }

    void implausibleResultsAreNoEntry() {
        // Config 3 claims a time no kernel reaches on every shape (implausible): no column, no entry.
        std::vector<SessionData> sessions = {
            session("gemm", {{"M", 1}}, {{0, 1.00}, {1, 1.03}, {3, 0.001}}),
            session("gemm", {{"M", 4096}}, {{0, 2.00}, {1, 1.02}, {3, 0.001}}),
        };
        for (SessionData& s : sessions)
            s.results.back().measurement.status = ResultStatus::Implausible;
        const ShapeConfigMatrix m = buildShapeConfigMatrix(sessions, "", "implausible");
        QCOMPARE(m.configs.size(), std::size_t(2));
        for (const ConfigValues& c : m.configs)
            QVERIFY(c.at("TILE").asInt() != 3);
        QCOMPARE(m.bestMs(0), 1.00);
        const DispatchTable t = planWithinRegret(m, 0.05);
        QCOMPARE(m.configs[t.entries[0]].at("TILE").asInt(), 1);
    }

    void recordedSoftmax() {
        std::vector<SessionData> sessions;
        for (const char* name : {"softmax-h200-8192x8192.t4.json.gz", "softmax-h200-32768x1024.t4.json.gz",
                                 "softmax-h200-4096x32768.t4.json.gz"})
            for (SessionData& s : readRecording(shapesData(name)))
                sessions.push_back(std::move(s));
        const ShapeConfigMatrix m = buildShapeConfigMatrix(sessions, "", "softmax");
        QCOMPARE(m.kernel, std::string("softmax"));
        QCOMPARE(m.dimNames, (std::vector<std::string>{"ROWS", "COLS"}));
        QCOMPARE(m.shapes.size(), std::size_t(3));
        QCOMPARE(m.shapeLabel(0), std::string("ROWS=4096 COLS=32768")); // rows in the order of their dims
        QCOMPARE(m.measuredCells(), std::size_t(81 + 118 + 66));
        const DispatchTable t = planWithinRegret(m, 0.03);
        checkTable(m, t);
        QVERIFY(t.worstRegret <= 0.03);
        // One config for all three: the best of the configs measured on every shape.
        double bestWorst = std::numeric_limits<double>::infinity();
        for (std::size_t c = 0; c < m.configs.size(); ++c) {
            double worst = 0;
            for (std::size_t s = 0; s < m.shapes.size(); ++s)
                worst = std::max(worst, m.regret(s, c).value_or(std::numeric_limits<double>::infinity()));
            bestWorst = std::min(bestWorst, worst);
        }
        const DispatchTable one = planWithEntries(m, 1);
        QCOMPARE(one.entries.size(), std::size_t(1));
        QVERIFY(std::isfinite(bestWorst));
        QVERIFY(std::fabs(one.worstRegret - bestWorst) < kEps);
        qInfo("softmax, 3 shapes: %zu configs within 3 %% (worst %.2f %%); one config: worst %.1f %%", t.entries.size(),
              t.worstRegret * 100, one.worstRegret * 100);
    }

    // The H200 shape sets: the bf16 GEMM in nn.Linear's layout at M = 1 to 4096 (N = 14336,
    // K = 4096; Bayesian search, 80 configs a shape, each started from the winners of the shapes
    // before, then the best 3 of every shape measured on every other), and the bf16 GEMV at its
    // four decode shapes (whole space).
    void recordedDecodeToPrefill() {
        const std::vector<SessionData> gemm = readRecording(shapesData("hgemm-bf16-h200-shapes.db"));
        const ShapeConfigMatrix m = buildShapeConfigMatrix(gemm, "", "hgemm");
        QCOMPARE(m.shapes.size(), std::size_t(13));
        QCOMPARE(m.dimNames, (std::vector<std::string>{"M", "N", "K"}));
        QCOMPARE(m.shapes.front(), (std::vector<std::int64_t>{1, 14336, 4096}));
        QCOMPARE(m.shapes.back(), (std::vector<std::int64_t>{4096, 14336, 4096}));
        const DispatchTable t = planWithinRegret(m, 0.03);
        checkTable(m, t);
        QVERIFY(t.worstRegret <= 0.03);
        QVERIFY(t.entries.size() <= 4);
        const std::vector<ShapeRegime> regimes = shapeRegimes(gemm, m);
        for (const ShapeRegime& r : regimes) {
            QVERIFY(r.roofline.bandwidthGBps > 3000); // the worker's copy on the H200: about 4100 GB/s
            QVERIFY(std::fabs(r.roofline.peakTflops - 4096.0 * 132 * 1.98e9 / 1e12) < 1e-6);
            const double f = r.roofline.fraction(r.spread.bestMs).value();
            QVERIFY(f > 0.3 && f < 1.0);
        }
        // Decode is memory-bound, prefill compute-bound; the weights (117 MB) set the time up to M = 64.
        for (std::size_t s = 0; s <= 6; ++s)
            QCOMPARE(regimes[s].roofline.bound(), Roofline::Bound::Memory);
        for (std::size_t s = 9; s < 13; ++s)
            QCOMPARE(regimes[s].roofline.bound(), Roofline::Bound::Compute);
        QVERIFY(!regimes.front().spread.flat); // this GEMM's configs differ at M = 1: tuning pays
        qInfo("hgemm 13 shapes: %zu configs within 3 %% (worst %.2f %%); M = 1: %s", t.entries.size(),
              100 * t.worstRegret, regimes.front().verdict.c_str());

        const std::vector<SessionData> gemv = readRecording(shapesData("gemv-bf16-h200-shapes.db"));
        const ShapeConfigMatrix v = buildShapeConfigMatrix(gemv, "", "gemv");
        QCOMPARE(v.shapes.size(), std::size_t(4));
        QCOMPARE(v.shapeLabel(0), std::string("M=1 K=4096 N=16384"));
        const std::vector<ShapeRegime> decode = shapeRegimes(gemv, v);
        QCOMPARE(decode[0].roofline.bound(), Roofline::Bound::Memory);
        QVERIFY(decode[0].roofline.fraction(decode[0].spread.bestMs).value() > 0.8);
        QVERIFY(decode[0].spread.flat);
        QVERIFY(decode[0].spread.asGood >= 25);
        QVERIFY(QString::fromStdString(decode[0].verdict).contains("tuning does not help here"));
        QVERIFY(!decode[3].spread.flat); // M = 16 on CUDA cores: far from the roof, tiles matter
    }

    void headerDispatchesBetweenShapes() {
        std::vector<SessionData> sessions;
        const std::vector<std::int64_t> ms = {1, 16, 256, 4096};
        for (std::size_t i = 0; i < ms.size(); ++i) {
            std::vector<std::pair<int, double>> times;
            for (int c = 0; c < 4; ++c)
                times.emplace_back(c, c == static_cast<int>(i) ? 1.0 : 1.5 + 0.1 * c);
            sessions.push_back(session("gemv", {{"M", ms[i]}, {"N", 4096}}, times));
        }
        const ShapeConfigMatrix m = buildShapeConfigMatrix(sessions, "", "gemv");
        const DispatchTable t = planWithinRegret(m, 0.0);
        QCOMPARE(t.entries.size(), std::size_t(4));
        QTemporaryDir dir;
        { std::ofstream(dir.filePath("dispatch.h").toStdString()) << writeDispatchHeader(m, t); }
        // Expected answers from nearestShape(): below, between and beyond the tuned shapes.
        std::string main = "#include \"dispatch.h\"\n#include <cstdio>\nint main() {\n"
                           "    using namespace tilescope_dispatch::gemv;\n    int bad = 0;\n";
        int queries = 0;
        for (const std::int64_t m0 : {0LL, 1LL, 2LL, 3LL, 5LL, 15LL, 40LL, 100LL, 255LL, 1000LL, 4096LL, 100000LL}) {
            for (const std::int64_t n : {1024LL, 4096LL, 65536LL}) {
                const std::size_t shape = nearestShape(m, {m0, n});
                const int tile = m.configs[t.entries[t.choice[shape]]].at("TILE").asInt();
                main += "    if (dispatch(" + std::to_string(m0) + ", " + std::to_string(n) +
                        ").TILE != " + std::to_string(tile) + ") { std::puts(\"wrong " + std::to_string(m0) +
                        "\"); ++bad; }\n";
                ++queries;
            }
        }
        main += "    std::printf(\"%d bad\\n\", bad);\n    return bad;\n}\n";
        std::ofstream(dir.filePath("main.cpp").toStdString()) << main;
        QString output;
        QCOMPARE(runProcess(cxxCompiler(),
                            {"-std=c++17", "-Wall", "-Wextra", "-Werror", "-pedantic", "-o", dir.filePath("dispatch"),
                             dir.filePath("main.cpp")},
                            &output),
                 0);
        QCOMPARE(runProcess(dir.filePath("dispatch"), {}, &output), 0);
        QVERIFY2(output.contains("0 bad"), qPrintable(output));
        QCOMPARE(queries, 36);
        // The nearest tuned shape, by the log distance: 3 is nearer 1 than 16; 100 nearer 256.
        QCOMPARE(nearestShape(m, {3, 4096}), std::size_t(0));
        QCOMPARE(nearestShape(m, {100, 4096}), std::size_t(2));
        QCOMPARE(nearestShape(m, {1 << 20, 4096}), std::size_t(3));
    }

    void tritonModuleDispatches() {
        // The Python module's pick() and prune() give every shape the entry nearestShape() gives.
        if (!haveProgram("python3"))
            TILESCOPE_MISSING_PROGRAM("python3", "the Triton dispatch module's check");
        std::vector<SessionData> sessions;
        const std::vector<std::int64_t> ms = {1, 16, 256, 4096};
        for (std::size_t i = 0; i < ms.size(); ++i) {
            std::vector<std::pair<int, double>> times;
            for (int c = 0; c < 4; ++c)
                times.emplace_back(c, c == static_cast<int>(i) ? 1.0 : 1.02 + 0.1 * c);
            sessions.push_back(session("gemv", {{"M", ms[i]}, {"N", 4096}}, times));
        }
        const ShapeConfigMatrix m = buildShapeConfigMatrix(sessions, "", "gemv");
        const DispatchTable t = planWithinRegret(m, 0.05); // config 0 covers M = 16 within 2 %
        QVERIFY(t.entries.size() < m.shapes.size());
        QTemporaryDir dir;
        { std::ofstream(dir.filePath("gemv_dispatch.py").toStdString()) << writeDispatchTriton(m, t); }
        std::string script = "import sys\nsys.path.insert(0, sys.argv[1])\nimport gemv_dispatch as g\n"
                             "assert g.KEY == ['M', 'N']\nbad = 0\n";
        for (const std::int64_t m0 : {1LL, 2LL, 3LL, 5LL, 40LL, 100LL, 300LL, 5000LL, 1LL << 20}) {
            const std::size_t shape = nearestShape(m, {m0, 4096});
            const std::size_t entry = t.choice[shape];
            const int tile = m.configs[t.entries[entry]].at("TILE").asInt();
            script += "e = g.pick(" + std::to_string(m0) + ", 4096)\n";
            script +=
                "bad += e != " + std::to_string(entry) + " or g.ENTRIES[e]['TILE'] != " + std::to_string(tile) + "\n";
            script += "bad += g.prune(['c%d' % i for i in range(len(g.ENTRIES))], {'M': " + std::to_string(m0) +
                      ", 'N': 4096, 'x': 0}) != ['c%d' % e]\n";
        }
        script += "print('%d bad' % bad)\nsys.exit(1 if bad else 0)\n";
        QString output;
        QCOMPARE(runProcess(QStringLiteral("python3"),
                            {QStringLiteral("-c"), QString::fromStdString(script), dir.path()}, &output),
                 0);
        QVERIFY2(output.contains("0 bad"), qPrintable(output));
    }

    void spreadAgainstNoise() {
        // M = 1: eleven configs within 1 % of each other, 1 % noise: flat. M = 4096: the median
        // config takes 50 % longer than the best.
        std::vector<std::pair<int, double>> decode, prefill;
        for (int c = 0; c < 11; ++c) {
            decode.emplace_back(c, 1.0 + 0.001 * c);
            prefill.emplace_back(c, 1.0 + 0.1 * c);
        }
        std::vector<SessionData> sessions = {session("gemv", {{"M", 1}}, decode),
                                             session("gemv", {{"M", 4096}}, prefill)};
        for (SessionData& s : sessions)
            for (ResultRecord& r : s.results)
                r.measurement.time.stdevMs = 0.01 * r.timeMs();
        const ShapeConfigMatrix m = buildShapeConfigMatrix(sessions, "", "gemv");
        const std::vector<ShapeSpread> spreads = shapeSpreads(sessions, m);
        QCOMPARE(spreads.size(), std::size_t(2));
        QVERIFY(spreads[0].flat);
        QCOMPARE(spreads[0].configs, std::size_t(11));
        QCOMPARE(spreads[0].asGood, std::size_t(11));
        QVERIFY(std::fabs(spreads[0].noise - 0.01) < 1e-12);
        QVERIFY(!spreads[1].flat);
        QVERIFY(std::fabs(spreads[1].gainOverMedian - 0.5) < 1e-12);
        QCOMPARE(spreads[1].asGood, std::size_t(1));
        // With less noise the decode shape is no longer flat: 0.04 % of noise leaves the best alone
        // within twice the noise (0.1 % apart); at 0.12 % three of eleven are, a quarter or more.
        for (ResultRecord& r : sessions[0].results)
            r.measurement.time.stdevMs = 0.0004 * r.timeMs();
        QVERIFY(!shapeSpreads(sessions, m)[0].flat);
        QCOMPARE(shapeSpreads(sessions, m)[0].asGood, std::size_t(1));
        for (ResultRecord& r : sessions[0].results)
            r.measurement.time.stdevMs = 0.0012 * r.timeMs();
        QVERIFY(shapeSpreads(sessions, m)[0].flat);
        QCOMPARE(shapeSpreads(sessions, m)[0].asGood, std::size_t(3));
    }

    void peaksPerArch() {
        // H100/H200: 132 SMs at 1.98 GHz give 1070 dense bf16 TFLOP/s and 67 FP32 TFLOP/s.
        QCOMPARE(opsPerClockPerSm("sm_90", "bfloat16").value(), 4096.0);
        QCOMPARE(opsPerClockPerSm("sm_90a", "half").value(), 4096.0);
        QCOMPARE(opsPerClockPerSm("sm_90", "float").value(), 256.0);
        QCOMPARE(opsPerClockPerSm("sm_80", "bfloat16").value(), 2048.0); // 312 TFLOP/s on an A100
        QCOMPARE(opsPerClockPerSm("sm_100", "int8").value(), 16384.0);
        // FP8 tensor cores: twice bf16's rate where they exist (H200: 1979 dense TFLOP/s); Ampere has none.
        QCOMPARE(opsPerClockPerSm("sm_90", "float8").value(), 8192.0);
        QCOMPARE(opsPerClockPerSm("sm_90a", "float8").value(), 2 * opsPerClockPerSm("sm_90", "bfloat16").value());
        QCOMPARE(opsPerClockPerSm("sm_100", "float8").value(), 16384.0);
        QVERIFY(!opsPerClockPerSm("sm_80", "float8"));
        QVERIFY(!opsPerClockPerSm("sm_75", "half"));
        QVERIFY(!opsPerClockPerSm("sm_90", "double"));
        QVERIFY(!opsPerClockPerSm("gfx942", "half"));
    }

    // A GEMM problem with a Roofline, tuned on a device whose provenance records 4000 GB/s and
    // 132 SMs at 1.98 GHz: at M = 1 the weights dominate (memory-bound), at M = 4096 the math.
    void regimeFromRooflineAndSpread() {
        const std::string problem = R"json({
            "ConfigurationSpace": {"TuningParameters": [{"Name": "TILE", "Type": "int", "Values": "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"}]},
            "KernelSpecification": {"Language": "CUDA", "KernelName": "gemm", "KernelFile": "gemm.cu",
                                    "GlobalSize": {"X": "N"}, "LocalSize": {"X": 128}},
            "Tilescope": {"Shapes": [{"M": 1, "N": 4096, "K": 4096}, {"M": 4096, "N": 4096, "K": 4096}],
                          "Objective": {"Name": "TFLOP/s", "Count": "2 * M * N * K", "Scale": 1e12},
                          "Roofline": {"Bytes": "2 * (M * K + N * K + M * N)", "Flops": "2 * M * N * K",
                                       "Compute": "bfloat16"}}})json";
        const std::string provenance =
            R"json({"devices": [{"arch": "sm_90", "sm_count": 132, "sm_clock_khz": 1980000, "copy_gbps": 4000}]})json";
        // M = 1 moves 33.6 MB: 8.4 us at 4000 GB/s. Eleven configs within 1 % of 0.0105 ms, 1 % noise.
        // M = 4096: 137 GFLOP is 128 us at 1070 TFLOP/s; the best takes 0.2 ms, the median 0.3 ms.
        std::vector<std::pair<int, double>> decode, prefill;
        for (int c = 0; c < 11; ++c) {
            decode.emplace_back(c, 0.0105 * (1.0 + 0.001 * c));
            prefill.emplace_back(c, 0.2 * (1.0 + 0.1 * c));
        }
        std::vector<SessionData> sessions = {session("gemm", {{"M", 1}, {"N", 4096}, {"K", 4096}}, decode),
                                             session("gemm", {{"M", 4096}, {"N", 4096}, {"K", 4096}}, prefill)};
        for (std::size_t i = 0; i < sessions.size(); ++i) {
            sessions[i].info.problemJson = problem;
            sessions[i].info.shapeIndex = static_cast<std::int64_t>(i);
            sessions[i].info.provenanceJson = provenance;
            sessions[i].info.parameters = {"TILE"};
            for (ResultRecord& r : sessions[i].results)
                r.measurement.time.stdevMs = 0.01 * r.timeMs();
        }
        const ShapeConfigMatrix m = buildShapeConfigMatrix(sessions, "", "gemm");
        const std::vector<ShapeRegime> regimes = shapeRegimes(sessions, m);
        QCOMPARE(regimes.size(), std::size_t(2));
        const Roofline& decodeRoof = regimes[0].roofline;
        QCOMPARE(decodeRoof.bytes, 2.0 * (4096 + 4096.0 * 4096 + 4096));
        QCOMPARE(decodeRoof.flops, 2.0 * 4096 * 4096);
        QCOMPARE(decodeRoof.bandwidthGBps, 4000.0);
        QVERIFY(std::fabs(decodeRoof.peakTflops - 4096.0 * 132 * 1.98e9 / 1e12) < 1e-9);
        QCOMPARE(decodeRoof.bound(), Roofline::Bound::Memory);
        QVERIFY(std::fabs(*decodeRoof.fraction(0.0105) - decodeRoof.bytes / 4e12 * 1e3 / 0.0105) < 1e-12);
        QVERIFY(regimes[0].spread.flat);
        const QString decodeVerdict = QString::fromStdString(regimes[0].verdict);
        QVERIFY2(decodeVerdict.startsWith("memory-bound: the best runs at 80 % of the copy bandwidth (4000 GB/s)"),
                 qPrintable(decodeVerdict));
        QVERIFY2(decodeVerdict.contains("tuning does not help here, any of these 11 configs is as good"),
                 qPrintable(decodeVerdict));

        QCOMPARE(regimes[1].roofline.bound(), Roofline::Bound::Compute);
        QVERIFY(!regimes[1].spread.flat);
        const QString prefillVerdict = QString::fromStdString(regimes[1].verdict);
        QVERIFY2(prefillVerdict.startsWith("compute-bound: the best runs at 64 % of the bfloat16 peak (1071 TFLOP/s)"),
                 qPrintable(prefillVerdict));
        QVERIFY2(prefillVerdict.contains("the best gains 50.0 % over the median of 11 configs"),
                 qPrintable(prefillVerdict));

        // Without a measured copy the memory roof is unknown: no bound is claimed, the compute roof stays.
        for (SessionData& s : sessions)
            s.info.provenanceJson =
                R"json({"devices": [{"arch": "sm_90", "sm_count": 132, "sm_clock_khz": 1980000}]})json";
        const std::vector<ShapeRegime> partial = shapeRegimes(sessions, m);
        QCOMPARE(partial[0].roofline.bound(), Roofline::Bound::Unknown);
        QVERIFY2(QString::fromStdString(partial[0].verdict).startsWith("the best runs at 0.3 % of the bfloat16 peak"),
                 partial[0].verdict.c_str());
        // Sessions without a problem (imports): the spread alone.
        for (SessionData& s : sessions)
            s.info.problemJson.clear();
        QVERIFY(QString::fromStdString(shapeRegimes(sessions, m)[1].verdict).startsWith("the best gains 50.0 %"));
    }

    void earlyStopRule() {
        Roofline roof;
        roof.bytes = 4e9; // 1 ms at 4000 GB/s
        roof.bandwidthGBps = 4000;
        ShapeSpread spread = spreadOf({{1.04, 0.01}, {1.5, 0.01}, {2.0, 0.01}});
        const EarlyStop rule;
        QVERIFY2(QString::fromStdString(earlyStopReason(rule, spread, roof))
                     .startsWith("the best runs at 96 % of the "
                                 "roofline"),
                 earlyStopReason(rule, spread, roof).c_str());
        spread = spreadOf({{1.2, 0.01}, {1.5, 0.01}, {2.0, 0.01}});
        QVERIFY(earlyStopReason(rule, spread, roof).empty()); // 83 %: more may pay
        // Flat, but only after flatAfter configs.
        std::vector<std::pair<double, double>> flat;
        for (int i = 0; i < 23; ++i)
            flat.emplace_back(1.2 * (1 + 0.001 * i), 0.01);
        QVERIFY(spreadOf(flat).flat);
        QVERIFY(earlyStopReason(rule, spreadOf(flat), roof).empty());
        flat.emplace_back(1.2, 0.01);
        QVERIFY(
            QString::fromStdString(earlyStopReason(rule, spreadOf(flat), roof)).startsWith("flat: 22 of 24 configs"));
        QVERIFY(earlyStopReason(EarlyStop{0, 0}, spreadOf(flat), roof).empty());
        QVERIFY(earlyStopReason(rule, ShapeSpread{}, roof).empty());
    }

    void distributionFromCsv() {
        const auto [names, rows] = readShapeDistribution("count, M ,N\r\n\r\n120,1,4096\r\n3.5, 7, 4096\n", "seen.csv");
        QCOMPARE(names, (std::vector<std::string>{"M", "N"}));
        QCOMPARE(rows.size(), std::size_t(2));
        QCOMPARE(rows[1].dims, (std::vector<std::int64_t>{7, 4096}));
        QCOMPARE(rows[1].count, 3.5);
        auto expectError = [](const std::string& text, const QString& phrase) {
            try {
                readShapeDistribution(text, "seen.csv");
                QFAIL("no error");
            } catch (const InputError& e) {
                QVERIFY2(QString::fromStdString(e.what()).contains(phrase), e.what());
            }
        };
        expectError("M,N\n1,2\n", "needs a 'count' column");
        expectError("M,count\n1,5\n2\n", "line 3: expected 2 cells, got 1");
        expectError("M,count\n0,5\n", "line 2: '0' is not a positive whole number");
        expectError("M,count\n4,-1\n", "count '-1' is not a number of 0 or more");
        expectError("M,count\n", "no shapes in the distribution");
    }

    void bucketsCoverTheDistribution() {
        // Decode to prefill: M from 1 to 3000, most of the count at small M.
        std::vector<ShapeCount> seen;
        for (const std::int64_t m : {1, 2, 3, 5, 8, 13, 21, 100, 300, 1000, 3000})
            seen.push_back({{m, 4096}, m <= 8 ? 1000.0 : 10.0});
        double previous = std::numeric_limits<double>::infinity();
        for (std::size_t k = 1; k <= 8; ++k) {
            const BucketPlan plan = planBuckets(seen, k);
            QVERIFY(plan.buckets.size() <= k);
            QCOMPARE(plan.bucketOf.size(), seen.size());
            double weighted = 0, total = 0;
            for (std::size_t i = 0; i < seen.size(); ++i) {
                const auto& bucket = plan.buckets[plan.bucketOf[i]];
                QVERIFY(bucket[0] >= seen[i].dims[0] && bucket[1] >= seen[i].dims[1]); // it fits
                weighted += seen[i].count * (double(bucket[0]) / double(seen[i].dims[0]) - 1.0);
                total += seen[i].count;
            }
            QVERIFY(std::fabs(plan.padding - weighted / total) < 1e-12);
            QVERIFY(plan.padding <= previous + 1e-12); // more buckets never pad more
            previous = plan.padding;
            if (k == 1)
                QCOMPARE(plan.buckets, (std::vector<std::vector<std::int64_t>>{{4096, 4096}}));
        }
        // With a bucket for every power of two the seen shapes round to, each pads only to its own.
        const BucketPlan all = planBuckets(seen, 100);
        double own = 0, total = 0;
        for (const ShapeCount& s : seen) {
            std::int64_t p = 1;
            while (p < s.dims[0])
                p <<= 1;
            own += s.count * (double(p) / double(s.dims[0]) - 1.0);
            total += s.count;
        }
        QVERIFY(std::fabs(all.padding - own / total) < 1e-12);
        // Two buckets: the small shapes' 8 and everything else's 4096 is the best pair.
        const BucketPlan two = planBuckets(seen, 2);
        QCOMPARE(two.buckets, (std::vector<std::vector<std::int64_t>>{{8, 4096}, {4096, 4096}}));
    }

    void recordingsThatMakeNoTable() {
        auto expectError = [](const std::vector<SessionData>& sessions, const std::string& kernel,
                              const QString& phrase) {
            try {
                buildShapeConfigMatrix(sessions, kernel, "r.db");
                QFAIL("no error");
            } catch (const InputError& e) {
                QVERIFY2(QString::fromStdString(e.what()).contains(phrase), e.what());
            }
        };
        const SessionData a = session("a", {{"M", 1}}, {{0, 1.0}});
        const SessionData b = session("b", {{"M", 1}}, {{0, 1.0}});
        expectError({a, b}, "", "holds the kernels a, b; name one with --kernel");
        expectError({a}, "c", "no session of kernel 'c' with results (the recording holds a)");
        expectError({a, session("a", {{"N", 2}}, {{0, 1.0}})}, "", "a shape set needs the same names");
        SessionData failed = session("a", {{"M", 1}}, {{0, 1.0}});
        failed.results[0].measurement.status = ResultStatus::WrongResult;
        expectError({failed}, "", "no config of kernel 'a' ran correctly");
        QCOMPARE(buildShapeConfigMatrix({a, b}, "b", "r.db").kernel, std::string("b"));
    }
};

QTEST_GUILESS_MAIN(TestShapes)
#include "tst_shapes.moc"
