// ConfigSpace against brute force: counts, membership, the index bijection, sampling and
// neighbours, on hand-made and random small spaces; lazy counting of huge spaces.

#include "base/error.h"
#include "base/textformat.h"
#include "space/configspace.h"
#include "spec/tuningproblem.h"

#include <QtTest>

#include <cmath>
#include <numeric>
#include <random>
#include <set>

using namespace tilescope;
using expr::Value;

namespace {

struct ParamDef {
    std::string name;
    std::vector<std::int64_t> values;
};

TuningProblem makeProblem(const std::vector<ParamDef>& params, const std::vector<std::string>& conditions,
                          const std::vector<Shape>& shapes = {Shape{}}) {
    TuningProblem problem;
    problem.fileName = "test.json";
    for (const auto& p : params) {
        TuningParameter tp;
        tp.name = p.name;
        tp.type = "int";
        for (auto v : p.values)
            tp.values.push_back(Value::ofInt(v));
        tp.valuesText = expr::repr(expr::ValueList(tp.values).value());
        problem.parameters.push_back(std::move(tp));
    }
    for (const auto& c : conditions)
        problem.conditions.push_back(Condition{{}, c});
    problem.shapes = shapes;
    return problem;
}

// Five GEMM parameters, 768 raw configs, three conditions.
TuningProblem smallGemmProblem() {
    return makeProblem({{"BLOCK_M", {16, 32, 64, 128}},
                        {"BLOCK_N", {16, 32, 64, 128}},
                        {"THREAD_M", {1, 2, 4, 8}},
                        {"THREAD_N", {1, 2, 4, 8}},
                        {"VEC", {1, 2, 4}}},
                       {"BLOCK_M % THREAD_M == 0", "32 <= (BLOCK_M // THREAD_M) * (BLOCK_N // THREAD_N) <= 256",
                        "THREAD_N % VEC == 0"});
}

// All valid configs by brute force over the raw space, in mixed-radix order.
std::set<Config> bruteForce(const TuningProblem& problem, std::size_t shape = 0) {
    const expr::Scope scope = problem.scope();
    expr::ValueList storage;
    std::vector<Value> slotValues = problem.shapeSlots(shape, storage);
    std::vector<expr::Expression> conditions;
    for (const auto& c : problem.conditions)
        conditions.push_back(expr::Expression::compile(c.expression, scope));
    const std::size_t P = problem.parameters.size();
    std::set<Config> valid;
    Config config(P, 0);
    while (true) {
        for (std::size_t p = 0; p < P; ++p)
            slotValues[p] = problem.parameters[p].values[config[p]];
        bool ok = true;
        for (const auto& c : conditions) {
            Value out;
            expr::EvalStatus st;
            if (!c.tryEvaluate(slotValues.data(), out, st) || !expr::truthy(out)) {
                ok = false;
                break;
            }
        }
        if (ok)
            valid.insert(config);
        std::size_t p = 0;
        for (; p < P; ++p) {
            if (++config[p] < problem.parameters[p].values.size())
                break;
            config[p] = 0;
        }
        if (p == P)
            break;
    }
    return valid;
}

// Checks everything a space promises against the brute-force set.
void checkAgainstBruteForce(const ConfigSpace& space, const std::set<Config>& expected) {
    QCOMPARE(space.size(), std::uint64_t(expected.size()));
    std::set<Config> seen;
    for (std::uint64_t i = 0; i < space.size(); ++i) {
        const Config c = space.at(i);
        QVERIFY2(expected.count(c), qPrintable(QString::fromStdString("not valid: " + space.describe(c))));
        QVERIFY(space.isValid(c));
        QCOMPARE(space.indexOf(c), std::optional<std::uint64_t>(i));
        seen.insert(c);
    }
    QCOMPARE(seen.size(), expected.size()); // at() is injective, so a bijection onto the valid set
}

TuningProblem randomProblem(std::mt19937_64& rng) {
    const char* names[] = {"a", "b", "c", "d", "e", "f"};
    const int P = 2 + static_cast<int>(rng() % 5);
    std::vector<ParamDef> params;
    for (int p = 0; p < P; ++p) {
        ParamDef def{names[p], {}};
        const int n = 1 + static_cast<int>(rng() % 6);
        std::set<std::int64_t> values;
        while (static_cast<int>(values.size()) < n)
            values.insert(static_cast<std::int64_t>(rng() % 17) - 3);
        def.values.assign(values.begin(), values.end());
        params.push_back(def);
    }
    const char* templates[] = {
        "{0} * {1} <= 12",
        "{0} % 3 == {1} % 3",
        "{0} + {1} != 4",
        "{0} // 2 > {1} - 3",
        "{0} < {1} < {2}",
        "({0} if {1} > 2 else {2}) % 2 == 0",
        "10 // ({0} - 2) > -3",
        "abs({0} - {1}) >= 2",
        "{0} in [1, 2, 3, {1}]",
        "not ({0} == {1} or {1} == {2})",
        "min({0}, {1}) + max({1}, {2}) > 3",
    };
    std::vector<std::string> conditions;
    const int C = static_cast<int>(rng() % 4);
    for (int c = 0; c < C; ++c) {
        std::string t = templates[rng() % std::size(templates)];
        for (int k = 0; k < 3; ++k) {
            const std::string placeholder = "{" + std::to_string(k) + "}";
            for (std::size_t pos; (pos = t.find(placeholder)) != std::string::npos;)
                t.replace(pos, placeholder.size(), names[rng() % static_cast<std::size_t>(P)]);
        }
        conditions.push_back(t);
    }
    return makeProblem(params, conditions);
}

} // namespace

