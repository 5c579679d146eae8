// Search strategies beyond exhaustive and random: annealing, genetic, Bayesian optimisation (with
// and without the static-feature prior). They must find the optimum of smooth synthetic spaces
// within a budget, keep the Strategy contract on random spaces (valid, new, every config once when
// run to exhaustion, with failures, batches and prior observations), and be reproducible by seed.
// The Gaussian process is checked against explicit formulas.

#include "analysis/pareto.h"
#include "base/error.h"
#include "search/gaussianprocess.h"
#include "search/strategies.h"
#include "search/strategy.h"
#include "space/configspace.h"
#include "spec/tuningproblem.h"

#include <QtTest>

#include <cmath>
#include <functional>
#include <map>
#include <random>
#include <set>

using namespace tilescope;

namespace {

struct Parameter {
    std::string name;
    std::string values; // a T1 Values expression, e.g. "[1, 2, 4]" or "range(0, 8)"
};

// A T1 problem over the given parameters and conditions (each condition names the parameters
// whose name occurs in it; names are single letters).
TuningProblem makeProblem(const std::vector<Parameter>& params, const std::vector<std::string>& conditions) {
    std::string text = "{\"ConfigurationSpace\": {\"TuningParameters\": [";
    for (std::size_t i = 0; i < params.size(); ++i)
        text += std::string(i ? ", " : "") + "{\"Name\": \"" + params[i].name +
                "\", \"Type\": \"int\", \"Values\": \"" + params[i].values + "\"}";
    text += "], \"Conditions\": [";
    for (std::size_t i = 0; i < conditions.size(); ++i) {
        std::string names;
        for (const Parameter& p : params)
            if (conditions[i].find(p.name) != std::string::npos)
                names += std::string(names.empty() ? "" : ", ") + "\"" + p.name + "\"";
        text +=
            std::string(i ? ", " : "") + "{\"Parameters\": [" + names + "], \"Expression\": \"" + conditions[i] + "\"}";
    }
    text += "]}, \"KernelSpecification\": {\"Language\": \"CUDA\", \"KernelName\": \"k\", \"KernelFile\": \"k.cu\", "
            "\"GlobalSize\": {\"X\": \"1\"}, \"LocalSize\": {\"X\": \"1\"}}}";
    return TuningProblem::parse(text, "synthetic.json", {});
}

std::uint64_t mix(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

// Deterministic noise in [-1, 1] for a config index.
double noise(std::uint64_t index, std::uint64_t salt) {
    return static_cast<double>(mix(index * 31 + salt) >> 11) / static_cast<double>(1ULL << 53) * 2 - 1;
}

StrategyContext contextFor(const ConfigSpace& space, std::uint64_t seed, std::uint64_t limit = 0) {
    StrategyContext c;
    c.space = &space;
    c.seed = seed;
    c.configLimit = limit ? limit : space.size();
    return c;
}

using Evaluate = std::function<Observation(std::uint64_t index)>;

// Runs a strategy with results coming back one batch late (one batch in flight), until it is done,
// `limit` configs were proposed or `stopAt` was. Fails the test on an empty proposal while not done.
std::vector<std::uint64_t> run(Strategy& s, const Evaluate& evaluate, std::size_t batch, std::uint64_t limit,
                               bool* stalled = nullptr, std::optional<std::uint64_t> stopAt = {}) {
    std::vector<std::uint64_t> out;
    std::vector<Observation> inFlight;
    while (!s.done() && out.size() < limit) {
        if (stopAt && std::find(out.begin(), out.end(), *stopAt) != out.end())
            break;
        const auto ids = s.propose(std::min<std::uint64_t>(batch, limit - out.size()));
        if (ids.empty()) {
            if (stalled)
                *stalled = true;
            break;
        }
        s.observe(inFlight);
        inFlight.clear();
        for (std::uint64_t i : ids)
            inFlight.push_back(evaluate(i));
        out.insert(out.end(), ids.begin(), ids.end());
    }
    s.observe(inFlight);
    return out;
}

const QStringList kStrategies = {"annealing", "genetic", "bayes", "bayes-prior", "nsga2"};

// A smooth bowl over five parameters, 2,584 valid configs: time in ms with 1 % noise; the
// optimum is unique and well separated from its neighbours.
struct Bowl {
    TuningProblem problem = makeProblem({{"A", "range(0, 8)"},
                                         {"B", "range(0, 8)"},
                                         {"C", "[1, 2, 4, 8, 16, 32]"},
                                         {"D", "range(0, 4)"},
                                         {"E", "[0, 1, 2]"}},
                                        {"A + B <= 10", "C * (D + 1) <= 32", "E != 1 or A % 2 == 0"});
    ConfigSpace space = ConfigSpace::build(problem);

    double exact(std::uint64_t index) const {
        const Config c = space.at(index);
        const double a = c[0], b = c[1], lc = c[2], d = c[3], e = c[4];
        return 1 + 0.15 * (a - 6) * (a - 6) + 0.1 * (b - 3) * (b - 3) + 0.2 * (lc - 3) * (lc - 3) +
               0.12 * (d - 2) * (d - 2) + 0.3 * (e == 2 ? 0 : 1);
    }
    std::uint64_t optimum() const {
        std::uint64_t best = 0;
        for (std::uint64_t i = 1; i < space.size(); ++i)
            if (exact(i) < exact(best))
                best = i;
        return best;
    }
};

} // namespace

class TestStrategies : public QObject {
    Q_OBJECT

private slots:
    // One rule for the CLI and the workbench: the problem's Search.Name where known, else auto
    // when the budget may end early, exhaustive when the whole space is done.
    void defaultStrategy_data() {
        QTest::addColumn<QString>("searchName");
        QTest::addColumn<int>("budget"); // 0 none, 1 configs, 2 fraction 1, 3 fraction 0.5, 4 seconds
        QTest::addColumn<QString>("expected");
        QTest::addColumn<QString>("unknown");
        QTest::newRow("whole space") << "" << 0 << "exhaustive"
                                     << "";
        QTest::newRow("a count") << "" << 1 << "auto"
                                 << "";
        QTest::newRow("the whole fraction") << "" << 2 << "exhaustive"
                                            << "";
        QTest::newRow("half") << "" << 3 << "auto"
                              << "";
        QTest::newRow("a time") << "" << 4 << "auto"
                                << "";
        QTest::newRow("the problem's, an alias") << "simulated_annealing" << 1 << "annealing"
                                                 << "";
        QTest::newRow("the problem's, unknown") << "hill_climbing" << 0 << "exhaustive"
                                                << "hill_climbing";
    }