class TestSpace : public QObject {
    Q_OBJECT

private slots:
    void handMade() {
        const TuningProblem problem = smallGemmProblem();
        const ConfigSpace space = ConfigSpace::build(problem);
        QCOMPARE(space.rawSize(), 768.0);
        checkAgainstBruteForce(space, bruteForce(problem));
        QVERIFY(space.size() > 0 && space.size() < 768);
        QVERIFY(space.stats().materialized);
        QCOMPARE(space.stats().searchOrder.size(), std::size_t(5));
        // The memory limit holds to the byte: the valid configs, five 16-bit values each, are held
        // when they fit, and counted lazily (the same bijection) when one byte is missing.
        SpaceLimits exact;
        exact.maxMaterializedBytes = space.size() * 5 * sizeof(std::uint16_t);
        QVERIFY(ConfigSpace::build(problem, 0, exact).stats().materialized);
        exact.maxMaterializedBytes -= 1;
        const ConfigSpace lazy = ConfigSpace::build(problem, 0, exact);
        QVERIFY(!lazy.stats().materialized);
        checkAgainstBruteForce(lazy, bruteForce(problem));
    }

    void randomSpaces() {
        std::mt19937_64 rng(20261129);
        for (int trial = 0; trial < 300; ++trial) {
            const TuningProblem problem = randomProblem(rng);
            const auto expected = bruteForce(problem);
            const ConfigSpace space = ConfigSpace::build(problem);
            checkAgainstBruteForce(space, expected);
            // the lazy path (memoised counts only) gives the same bijection
            SpaceLimits lazy;
            lazy.maxMaterializedBytes = 0;
            const ConfigSpace lazySpace = ConfigSpace::build(problem, 0, lazy);
            QVERIFY(!lazySpace.stats().materialized || lazySpace.size() <= 1);
            QCOMPARE(lazySpace.size(), space.size());
            for (std::uint64_t i = 0; i < space.size(); ++i)
                QCOMPARE(lazySpace.at(i), space.at(i));
            if (QTest::currentTestFailed()) {
                for (const auto& c : problem.conditions)
                    qWarning("condition: %s", c.expression.c_str());
                return;
            }
        }
    }