    void defaultStrategy() {
        QFETCH(QString, searchName);
        QFETCH(int, budget);
        QFETCH(QString, expected);
        QFETCH(QString, unknown);
        Budget b;
        if (budget == 1)
            b.configs = 10;
        else if (budget == 2)
            b.fraction = 1.0;
        else if (budget == 3)
            b.fraction = 0.5;
        else if (budget == 4)
            b.seconds = 60;
        std::string passedOver = "?";
        QCOMPARE(QString::fromStdString(tilescope::defaultStrategy(searchName.toStdString(), b, &passedOver)),
                 expected);
        QCOMPARE(QString::fromStdString(passedOver), unknown);
    }

    void namesAndAliases() {
        const Bowl bowl;
        QCOMPARE(canonicalStrategyName("simulated_annealing"), std::string("annealing"));
        QCOMPARE(canonicalStrategyName("genetic_algorithm"), std::string("genetic"));
        QCOMPARE(canonicalStrategyName("bayes_opt"), std::string("bayes"));
        QCOMPARE(canonicalStrategyName("bayes-prior"), std::string("bayes-prior"));
        QCOMPARE(canonicalStrategyName("auto"), autoStrategyName());
        const auto names = strategyNames();
        QVERIFY(std::find(names.begin(), names.end(), autoStrategyName()) != names.end());
        QCOMPARE(canonicalStrategyName("hill_climbing"), std::string());
        for (const std::string& name : strategyNames()) {
            QCOMPARE(canonicalStrategyName(name), name);
            QCOMPARE(makeStrategy(name, contextFor(bowl.space, 1))->name(), name);
        }
        QCOMPARE(makeStrategy("auto", contextFor(bowl.space, 1))->name(), autoStrategyName());
        try {
            makeStrategy("tabu", contextFor(bowl.space, 1));
            QFAIL("no error for an unknown strategy");
        } catch (const InputError& e) {
            QVERIFY(std::string(e.what()).find("annealing, genetic, bayes, bayes-prior") != std::string::npos);
        }
    }

    void seededStrategyGoesFirst() {
        // The first configs come first, in order (repeats and ones out of the space dropped); the
        // inner strategy waits for them, learns them and never proposes them again.
        const Bowl bowl;
        const std::uint64_t n = bowl.space.size();
        for (const char* name : {"exhaustive", "random", "genetic", "bayes"}) {
            auto s = seededStrategy(makeStrategy(name, contextFor(bowl.space, 3, 60)), {17, 5, 17, n + 4, 900}, n);
            QCOMPARE(s->name(), std::string(name));
            const std::vector<std::uint64_t> first = s->propose(8);
            QCOMPARE(first, (std::vector<std::uint64_t>{17, 5, 900}));
            QVERIFY(s->propose(8).empty()); // waiting for them
            QVERIFY(!s->done());
            std::vector<Observation> back;
            for (const std::uint64_t i : first)
                back.push_back({i, ResultStatus::Ok, bowl.exact(i), std::nullopt, false, std::nullopt});
            s->observe(back);
            std::set<std::uint64_t> seen(first.begin(), first.end());
            for (int round = 0; round < 57; ++round) {
                const std::vector<std::uint64_t> next = s->propose(1);
                QCOMPARE(next.size(), std::size_t(1));
                QVERIFY2(seen.insert(next[0]).second, name); // never a first config, never twice
                const Observation o{next[0], ResultStatus::Ok, bowl.exact(next[0]), std::nullopt, false, std::nullopt};
                s->observe(std::span<const Observation>(&o, 1));
            }
        }
    }

    void findsTheOptimum_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<bool>("objective"); // scores are minus a throughput, failures mixed in
        QTest::addColumn<int>("batch");
        for (const QString& name : kStrategies) {
            QTest::addRow("%s, time", qPrintable(name)) << name << false << 1;
            QTest::addRow("%s, objective with failures", qPrintable(name)) << name << true << 1;
            QTest::addRow("%s, batches of 4", qPrintable(name)) << name << false << 4;
        }
    }

    void findsTheOptimum() {
        QFETCH(QString, name);
        QFETCH(bool, objective);
        QFETCH(int, batch);
        const Bowl bowl;
        const std::uint64_t optimum = bowl.optimum();
        const std::uint64_t size = bowl.space.size();
        QCOMPARE(size, std::uint64_t(2584));
        const std::uint64_t budget = size * 15 / 100; // 15 % of the space
        const Evaluate evaluate = [&](std::uint64_t index) {
            Observation o;
            o.index = index;
            const double ms = bowl.exact(index) * (1 + 0.01 * noise(index, 7));
            o.score = objective ? -100.0 / ms : ms;
            // A failing region away from the optimum (a launch error, a wrong result).
            if (objective && bowl.space.at(index)[3] == 0)
                o.status = index % 2 ? ResultStatus::LaunchError : ResultStatus::WrongResult;
            return o;
        };
        int found = 0;
        std::vector<std::size_t> when;
        const int seeds = 5;
        for (int seed = 0; seed < seeds; ++seed) {
            StrategyContext context = contextFor(bowl.space, static_cast<std::uint64_t>(seed), budget);
            // The prior sees a register count that tracks the bowl and calls half of the worst
            // region unlaunchable.
            context.staticFeatures = [&](std::uint64_t index) {
                StaticFeatures f;
                const Config c = bowl.space.at(index);
                f.info.registers = 32 + 16 * c[2];
                f.occupancy = 100.0 / (1 + c[2]);
                f.launchable = !(c[2] >= 4 && c[3] >= 1);
                return std::optional<StaticFeatures>(f);
            };
            auto s = makeStrategy(name.toStdString(), context);
            const auto proposed = run(*s, evaluate, static_cast<std::size_t>(batch), budget, nullptr, optimum);
            const auto it = std::find(proposed.begin(), proposed.end(), optimum);
            if (it != proposed.end()) {
                ++found;
                when.push_back(static_cast<std::size_t>(it - proposed.begin()) + 1);
            }
        }
        QString detail;
        for (std::size_t w : when)
            detail += QString::number(w) + " ";
        qInfo("%s: optimum found in %d of %d seeds within %llu of %llu configs (after %s)", qPrintable(name), found,
              seeds, static_cast<unsigned long long>(budget), static_cast<unsigned long long>(size),
              qPrintable(detail));
        QCOMPARE(found, seeds);
    }