    // Tilescope.Configs: the space is the listed configs that pass the conditions, each once,
    // with the same bijection promises (and the same on the lazy path).
    void configListsRestrictTheSpace() {
        std::mt19937_64 rng(20261203);
        for (int trial = 0; trial < 200; ++trial) {
            TuningProblem problem = randomProblem(rng);
            std::set<Config> raw; // a random sample of the raw space, duplicates included in the list
            std::vector<Config> list;
            const std::size_t P = problem.parameters.size();
            const int n = static_cast<int>(rng() % 40);
            for (int i = 0; i < n; ++i) {
                Config c(P);
                for (std::size_t p = 0; p < P; ++p)
                    c[p] = static_cast<std::uint16_t>(rng() % problem.parameters[p].values.size());
                list.push_back(c);
                if (rng() % 4 == 0)
                    list.push_back(c);
                raw.insert(c);
            }
            std::set<Config> expected;
            for (const Config& c : bruteForce(problem))
                if (raw.count(c))
                    expected.insert(c);
            problem.configList = list;
            const ConfigSpace space = ConfigSpace::build(problem);
            checkAgainstBruteForce(space, expected);
            for (const Config& c : raw)
                QCOMPARE(space.isValid(c), expected.count(c) > 0);
            SpaceLimits lazy;
            lazy.maxMaterializedBytes = 0;
            const ConfigSpace lazySpace = ConfigSpace::build(problem, 0, lazy);
            QCOMPARE(lazySpace.size(), space.size());
            for (std::uint64_t i = 0; i < space.size(); ++i)
                QCOMPARE(lazySpace.at(i), space.at(i));
            if (QTest::currentTestFailed())
                return;
        }
        // An empty list leaves nothing.
        TuningProblem problem = smallGemmProblem();
        problem.configList = std::vector<Config>{};
        QCOMPARE(ConfigSpace::build(problem).size(), std::uint64_t(0));
    }

    void invalidConfigsHaveNoIndex() {
        const auto problem = makeProblem({{"a", {1, 2, 3}}, {"b", {1, 2, 3}}}, {"a < b"});
        const ConfigSpace space = ConfigSpace::build(problem);
        QCOMPARE(space.size(), std::uint64_t(3));
        QCOMPARE(space.indexOf(Config{2, 0}), std::nullopt); // a=3, b=1
        QCOMPARE(space.indexOf(Config{0, 9}), std::nullopt); // out of range
        QCOMPARE(space.indexOf(Config{0}), std::nullopt);    // wrong length
        QVERIFY(!space.isValid(Config{1, 1}));
        QVERIFY_THROWS_EXCEPTION(std::out_of_range, space.at(3));
    }

    void raisingConditionsAreInvalidAndReported() {
        const auto problem = makeProblem({{"a", {0, 1, 2, 3, 4}}, {"b", {1, 2}}}, {"12 // (a - 2) > b"});
        const ConfigSpace space = ConfigSpace::build(problem);
        checkAgainstBruteForce(space, bruteForce(problem));
        const auto& failures = space.stats().failures;
        QCOMPARE(failures.size(), std::size_t(1));
        QCOMPARE(failures[0].condition, 0);
        QVERIFY(failures[0].count >= 1);
        QVERIFY2(failures[0].firstError.find("ZeroDivisionError") != std::string::npos, failures[0].firstError.c_str());
        QCOMPARE(int(failures[0].firstConfig[0]), 2); // a = 2
    }

    void shapesInConditions() {
        const auto problem = makeProblem({{"BLOCK", {16, 32, 64, 128}}}, {"M % BLOCK == 0"},
                                         {Shape{{{"M", 4096}}}, Shape{{{"M", 96}}}, Shape{{{"M", 100}}}});
        QCOMPARE(ConfigSpace::build(problem, 0).size(), std::uint64_t(4));
        QCOMPARE(ConfigSpace::build(problem, 1).size(), std::uint64_t(2));
        QCOMPARE(ConfigSpace::build(problem, 2).size(), std::uint64_t(0));
        // a condition on the shape alone holds for every config or none
        const auto big = makeProblem({{"BLOCK", {16, 32}}}, {"M >= 1024"}, {Shape{{{"M", 4096}}}, Shape{{{"M", 96}}}});
        QCOMPARE(ConfigSpace::build(big, 0).size(), std::uint64_t(2));
        QCOMPARE(ConfigSpace::build(big, 1).size(), std::uint64_t(0));
    }