    void nsga2SpreadsAlongTheFront() {
        // Time and energy that disagree: energy is a second bowl centred elsewhere (A = 1, C = 0).
        // Within 10 % of the space, the front NSGA-II found covers more of the whole space's
        // hypervolume than random search's, on average over seeds.
        const Bowl bowl;
        const std::uint64_t size = bowl.space.size();
        auto energyOf = [&](std::uint64_t index) {
            const Config c = bowl.space.at(index);
            return 1 + 0.2 * (c[0] - 1.0) * (c[0] - 1.0) + 0.3 * c[2] * c[2] + 0.05 * c[1];
        };
        std::vector<std::array<double, 2>> all;
        for (std::uint64_t i = 0; i < size; ++i)
            all.push_back({bowl.exact(i), energyOf(i)});
        // The reference: the median of each (what lies beyond both counts for nothing).
        std::vector<double> times, energies;
        for (const auto& p : all) {
            times.push_back(p[0]);
            energies.push_back(p[1]);
        }
        std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
        std::nth_element(energies.begin(), energies.begin() + energies.size() / 2, energies.end());
        const std::array<double, 2> ref{times[times.size() / 2], energies[energies.size() / 2]};
        const double whole = hypervolume(all, ref);
        const std::uint64_t budget = size / 10;
        const Evaluate evaluate = [&](std::uint64_t index) {
            Observation o;
            o.index = index;
            o.score = bowl.exact(index);
            o.energy = energyOf(index);
            return o;
        };
        auto meanFraction = [&](const std::string& name) {
            double sum = 0;
            const int seeds = 8;
            for (int seed = 0; seed < seeds; ++seed) {
                auto s = makeStrategy(name, contextFor(bowl.space, static_cast<std::uint64_t>(seed), budget));
                std::vector<std::array<double, 2>> found;
                for (std::uint64_t index : run(*s, evaluate, 4, budget, nullptr, size))
                    found.push_back(all[index]);
                sum += hypervolume(found, ref) / whole;
            }
            return sum / seeds;
        };
        const double nsga2 = meanFraction("nsga2");
        const double random = meanFraction("random");
        const double genetic = meanFraction("genetic");
        qInfo("hypervolume found in %llu of %llu configs: nsga2 %.4f, random %.4f, genetic (time only) %.4f",
              static_cast<unsigned long long>(budget), static_cast<unsigned long long>(size), nsga2, random, genetic);
        QVERIFY(nsga2 > random);
        QVERIFY(nsga2 > genetic);
    }