    void samplingWithoutReplacement() {
        const auto problem =
            makeProblem({{"a", {1, 2, 3, 4, 5, 6, 7, 8}}, {"b", {1, 2, 3, 4, 5, 6, 7, 8}}}, {"a * b <= 24"});
        const ConfigSpace space = ConfigSpace::build(problem);
        const std::uint64_t N = space.size();
        // the whole space, in random order: every index exactly once
        const auto all = space.sample(N + 10, 7);
        QCOMPARE(all.size(), std::size_t(N));
        QCOMPARE(std::set<std::uint64_t>(all.begin(), all.end()).size(), std::size_t(N));
        QVERIFY(*std::max_element(all.begin(), all.end()) < N);
        // deterministic for a seed, different across seeds
        QCOMPARE(space.sample(5, 1), space.sample(5, 1));
        QVERIFY(space.sample(5, 1) != space.sample(5, 2));
        // small samples are distinct and roughly uniform: every index is hit over many draws
        std::vector<int> hits(static_cast<std::size_t>(N), 0);
        for (std::uint64_t seed = 0; seed < 2000; ++seed) {
            const auto s = space.sample(3, seed);
            QCOMPARE(std::set<std::uint64_t>(s.begin(), s.end()).size(), std::size_t(3));
            for (auto i : s)
                ++hits[static_cast<std::size_t>(i)];
        }
        const double expected = 2000.0 * 3 / static_cast<double>(N);
        for (int h : hits)
            QVERIFY2(h > expected * 0.6 && h < expected * 1.4,
                     qPrintable(QString("hits %1, expected %2").arg(h).arg(expected)));
    }

    void neighboursStayValid() {
        const auto problem = makeProblem({{"a", {1, 2, 4, 8, 16}}, {"b", {1, 2, 4, 8, 16}}, {"c", {1, 2, 3}}},
                                         {"a * b <= 32", "c <= b"});
        const ConfigSpace space = ConfigSpace::build(problem);
        const auto valid = bruteForce(problem);
        for (std::uint64_t i = 0; i < space.size(); ++i) {
            const Config c = space.at(i);
            for (auto kind : {ConfigSpace::NeighbourKind::Adjacent, ConfigSpace::NeighbourKind::AnyValue}) {
                std::set<Config> expected;
                for (std::size_t p = 0; p < c.size(); ++p) {
                    const int n = static_cast<int>(problem.parameters[p].values.size());
                    for (int v = 0; v < n; ++v) {
                        if (v == c[p] || (kind == ConfigSpace::NeighbourKind::Adjacent && std::abs(v - c[p]) != 1))
                            continue;
                        Config d = c;
                        d[p] = static_cast<std::uint16_t>(v);
                        if (valid.count(d))
                            expected.insert(d);
                    }
                }
                const auto got = space.neighbours(c, kind);
                QCOMPARE(std::set<Config>(got.begin(), got.end()), expected);
                QCOMPARE(got.size(), expected.size());
            }
        }
    }

    void hugeSpaceIsCountedLazily() {
        // 12 parameters of 10 values: 10^12 raw. Conditions pair them up (p0 <= p1, p2 <= p3, ...),
        // so 55 of the 100 combinations of each pair hold: 55^6 valid configs.
        std::vector<ParamDef> params;
        std::vector<std::string> conditions;
        for (int p = 0; p < 12; ++p)
            params.push_back({"p" + std::to_string(p), {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}});
        for (int p = 0; p < 12; p += 2)
            conditions.push_back("p" + std::to_string(p) + " <= p" + std::to_string(p + 1));
        const auto problem = makeProblem(params, conditions);
        const ConfigSpace space = ConfigSpace::build(problem);
        QCOMPARE(space.rawSize(), 1e12);
        QCOMPARE(space.size(), std::uint64_t(27680640625)); // 55^6
        QVERIFY(!space.stats().materialized);
        for (std::uint64_t index : space.sample(200, 3)) {
            const Config c = space.at(index);
            QVERIFY(space.isValid(c));
            QCOMPARE(space.indexOf(c), std::optional<std::uint64_t>(index));
        }
        QCOMPARE(space.indexOf(space.at(space.size() - 1)), std::optional<std::uint64_t>(space.size() - 1));
        // neighbours work without the configs in memory
        QVERIFY(!space.neighbours(space.at(12345), ConfigSpace::NeighbourKind::Adjacent).empty());
    }

    void unstructuredHugeSpaceIsRefusedClearly() {
        // one condition reads every parameter: no memo helps; within small limits, a clear error
        std::vector<ParamDef> params;
        std::string sum = "p0";
        for (int p = 0; p < 10; ++p)
            params.push_back({"p" + std::to_string(p), {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}});
        for (int p = 1; p < 10; ++p)
            sum += " + p" + std::to_string(p);
        const auto problem = makeProblem(params, {sum + " != 3"});
        SpaceLimits limits;
        limits.maxMemoEntries = 10000;
        limits.maxMaterializedBytes = 100000;
        try {
            ConfigSpace::build(problem, 0, limits);
            QFAIL("expected an InputError");
        } catch (const InputError& e) {
            QCOMPARE(e.location(), std::string("/ConfigurationSpace"));
            QVERIFY2(std::string(e.what()).find("too large") != std::string::npos, e.what());
            QVERIFY2(std::string(e.what()).find("10000") != std::string::npos, e.what());
            // and the most configs it would hold: 100,000 bytes of 10 two-byte indices each
            QVERIFY2(std::string(e.what()).find("more than 5000 valid configs") != std::string::npos, e.what());
        }
    }

    void unstructuredSpaceEnumeratedWithinLimits() {
        // A condition over every parameter defeats the memo (a tiny one here): the space is then
        // enumerated directly, every valid config once, none of the others.
        const std::vector<ParamDef> params = {
            {"a", {0, 1, 2, 3, 4, 5}}, {"b", {0, 1, 2, 3, 4, 5}}, {"c", {0, 1, 2, 3, 4, 5}}, {"d", {0, 1, 2, 3, 4, 5}}};
        const auto problem = makeProblem(params, {"a + 2 * b + 3 * c + 5 * d != 11"});
        SpaceLimits limits;
        limits.maxMemoEntries = 4;
        const ConfigSpace space = ConfigSpace::build(problem, 0, limits);
        std::set<std::vector<int>> expected;
        for (int a = 0; a < 6; ++a)
            for (int b = 0; b < 6; ++b)
                for (int c = 0; c < 6; ++c)
                    for (int d = 0; d < 6; ++d)
                        if (a + 2 * b + 3 * c + 5 * d != 11)
                            expected.insert({a, b, c, d});
        QCOMPARE(space.size(), static_cast<std::uint64_t>(expected.size()));
        std::set<std::vector<int>> seen;
        for (std::uint64_t i = 0; i < space.size(); ++i) {
            const Config config = space.at(i);
            std::vector<int> values;
            for (int p = 0; p < 4; ++p)
                values.push_back(static_cast<int>(space.value(config, p).i));
            QVERIFY(expected.count(values));
            seen.insert(values);
        }
        QCOMPARE(seen.size(), expected.size());
        // A config given with more values than parameters is described by its parameters alone.
        Config longer = space.at(0);
        const std::string described = space.describe(longer);
        longer.push_back(0);
        QCOMPARE(space.describe(longer), described);
    }