    void contractOnRandomSpaces_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<int>("space");
        QTest::addColumn<int>("batch");
        QTest::addColumn<bool>("prior");
        int row = 0;
        for (const QString& name : kStrategies) {
            for (int space = 0; space < 6; ++space) {
                const int batch = std::vector<int>{1, 3, 16, 1, 7, 64}[static_cast<std::size_t>(space)];
                const bool prior = space % 2 == 1;
                QTest::addRow("%s, space %d, batch %d%s", qPrintable(name), space, batch, prior ? ", prior" : "")
                    << name << space + 100 * row << batch << prior;
            }
            ++row;
        }
    }

    void contractOnRandomSpaces() {
        QFETCH(QString, name);
        QFETCH(int, space);
        QFETCH(int, batch);
        QFETCH(bool, prior);
        // A random space: 2 to 5 parameters of 1 to 7 values, random conditions; drawn again while
        // it has no valid config (the empty space is tinySpaces' case), so every row runs the contract.
        std::mt19937_64 rng(static_cast<std::uint64_t>(space % 100) * 977 + 13);
        auto randomProblem = [&rng]() {
            const int paramCount = 2 + static_cast<int>(rng() % 4);
            std::vector<Parameter> params;
            const std::string names = "ABCDE";
            for (int p = 0; p < paramCount; ++p) {
                const int n = 1 + static_cast<int>(rng() % 7);
                std::string values = "[";
                std::set<int> taken; // T1 rejects a value listed twice
                for (int v = 0; v < n; ++v) {
                    const int value = rng() % 2 ? (1 << v) : v * 3 + 1;
                    if (taken.insert(value).second)
                        values += (taken.size() > 1 ? ", " : "") + std::to_string(value);
                }
                params.push_back({std::string(1, names[static_cast<std::size_t>(p)]), values + "]"});
            }
            std::vector<std::string> conditions;
            for (int k = 0; k < 1 + static_cast<int>(rng() % 3); ++k) {
                const std::string a = params[rng() % params.size()].name, b = params[rng() % params.size()].name;
                switch (rng() % 3) {
                case 0:
                    conditions.push_back(a + " + " + b + " <= " + std::to_string(8 + rng() % 40));
                    break;
                case 1:
                    conditions.push_back(a + " % 2 == 0 or " + b + " > 3");
                    break;
                default:
                    conditions.push_back(a + " * " + b + " != 4");
                    break;
                }
            }
            return makeProblem(params, conditions);
        };
        TuningProblem problem = randomProblem();
        for (int draws = 1; ConfigSpace::build(problem).size() == 0; ++draws) {
            QVERIFY2(draws < 20, "20 random spaces in a row without a valid config");
            problem = randomProblem();
        }
        const ConfigSpace cs = ConfigSpace::build(problem);
        const std::uint64_t size = cs.size();
        QVERIFY(size > 0);
        QVERIFY(size <= 20000);

        // Failures of every kind mixed in, and infinite scores that must not poison a model.
        const Evaluate evaluate = [&](std::uint64_t index) {
            Observation o;
            o.index = index;
            o.score = 1 + static_cast<double>(mix(index) % 1000) / 100.0;
            const std::uint64_t h = mix(index + 17) % 10;
            if (h == 0)
                o.status = ResultStatus::CompileError;
            else if (h == 1)
                o.status = ResultStatus::Crashed;
            else if (h == 2)
                o.status = ResultStatus::Timeout;
            else if (h == 3)
                o.status = ResultStatus::WrongResult;
            return o;
        };
        StrategyContext context =
            contextFor(cs, static_cast<std::uint64_t>(space), std::max<std::uint64_t>(1, size / 4));
        std::map<std::uint64_t, int> featureCalls;
        context.staticFeatures = [&](std::uint64_t index) -> std::optional<StaticFeatures> {
            ++featureCalls[index];
            if (index % 11 == 5)
                return std::nullopt; // does not compile
            StaticFeatures f;
            f.info.registers = static_cast<int>(index % 200);
            f.info.spillStores = index % 7 == 0 ? 256 : 0;
            f.occupancy = 50;
            return f;
        };
        auto s = makeStrategy(name.toStdString(), context);
        std::set<std::uint64_t> priorSet;
        if (prior) {
            std::vector<Observation> priors;
            for (std::uint64_t i = 0; i < size; i += 5) {
                Observation o = evaluate(i);
                o.prior = true;
                priors.push_back(o);
                priorSet.insert(i);
            }
            s->observe(priors);
        }
        bool stalled = false;
        const auto all = run(*s, evaluate, static_cast<std::size_t>(batch), size + 1, &stalled);
        QVERIFY(!stalled);
        QVERIFY(s->done());
        QVERIFY(s->propose(5).empty());
        std::set<std::uint64_t> seen = priorSet;
        for (std::uint64_t index : all) {
            QVERIFY(index < size);
            QVERIFY(cs.isValid(cs.at(index)));
            QVERIFY2(seen.insert(index).second, "a config proposed twice, or a prior one proposed");
        }
        QCOMPARE(std::uint64_t(seen.size()), size);
        for (const auto& [index, calls] : featureCalls)
            QCOMPARE(calls, 1); // cached: each config compiled at most once
        // Only the prior compiles, and it must: else "compiled at most once" above holds of nothing.
        if (name == "bayes-prior")
            QVERIFY(!featureCalls.empty());
        else
            QVERIFY(featureCalls.empty());
    }

    void tinySpaces() {
        // One config; none; and one parameter with a single value (nothing for a model to learn).
        const TuningProblem one = makeProblem({{"A", "[1, 2]"}}, {"A == 2"});
        const TuningProblem none = makeProblem({{"A", "[1, 2]"}}, {"A == 3"});
        const TuningProblem flat = makeProblem({{"A", "[4]"}, {"B", "[1, 2, 3]"}}, {});
        const ConfigSpace s1 = ConfigSpace::build(one), s0 = ConfigSpace::build(none), s3 = ConfigSpace::build(flat);
        for (const QString& name : kStrategies) {
            auto a = makeStrategy(name.toStdString(), contextFor(s1, 9));
            QVERIFY(!a->done());
            QVERIFY(a->propose(10) == std::vector<std::uint64_t>{0});
            QVERIFY(a->done());
            QVERIFY(a->propose(10).empty());
            auto b = makeStrategy(name.toStdString(), contextFor(s0, 9));
            QVERIFY(b->done());
            QVERIFY(b->propose(10).empty());
            auto c = makeStrategy(name.toStdString(), contextFor(s3, 9));
            const Evaluate evaluate = [](std::uint64_t index) {
                Observation o;
                o.index = index;
                o.score = 1.0 + static_cast<double>(index);
                return o;
            };
            const auto all = run(*c, evaluate, 1, 10);
            QCOMPARE(std::set<std::uint64_t>(all.begin(), all.end()).size(), std::size_t(3));
            QVERIFY(c->done());
        }
    }

    void reproducibleBySeed_data() {
        QTest::addColumn<QString>("name");
        for (const QString& name : kStrategies)
            QTest::newRow(qPrintable(name)) << name;
    }

    void reproducibleBySeed() {
        QFETCH(QString, name);
        const Bowl bowl;
        const Evaluate evaluate = [&](std::uint64_t index) {
            Observation o;
            o.index = index;
            o.score = bowl.exact(index) * (1 + 0.05 * noise(index, 3));
            if (index % 13 == 0)
                o.status = ResultStatus::Timeout;
            return o;
        };
        auto sequence = [&](std::uint64_t seed) {
            auto s = makeStrategy(name.toStdString(), contextFor(bowl.space, seed, 200));
            return run(*s, evaluate, 3, 150);
        };
        const auto a = sequence(42);
        QCOMPARE(a.size(), std::size_t(150));
        QVERIFY(a == sequence(42));
        QVERIFY(a != sequence(43));
    }

    void priorSkipsHopelessConfigs() {
        // Configs with odd A do not launch: with the prior they all come after every other config,
        // and each is compiled once; without it, they are mixed in.
        const TuningProblem problem =
            makeProblem({{"A", "range(0, 8)"}, {"B", "range(0, 8)"}, {"C", "[1, 2, 4, 8]"}}, {"A + B <= 12"});
        const ConfigSpace space = ConfigSpace::build(problem);
        const Evaluate evaluate = [&](std::uint64_t index) {
            Observation o;
            o.index = index;
            const Config c = space.at(index);
            o.score = 1 + std::abs(c[0] - 3.0) + std::abs(c[1] - 4.0) + c[2];
            if (c[0] % 2)
                o.status = ResultStatus::LaunchError;
            return o;
        };
        for (const char* name : {"bayes-prior", "bayes"}) {
            StrategyContext context = contextFor(space, 5, 40);
            std::map<std::uint64_t, int> calls;
            context.staticFeatures = [&](std::uint64_t index) {
                ++calls[index];
                StaticFeatures f;
                f.info.registers = 40;
                f.launchable = space.at(index)[0] % 2 == 0;
                return std::optional<StaticFeatures>(f);
            };
            auto s = makeStrategy(name, context);
            const auto all = run(*s, evaluate, 2, space.size() + 1);
            QCOMPARE(std::uint64_t(all.size()), space.size());
            std::size_t firstHopeless = all.size(), lastGood = 0;
            for (std::size_t i = 0; i < all.size(); ++i) {
                if (space.at(all[i])[0] % 2)
                    firstHopeless = std::min(firstHopeless, i);
                else
                    lastGood = i;
            }
            if (std::string(name) == "bayes-prior") {
                QVERIFY2(lastGood < firstHopeless, "a hopeless config came before a launchable one");
                for (const auto& [index, n] : calls)
                    QCOMPARE(n, 1);
            } else {
                QVERIFY(firstHopeless < lastGood);
                QVERIFY(calls.empty());
            }
        }
    }

    void gaussianProcessMatchesExplicitFormulas() {
        // Five points in two dimensions, anisotropic length scales, noise: the posterior mean and
        // variance from an explicit inverse of K + noise I, and the log marginal likelihood from
        // an explicit determinant.
        const int d = 2;
        const std::vector<double> x = {0.1, 0.2, 0.4, 0.9, 0.75, 0.3, 0.5, 0.5, 0.95, 0.05};
        const std::vector<double> y = {0.3, -1.2, 0.8, 0.1, -0.4};
        const std::size_t n = y.size();
        GaussianProcess::Hyperparameters h;
        h.lengthScales = {0.7, 1.3};
        h.signalVariance = 1.5;
        h.noiseVariance = 0.01;

        const auto matern = [&](const double* a, const double* b) {
            double r2 = 0;
            for (int i = 0; i < d; ++i) {
                const double t = (a[i] - b[i]) / h.lengthScales[static_cast<std::size_t>(i)];
                r2 += t * t;
            }
            const double r = std::sqrt(r2);
            return h.signalVariance * (1 + std::sqrt(5.0) * r + 5.0 / 3.0 * r2) * std::exp(-std::sqrt(5.0) * r);
        };
        // K + noise I, inverted by Gauss-Jordan with partial pivoting; its determinant on the way.
        std::vector<std::vector<double>> a(n, std::vector<double>(2 * n, 0));
        for (std::size_t i = 0; i < n; ++i) {
            for (std::size_t j = 0; j < n; ++j)
                a[i][j] = matern(&x[i * d], &x[j * d]) + (i == j ? h.noiseVariance : 0);
            a[i][n + i] = 1;
        }
        double det = 1;
        for (std::size_t c = 0; c < n; ++c) {
            std::size_t pivot = c;
            for (std::size_t r = c + 1; r < n; ++r)
                if (std::abs(a[r][c]) > std::abs(a[pivot][c]))
                    pivot = r;
            if (pivot != c) {
                std::swap(a[pivot], a[c]);
                det = -det;
            }
            det *= a[c][c];
            const double p = a[c][c];
            for (double& v : a[c])
                v /= p;
            for (std::size_t r = 0; r < n; ++r) {
                if (r == c)
                    continue;
                const double f = a[r][c];
                for (std::size_t k = 0; k < 2 * n; ++k)
                    a[r][k] -= f * a[c][k];
            }
        }
        const auto inverse = [&](std::size_t i, std::size_t j) { return a[i][n + j]; };
        const auto reference = [&](const double* q) {
            std::vector<double> k(n);
            for (std::size_t i = 0; i < n; ++i)
                k[i] = matern(&x[i * d], q);
            double mean = 0, quad = 0;
            for (std::size_t i = 0; i < n; ++i)
                for (std::size_t j = 0; j < n; ++j) {
                    mean += k[i] * inverse(i, j) * y[j];
                    quad += k[i] * inverse(i, j) * k[j];
                }
            return std::pair<double, double>(mean, h.signalVariance - quad);
        };
        double yKy = 0;
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t j = 0; j < n; ++j)
                yKy += y[i] * inverse(i, j) * y[j];
        const double lml = -0.5 * yKy - 0.5 * std::log(det) - 0.5 * double(n) * std::log(2 * M_PI);

        const auto close = [](double got, double want) {
            return std::abs(got - want) <= 1e-9 * std::max(1.0, std::abs(want));
        };
        const std::vector<double> queries = {0.0, 0.0, 0.5, 0.45, 1.0, 1.0, 0.1, 0.2};

        // All at once; and point by point (the incremental Cholesky), with candidates added before
        // the points (their cached predictions updated as points arrive) and after.
        GaussianProcess batch(d), incremental(d);
        batch.setData(x, y, h);
        incremental.setHyperparameters(h);
        incremental.addCandidate(std::span(queries).subspan(0, 2));
        incremental.addCandidate(std::span(queries).subspan(2, 2));
        for (std::size_t i = 0; i < n; ++i)
            incremental.add(std::span(x).subspan(i * d, d), y[i]);
        incremental.addCandidate(std::span(queries).subspan(4, 2));
        incremental.addCandidate(std::span(queries).subspan(6, 2));
        batch.addCandidate(std::span(queries).subspan(0, 2));
        batch.addCandidate(std::span(queries).subspan(2, 2));
        batch.addCandidate(std::span(queries).subspan(4, 2));
        batch.addCandidate(std::span(queries).subspan(6, 2));
        QVERIFY(close(batch.logMarginalLikelihood(), lml));
        QVERIFY(close(incremental.logMarginalLikelihood(), lml));
        for (GaussianProcess* gp : {&batch, &incremental}) {
            std::vector<double> means, variances;
            gp->predictCandidates(means, variances);
            QCOMPARE(means.size(), std::size_t(4));
            for (std::size_t q = 0; q < 4; ++q) {
                const auto [mean, variance] = reference(&queries[q * d]);
                const auto p = gp->predict(std::span(queries).subspan(q * d, d));
                QVERIFY2(close(p.mean, mean), qPrintable(QString("mean %1 vs %2").arg(p.mean).arg(mean)));
                QVERIFY2(close(p.variance, variance),
                         qPrintable(QString("var %1 vs %2").arg(p.variance).arg(variance)));
                QVERIFY(close(means[q], mean));
                QVERIFY(close(variances[q], variance));
            }
            // A training point's own variance is below the noise; the kernel is symmetric.
            QVERIFY(gp->predict(std::span(x).subspan(0, 2)).variance < h.noiseVariance);
            QVERIFY(close(gp->kernel(std::span(x).subspan(0, 2), std::span(x).subspan(2, 2)), matern(&x[0], &x[2])));
        }
        // Removing a candidate moves the last one into its slot.
        batch.removeCandidate(1);
        std::vector<double> means, variances;
        batch.predictCandidates(means, variances);
        QCOMPARE(means.size(), std::size_t(3));
        QVERIFY(close(means[1], reference(&queries[6]).first));
        // New targets, same inputs.
        std::vector<double> y2 = y;
        y2[2] = 5;
        incremental.setTargets(y2);
        QVERIFY(!close(incremental.predict(std::span(queries).subspan(2, 2)).mean, reference(&queries[2]).first));
    }

    void fittedHyperparametersExplainTheData() {
        // Samples of a smooth function of the first input only: the fit prefers a long length
        // scale for the second, and beats fixed guesses on the marginal likelihood.
        std::vector<double> x, y;
        std::mt19937_64 rng(3);
        std::uniform_real_distribution<double> u(0, 1);
        for (int i = 0; i < 60; ++i) {
            const double a = u(rng), b = u(rng);
            x.push_back(a);
            x.push_back(b);
            y.push_back(std::sin(6 * a));
        }
        double m = 0, s = 0;
        for (double v : y)
            m += v / static_cast<double>(y.size());
        for (double v : y)
            s += (v - m) * (v - m) / static_cast<double>(y.size());
        for (double& v : y)
            v = (v - m) / std::sqrt(s);
        const auto fitted = GaussianProcess::fit(2, x, y);
        QVERIFY(fitted.lengthScales[1] > 2 * fitted.lengthScales[0]);
        GaussianProcess gp(2);
        gp.setData(x, y, fitted);
        const double best = gp.logMarginalLikelihood();
        for (double l : {0.1, 0.5, 2.0}) {
            GaussianProcess::Hyperparameters guess;
            guess.lengthScales = {l, l};
            guess.noiseVariance = 0.01;
            gp.setHyperparameters(guess);
            QVERIFY(gp.logMarginalLikelihood() < best);
        }
    }
};

QTEST_GUILESS_MAIN(TestStrategies)
#include "tst_strategies.moc"