    // The hard count: five parameters of range(1000) and one condition over all of
    // them. Checked only once all five are bound, it would be evaluated 10^15 times; bounds on
    // the partial sums cut every prefix past 17 at once. C(21, 4) = 5985 configs sum to 17.
    void sumOverManyParametersIsCountedByBounds() {
        std::vector<ParamDef> params;
        std::vector<std::int64_t> values(1000);
        std::iota(values.begin(), values.end(), std::int64_t(0));
        for (int p = 0; p < 5; ++p)
            params.push_back({"P" + std::to_string(p), values});
        const auto problem = makeProblem(params, {"P0+P1+P2+P3+P4 == 17"});
        const ConfigSpace space = ConfigSpace::build(problem);
        QCOMPARE(space.size(), std::uint64_t(5985));
        // Counted by bounds, not by trying 10^15 configs: the evaluations say so on any machine
        // (a wall-clock bound here took 10.3 s under the sanitizers on 2 busy cores).
        QVERIFY2(space.stats().conditionEvaluations < 20'000'000,
                 qPrintable(QString::number(space.stats().conditionEvaluations)));
        // Enumerated, indexed and sampled as any space: every config sums to 17, each once.
        std::set<Config> seen;
        for (std::uint64_t i = 0; i < space.size(); ++i) {
            const Config c = space.at(i);
            std::int64_t sum = 0;
            for (int p = 0; p < 5; ++p)
                sum += space.value(c, p).i;
            QCOMPARE(sum, std::int64_t(17));
            QCOMPARE(space.indexOf(c), std::optional<std::uint64_t>(i));
            seen.insert(c);
        }
        QCOMPARE(seen.size(), std::size_t(5985));
        Config off = space.at(0);
        off[0] = 999;
        QCOMPARE(space.indexOf(off), std::nullopt);
        QVERIFY(!space.isValid(off));
        for (std::uint64_t index : space.sample(100, 7))
            QVERIFY(space.isValid(space.at(index)));
        // The same on the lazy path, and with the order of the sum's terms reversed.
        SpaceLimits lazy;
        lazy.maxMaterializedBytes = 0;
        const ConfigSpace counted = ConfigSpace::build(problem, 0, lazy);
        QCOMPARE(counted.size(), std::uint64_t(5985));
        QCOMPARE(counted.at(4321), space.at(4321));
        QCOMPARE(ConfigSpace::build(makeProblem(params, {"17 == P4+P3+P2+P1+P0"})).size(), std::uint64_t(5985));
        QCOMPARE(ConfigSpace::build(makeProblem(params, {"P0+P1+P2+P3+P4 <= 3"})).size(), std::uint64_t(56));
    }

    // Bounds never remove a valid config: random spaces whose conditions bounds can decide on
    // partial configs (sums, products, quotients, powers, min/max, chains, and/or, in lists,
    // floats and negative values), counted and indexed against brute force.
    void boundsAgreeWithBruteForce() {
        std::mt19937_64 rng(52);
        const char* names[] = {"a", "b", "c", "d", "e"};
        const char* templates[] = {
            "{0} + {1} + {2} == 7",
            "{0} + {1} + {2} <= 4",
            "{0} * {1} * {2} >= 40",
            "{0} * {1} <= 6 and {2} > 1",
            "{0} * {1} <= -9",
            "{0} * ({1} - {2}) >= 30",
            "({0} - 3) * {1} * {2} <= -30",
            "{0} - {1} == {2} + 3",
            "{0} // ({1} + 10) + {2} >= 2",
            "({0} % 4) + {1} == 6",
            "2 ** abs({0}) + {1} <= 9",
            "min({0}, {1}) + max({1}, {2}) > 8",
            "{0} < {1} < {2} < 5",
            "{0} > 5 or {1} + {2} < -3",
            "{0} + {1} in [11, 12, 2.5]",
            "not ({0} + {1} + {2} != 6)",
            "({0} if {1} > 2 else {2}) * {1} >= 20",
            "{0} / 2 + {1} > 6.25",
            "sum([{0}, {1}, {2}]) == 5",
            "abs({0} - {1}) + abs({1} - {2}) >= 12",
            "100 // ({0} - 2) > {1}",
        };
        for (int trial = 0; trial < 300; ++trial) {
            const int P = 3 + static_cast<int>(rng() % 3);
            TuningProblem problem = makeProblem({}, {});
            for (int p = 0; p < P; ++p) {
                TuningParameter tp;
                tp.name = names[p];
                tp.type = "int";
                const int n = 1 + static_cast<int>(rng() % 7);
                std::set<double> values;
                while (static_cast<int>(values.size()) < n)
                    values.insert(static_cast<double>(static_cast<int>(rng() % 15) - 4) / (rng() % 5 ? 1.0 : 2.0));
                for (double v : values)
                    tp.values.push_back(v == std::floor(v) ? Value::ofInt(static_cast<std::int64_t>(v))
                                                           : Value::ofFloat(v));
                tp.valuesText = expr::repr(expr::ValueList(tp.values).value());
                problem.parameters.push_back(std::move(tp));
            }
            const int C = 1 + static_cast<int>(rng() % 2);
            for (int c = 0; c < C; ++c) {
                std::string t = templates[rng() % std::size(templates)];
                for (int k = 0; k < 3; ++k) {
                    const std::string placeholder = "{" + std::to_string(k) + "}";
                    for (std::size_t pos; (pos = t.find(placeholder)) != std::string::npos;)
                        t.replace(pos, placeholder.size(), names[rng() % static_cast<std::size_t>(P)]);
                }
                problem.conditions.push_back(Condition{{}, t});
            }
            const auto expected = bruteForce(problem);
            checkAgainstBruteForce(ConfigSpace::build(problem), expected);
            SpaceLimits lazy;
            lazy.maxMaterializedBytes = 0;
            const ConfigSpace lazySpace = ConfigSpace::build(problem, 0, lazy);
            QCOMPARE(lazySpace.size(), std::uint64_t(expected.size()));
            if (QTest::currentTestFailed()) {
                for (const auto& c : problem.conditions)
                    qWarning("condition: %s", c.expression.c_str());
                return;
            }
        }
    }

    // A condition that neither propagation nor bounds can decide before its last parameter: the
    // count stops within its work limit, naming the condition and what it found by then.
    void uncountableSpaceIsRefusedWithinItsBudget() {
        std::vector<ParamDef> params;
        std::vector<std::int64_t> values(100);
        std::iota(values.begin(), values.end(), std::int64_t(0));
        for (int p = 0; p < 5; ++p)
            params.push_back({"P" + std::to_string(p), values});
        const auto problem = makeProblem(params, {"P0 < 100", "(7*P0 + 13*P1 + 17*P2 + 3*P3 + P4) % 100 == 17"});
        SpaceLimits limits;
        limits.maxEvaluations = 2'000'000;
        try {
            ConfigSpace::build(problem, 0, limits);
            QFAIL("expected UncountableSpace");
        } catch (const UncountableSpace& e) {
            QCOMPARE(e.location(), std::string("/ConfigurationSpace/Conditions/1/Expression"));
            const std::string what = e.message();
            QVERIFY2(what.find("cannot be counted exactly") != std::string::npos, what.c_str());
            QVERIFY2(what.find("2,000,000 evaluations") != std::string::npos, what.c_str());
            QVERIFY2(what.find("5 parameters (P0, P1, P2, P3, P4) with 10,000,000,000 combinations") !=
                         std::string::npos,
                     what.c_str());
            QVERIFY2(what.find("at least " + formatCount(static_cast<double>(e.atLeast())) + " valid configs") !=
                         std::string::npos,
                     what.c_str());
            QVERIFY(e.atLeast() > 0);
        }
        // The direct enumeration after a memo overflow has the same limit.
        limits.maxMemoEntries = 1000;
        QVERIFY_THROWS_EXCEPTION(UncountableSpace, ConfigSpace::build(problem, 0, limits));
        // Within a larger limit it is counted: 10^6 raw, one config in 100.
        params.pop_back();
        params.pop_back();
        const auto smaller = makeProblem(params, {"(7*P0 + 13*P1 + 17*P2) % 100 == 17"});
        limits = SpaceLimits{};
        QCOMPARE(ConfigSpace::build(smaller, 0, limits).size(), std::uint64_t(10000));
    }

    void cancelStopsABuild() {
        // an unstructured 10^10 space would take long; a set cancel flag stops it at once
        std::vector<ParamDef> params;
        std::string sum = "p0";
        for (int p = 0; p < 10; ++p)
            params.push_back({"p" + std::to_string(p), {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}});
        for (int p = 1; p < 10; ++p)
            sum += " + p" + std::to_string(p);
        const auto problem = makeProblem(params, {sum + " != 3"});
        std::atomic<bool> cancel{true};
        SpaceLimits limits;
        limits.cancel = &cancel;
        QVERIFY_THROWS_EXCEPTION(Cancelled, ConfigSpace::build(problem, 0, limits));
    }

    void noParametersAndNoConditions() {
        const auto empty = makeProblem({}, {});
        const ConfigSpace one = ConfigSpace::build(empty);
        QCOMPARE(one.size(), std::uint64_t(1));
        QCOMPARE(one.at(0), Config{});
        QCOMPARE(one.indexOf(Config{}), std::optional<std::uint64_t>(0));
        QCOMPARE(one.sample(5, 1), std::vector<std::uint64_t>{0});
        QVERIFY(!one.stats().materialized); // nothing to hold: its one config has no values
        const auto free = makeProblem({{"a", {1, 2, 3}}, {"b", {4, 5}}}, {});
        const ConfigSpace space = ConfigSpace::build(free);
        checkAgainstBruteForce(space, bruteForce(free));
    }

    // The index of a config is stored with its result (space_index) and read back by --resume and
    // the workbench: the order of the space is a file format. Pinned here for a fixed problem,
    // with the order in which the enumerator binds the parameters.
    void indexOrderIsStable() {
        const TuningProblem problem = smallGemmProblem();
        for (const std::uint64_t limit : {std::uint64_t(512) << 20, std::uint64_t(0)}) { // held, then lazy
            SpaceLimits limits;
            limits.maxMaterializedBytes = limit;
            const ConfigSpace space = ConfigSpace::build(problem, 0, limits);
            QCOMPARE(space.stats().searchOrder, (std::vector<int>{0, 2, 3, 4, 1}));
            QStringList described;
            for (const std::uint64_t i : {std::uint64_t(0), std::uint64_t(1), space.size() / 2, space.size() - 1})
                described << QString::fromStdString(space.describe(space.at(i)));
            QCOMPARE(described.join(QStringLiteral("; ")),
                     QStringLiteral("BLOCK_M=16 BLOCK_N=16 THREAD_M=1 THREAD_N=1 VEC=1; "
                                    "BLOCK_M=16 BLOCK_N=16 THREAD_M=1 THREAD_N=2 VEC=1; "
                                    "BLOCK_M=32 BLOCK_N=64 THREAD_M=4 THREAD_N=8 VEC=2; "
                                    "BLOCK_M=128 BLOCK_N=128 THREAD_M=8 THREAD_N=8 VEC=4"));
        }
    }

    // A condition over 40 parameters: its level's key of 39 bound values is 78 bits, past what
    // packs into 64, so the memo keys it wide; the chain p0 == p1 == ... keeps 3 states reachable.
    void wideMemoKeys() {
        std::vector<ParamDef> params;
        std::vector<std::string> conditions;
        std::string sum = "p0";
        for (int p = 0; p < 40; ++p)
            params.push_back({"p" + std::to_string(p), {0, 1, 2}});
        for (int p = 1; p < 39; ++p) {
            conditions.push_back("p" + std::to_string(p) + " == p" + std::to_string(p - 1));
            sum += " + p" + std::to_string(p);
        }
        conditions.push_back(sum + " >= p39");
        const auto problem = makeProblem(params, conditions);
        for (const std::uint64_t limit : {std::uint64_t(512) << 20, std::uint64_t(0)}) {
            SpaceLimits limits;
            limits.maxMaterializedBytes = limit;
            const ConfigSpace space = ConfigSpace::build(problem, 0, limits);
            QCOMPARE(space.size(), std::uint64_t(7)); // all 0 with p39 = 0; all 1 or all 2 with any p39
            std::set<Config> seen;
            for (std::uint64_t i = 0; i < space.size(); ++i) {
                const Config c = space.at(i);
                QVERIFY(space.isValid(c));
                QCOMPARE(space.indexOf(c), std::optional<std::uint64_t>(i));
                seen.insert(c);
            }
            QCOMPARE(seen.size(), std::size_t(7));
        }
    }

    void sgemmProblem() {
        const TuningProblem problem = TuningProblem::load(TILESCOPE_SOURCE_DIR "/kernels/sgemm/sgemm.json");
        const ConfigSpace space = ConfigSpace::build(problem);
        QVERIFY(space.size() > 100);
        if (space.rawSize() <= 2e6)
            QCOMPARE(space.size(), std::uint64_t(bruteForce(problem).size()));
        for (std::uint64_t index : space.sample(50, 1))
            QCOMPARE(space.indexOf(space.at(index)), std::optional<std::uint64_t>(index));
    }
};

QTEST_GUILESS_MAIN(TestSpace)
#include "tst_space.moc"
