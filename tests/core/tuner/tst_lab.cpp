// The strategy lab: the table built from a recording, the metrics on runs that can be computed by
// hand, the analytic random-search expectation against Monte Carlo, the methodology score of
// random search (about 0) and of an oracle (1), traces, and tilescope-cli lab run as a user runs it.

#include "base/error.h"
#include "exchange/configcodec.h"
#include "exchange/t4.h"
#include "model/configjson.h"
#include "space/configspace.h"
#include "spec/tuningproblem.h"
#include "tuner/objective.h"
#include "tuner/strategylab.h"

#include "clirun.h"
#include <nlohmann/json.hpp>

#include <QProcess>
#include <QTemporaryDir>

#include <QtTest>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>

using namespace tilescope;
using Json = nlohmann::ordered_json;

namespace {

const std::string kTiny = TILESCOPE_TEST_DATA "/tuning/tiny.json";

using Run = CliRun;

Run cli(const QStringList& args) {
    return runCli(args);
}

void writeFile(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
}

std::string readFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string inputError(const std::function<void()>& f) {
    try {
        f();
    } catch (const InputError& e) {
        return e.what();
    }
    return {};
}

// The time of config i in the synthetic recordings: distinct, spread, not monotonic in the index.
double timeOf(std::uint64_t i, std::uint64_t n) {
    return 0.01 * (1.0 + static_cast<double>((i * 37 + 11) % n) / static_cast<double>(n));
}

// A recording of tiny.json at shape 0. `gaps`: every 7th config failed (a compile error), and
// config 3 missing from the recording. Every recorded config took 1.5 s to compile and 0.5 s to
// benchmark.
SessionData tinyRecording(const TuningProblem& problem, const ConfigSpace& space, bool gaps) {
    SessionData d;
    d.info.kernel = problem.kernelName;
    d.info.shapeIndex = 0;
    d.info.shape = problem.shapes[0].dims;
    d.info.problemSize = {1048576};
    for (const auto& p : problem.parameters)
        d.info.parameters.push_back(p.name);
    d.info.deviceName = "NVIDIA H200";
    d.info.backend = "cuda";
    d.info.state = SessionState::Finished;
    const ConfigCodec codec(space);
    for (std::uint64_t i = 0; i < space.size(); ++i) {
        if (gaps && i == 3)
            continue;
        ResultRecord r;
        r.id = static_cast<std::int64_t>(i + 1);
        r.config = codec.toValues(space.at(i));
        r.measurement.compileSeconds = 1.5;
        r.measurement.benchmarkSeconds = 0.5;
        if (gaps && i % 7 == 6) {
            r.measurement.status = ResultStatus::CompileError;
            r.measurement.message = "error";
        } else {
            const double t = timeOf(i, space.size());
            r.measurement.status = ResultStatus::Ok;
            r.measurement.time = {t, t, t, 0, 10};
            r.measurement.staticInfo = StaticInfo{};
            r.measurement.staticInfo->registers = 32 + static_cast<int>(i % 5) * 8;
            r.occupancy = 50.0;
        }
        d.results.push_back(r);
    }
    return d;
}

std::string oracleTraces(const StrategyLab& lab, const std::string& strategy, int runs, std::size_t configs) {
    const auto& table = lab.table();
    std::vector<std::uint64_t> order(table.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](auto a, auto b) { return table[a].performance > table[b].performance; });
    order.resize(std::min(configs, order.size()));
    const ConfigCodec codec(lab.space());
    Json doc;
    doc["tool"] = "Kernel Tuner 1.0";
    doc["runs"] = Json::array();
    for (int r = 0; r < runs; ++r) {
        Json run;
        run["strategy"] = strategy;
        run["seed"] = r;
        run["configs"] = Json::array();
        for (const auto i : order)
            run["configs"].push_back(toJson(codec.toValues(lab.space().at(i))));
        doc["runs"].push_back(run);
    }
    return doc.dump();
}

} // namespace

class TestLab : public QObject {
    Q_OBJECT

private slots:
    void staticFeaturesChargeTheirCompiles() {
        // bayes-prior compiles the candidates it ranks: each config it looked at costs its recorded
        // compile time once (1.5 s here), even if it is never evaluated; an evaluated config costs
        // its benchmark time (0.5 s) on top. Without the prior, a run costs 2 s per config.
        const TuningProblem problem = TuningProblem::load(kTiny);
        const ConfigSpace space = ConfigSpace::build(problem, 0);
        const StrategyLab lab(problem, 0, space, {tinyRecording(problem, space, false)}, "rec.json");
        const std::uint64_t limit = 8;
        const LabRun plain = lab.runStrategy("bayes", 0, limit);
        QCOMPARE(plain.seconds.back(), 2.0 * double(limit));
        const LabRun prior = lab.runStrategy("bayes-prior", 0, limit);
        QCOMPARE(prior.evaluations, std::size_t(limit));
        const double compiles = (prior.seconds.back() - 0.5 * double(limit)) / 1.5;
        QVERIFY2(compiles > double(limit) && compiles <= double(space.size()),
                 qPrintable(QStringLiteral("%1 configs charged").arg(compiles)));
        QVERIFY(std::abs(compiles - std::round(compiles)) < 1e-9);
        // The same order replayed as a trace (no features asked for) costs 2 s per config.
        QCOMPARE(lab.replayOrder(prior.order, limit).seconds.back(), 2.0 * double(limit));
    }

    void expectedRandomBestByHand() {
        // {1, 2, 3}: one draw averages 2; two draws: max of (1,2), (1,3), (2,3) = 8/3; three: 3.
        const auto e = expectedRandomBest({3, 1, 2}, 5);
        QCOMPARE(e.size(), std::size_t(3));
        QVERIFY(std::abs(e[0] - 2.0) < 1e-12);
        QVERIFY(std::abs(e[1] - 8.0 / 3.0) < 1e-12);
        QVERIFY(std::abs(e[2] - 3.0) < 1e-12);
        // Zeros (failed configs) take part in the draws.
        const auto z = expectedRandomBest({0, 0, 0, 4}, 2);
        QVERIFY(std::abs(z[0] - 1.0) < 1e-12);
        QVERIFY(std::abs(z[1] - 2.0) < 1e-12); // P(the 4 among 2 of 4) = 1/2
        // A large space: k = N gives the maximum, no overflow.
        std::vector<double> big(5000);
        for (std::size_t i = 0; i < big.size(); ++i)
            big[i] = static_cast<double>((i * 7919) % 5000);
        const auto b = expectedRandomBest(big, 5000);
        QVERIFY(std::abs(b.back() - 4999.0) < 1e-6);
        QVERIFY(std::abs(b[0] - 2499.5) < 1e-6);
        for (std::size_t k = 1; k < b.size(); ++k)
            QVERIFY(b[k] >= b[k - 1] - 1e-9);
    }

    void tableFromRecording() {
        const TuningProblem problem = TuningProblem::load(kTiny);
        const ConfigSpace space = ConfigSpace::build(problem, 0);
        const std::uint64_t n = space.size();
        QVERIFY(n > 40);
        const StrategyLab lab(problem, 0, space, {tinyRecording(problem, space, true)}, "rec.json");
        const LabSpaceSummary& s = lab.summary();
        QCOMPARE(s.spaceSize, n);
        QCOMPARE(s.recorded, n - 1);
        QCOMPARE(s.missing, std::uint64_t(1));
        QCOMPARE(s.objectiveName, std::string("GB/s"));
        std::uint64_t failed = 0;
        for (std::uint64_t i = 0; i < n; ++i)
            failed += i != 3 && i % 7 == 6 ? 1 : 0;
        QCOMPARE(s.ok, n - 1 - failed);
        // The optimum: the shortest time among the ok configs; GB/s = 8 N / t.
        double bestMs = 1e9;
        std::uint64_t bestIndex = 0;
        for (std::uint64_t i = 0; i < n; ++i)
            if (i != 3 && i % 7 != 6 && timeOf(i, n) < bestMs) {
                bestMs = timeOf(i, n);
                bestIndex = i;
            }
        QCOMPARE(s.optimumIndex, bestIndex);
        QVERIFY(std::abs(s.optimum - 8.0 * 1048576 / (bestMs * 1e-3) / 1e9) < 1e-9 * s.optimum);
        QVERIFY(std::abs(s.totalSeconds - 2.0 * double(n - 1)) < 1e-9);
        const LabEntry& missing = lab.table()[3];
        QVERIFY(!missing.recorded);
        QCOMPARE(missing.status, ResultStatus::Skipped);
        QCOMPARE(missing.performance, 0.0);
        QCOMPARE(missing.seconds, 0.0);
        QCOMPARE(lab.table()[6].status, ResultStatus::CompileError);
        QVERIFY(lab.table()[0].features);
        QCOMPARE(lab.table()[0].features->info.registers, 32);
        QCOMPARE(lab.table()[0].features->occupancy, 50.0);
        // The score a strategy sees is minus the objective.
        QVERIFY(std::abs(lab.table()[0].score + lab.table()[0].performance) < 1e-12);
    }

    void exhaustiveRunByHand() {
        const TuningProblem problem = TuningProblem::load(kTiny);
        const ConfigSpace space = ConfigSpace::build(problem, 0);
        const std::uint64_t n = space.size();
        const StrategyLab lab(problem, 0, space, {tinyRecording(problem, space, true)}, "rec.json");
        const double opt = lab.summary().optimum;
        const std::uint64_t limit = n; // the whole space
        const LabRun run = lab.runStrategy("exhaustive", 0, limit);
        QCOMPARE(run.evaluations, std::size_t(n));
        // By hand: the running best of 1 / time in index order, and 2 s per recorded config.
        std::vector<double> best(n), seconds(n);
        double b = 0, t = 0;
        for (std::uint64_t i = 0; i < n; ++i) {
            const bool ok = i != 3 && i % 7 != 6;
            if (ok)
                b = std::max(b, 8.0 * 1048576 / (timeOf(i, n) * 1e-3) / 1e9);
            t += i == 3 ? 0 : 2.0;
            best[i] = b;
            seconds[i] = t;
            QVERIFY(std::abs(run.best[i] - b) < 1e-9 * opt);
            QCOMPARE(run.seconds[i], t);
            QCOMPARE(run.order[i], i);
        }
        auto firstWithin = [&](double x) {
            for (std::uint64_t k = 0; k < n; ++k)
                if (best[k] >= (1 - x) * opt * (1 - 1e-12))
                    return k + 1;
            return std::uint64_t(0);
        };
        LabOptions options;
        options.fraction = 1.0;
        const LabWindow window = lab.window(options, limit);
        const LabStrategyResult r = lab.evaluate("exhaustive", {run, run}, limit, window);
        QCOMPARE(r.within1.never, std::size_t(0));
        QCOMPARE(r.within1.evaluations.mean, double(firstWithin(0.01)));
        QCOMPARE(r.within1.seconds.mean, seconds[firstWithin(0.01) - 1]);
        QCOMPARE(r.within5.evaluations.mean, double(firstWithin(0.05)));
        QCOMPARE(r.within1.evaluations.stdev, 0.0);
        // Milestones at ceil(q N) evaluations.
        QCOMPARE(r.milestones.size(), std::size_t(5));
        for (const LabMilestone& m : r.milestones) {
            const auto k = static_cast<std::uint64_t>(std::ceil(m.percent / 100 * double(n) - 1e-9));
            QCOMPARE(m.evaluations, std::max<std::uint64_t>(1, k));
            QVERIFY(std::abs(m.fraction.mean - best[m.evaluations - 1] / opt) < 1e-12);
            QCOMPARE(m.fraction.min, m.fraction.mean);
        }
        QVERIFY(std::abs(r.finalFraction.mean - 1.0) < 1e-12);

        // A budget of 10 configs: only the milestones within it; a run cut at the limit.
        const LabRun shortRun = lab.runStrategy("exhaustive", 0, 10);
        QCOMPARE(shortRun.best.size(), std::size_t(10));
        QCOMPARE(shortRun.evaluations, std::size_t(10));
        const LabStrategyResult rs = lab.evaluate("exhaustive", {shortRun}, 10, lab.window(options, 10));
        for (const LabMilestone& m : rs.milestones)
            QVERIFY(m.evaluations <= 10);
        // Unknown strategies are refused, naming the known ones.
        const std::string error = inputError([&] { lab.runStrategy("simulated_anything", 0, 10); });
        QVERIFY2(error.find("simulated_anything") != std::string::npos && error.find("random") != std::string::npos,
                 error.c_str());
    }

    void randomExpectationMatchesMonteCarlo() {
        const TuningProblem problem = TuningProblem::load(kTiny);
        const ConfigSpace space = ConfigSpace::build(problem, 0);
        const std::uint64_t n = space.size();
        const StrategyLab lab(problem, 0, space, {tinyRecording(problem, space, true)}, "rec.json");
        std::vector<double> perfs;
        for (const auto& e : lab.table())
            perfs.push_back(e.performance);
        const std::uint64_t limit = n / 2;
        const auto expected = expectedRandomBest(perfs, limit);
        const int runs = 3000;
        std::vector<double> mean(limit, 0.0), meanSq(limit, 0.0);
        for (int r = 0; r < runs; ++r) {
            const LabRun run = lab.runStrategy("random", 1000 + r, limit);
            for (std::uint64_t k = 0; k < limit; ++k) {
                mean[k] += run.best[k] / runs;
                meanSq[k] += run.best[k] * run.best[k] / runs;
            }
        }
        for (std::uint64_t k = 0; k < limit; ++k) {
            const double sd = std::sqrt(std::max(0.0, meanSq[k] - mean[k] * mean[k]));
            const double se = sd / std::sqrt(double(runs));
            QVERIFY2(std::abs(mean[k] - expected[k]) <= 5 * se + 1e-9 * expected[k],
                     qPrintable(QString("k=%1: Monte Carlo %2, analytic %3, se %4")
                                    .arg(k + 1)
                                    .arg(mean[k])
                                    .arg(expected[k])
                                    .arg(se)));
        }
    }

    void methodologyScoreOfRandomAndOracle() {
        const TuningProblem problem = TuningProblem::load(kTiny);
        const ConfigSpace space = ConfigSpace::build(problem, 0);
        // Every config recorded, each 2 s: random draws take k * tau exactly.
        const StrategyLab lab(problem, 0, space, {tinyRecording(problem, space, false)}, "rec.json");
        for (const ScoreWindow kind : {ScoreWindow::Methodology, ScoreWindow::Budget}) {
            LabOptions options;
            options.strategies = {"random"};
            options.repeats = 400;
            options.fraction = 0.5;
            options.window = kind;
            const LabTraces traces = parseLabTraces(oracleTraces(lab, "oracle", 2, space.size()), "oracle.json", space);
            const LabReport report = lab.run(options, {traces});
            QCOMPARE(report.strategies.size(), std::size_t(2));
            const LabStrategyResult& random = report.strategies[0];
            const LabStrategyResult& oracle = report.strategies[1];
            QCOMPARE(random.name, std::string("random"));
            QCOMPARE(oracle.name, std::string("kerneltuner:oracle"));
            QCOMPARE(oracle.runs.size(), std::size_t(2));
            // Zero in expectation: within four standard errors of the mean over the runs.
            const double n = double(random.runs.size());
            QVERIFY2(std::abs(random.scoreEvals.mean) < 4 * random.scoreEvals.stdev / std::sqrt(n) + 1e-3,
                     qPrintable(QString("%1 ± %2").arg(random.scoreEvals.mean).arg(random.scoreEvals.stdev)));
            QVERIFY2(std::abs(random.score.mean) < 4 * random.score.stdev / std::sqrt(n) + 1e-3,
                     qPrintable(QString("%1 ± %2").arg(random.score.mean).arg(random.score.stdev)));
            QVERIFY(std::abs(random.score.mean) < 0.1);
            QVERIFY(random.score.stdev > 0);
            QVERIFY2(std::abs(oracle.scoreEvals.mean - 1) < 1e-12, qPrintable(QString::number(oracle.scoreEvals.mean)));
            QVERIFY2(std::abs(oracle.score.mean - 1) < 1e-12, qPrintable(QString::number(oracle.score.mean)));
            QCOMPARE(oracle.within1.evaluations.mean, 1.0);
            QCOMPARE(oracle.within1.seconds.mean, 2.0);
            QVERIFY(report.window.startEvaluations >= 1);
            QVERIFY(report.window.endEvaluations <= report.limit);
            QVERIFY(report.window.startEvaluations <= report.window.endEvaluations);
        }
        // The methodology window: 96 % of the way from the median to the optimum.
        LabOptions options;
        const LabWindow w = lab.window(options, space.size());
        const auto& s = lab.summary();
        const double target = s.optimum - 0.04 * (s.optimum - s.median);
        std::uint64_t good = 0;
        for (const auto& e : lab.table())
            good += e.performance >= target * (1 - 1e-12) ? 1 : 0;
        QCOMPARE(w.endEvaluations,
                 static_cast<std::uint64_t>(std::ceil(double(space.size() + 1) / double(good + 1) - 1e-9)));
        QCOMPARE(w.endSeconds, 2.0 * double(w.endEvaluations));
    }

    void traces() {
        const TuningProblem problem = TuningProblem::load(kTiny);
        const ConfigSpace space = ConfigSpace::build(problem, 0);
        const StrategyLab lab(problem, 0, space, {tinyRecording(problem, space, true)}, "rec.json");
        const ConfigCodec codec(space);

        // Two strategies, a repeated config (counted once), a run shorter than the budget.
        Json doc;
        doc["tool"] = "Kernel Tuner 1.0";
        Json a;
        a["strategy"] = "genetic_algorithm";
        a["seed"] = 4;
        a["configs"] = Json::array({toJson(codec.toValues(space.at(5))), toJson(codec.toValues(space.at(9))),
                                    toJson(codec.toValues(space.at(5))), toJson(codec.toValues(space.at(1)))});
        Json b;
        b["strategy"] = "dual_annealing";
        b["seed"] = 0;
        b["configs"] = Json::array({toJson(codec.toValues(space.at(2)))});
        doc["runs"] = Json::array({a, b});
        const LabTraces t = parseLabTraces(doc.dump(), "kt.json", space);
        QCOMPARE(t.prefix, std::string("kerneltuner"));
        QCOMPARE(t.runs.size(), std::size_t(2));
        QVERIFY((t.runs[0].configs == std::vector<std::uint64_t>{5, 9, 1}));
        QCOMPARE(t.runs[0].seed, std::uint64_t(4));
        QCOMPARE(t.notes.size(), std::size_t(1));
        QVERIFY(t.notes[0].find("repeats 1") != std::string::npos);

        LabOptions options;
        options.strategies = {"exhaustive"};
        options.repeats = 1;
        options.budget = 2; // configs past it are ignored
        const LabReport report = lab.run(options, {t});
        QCOMPARE(report.strategies.size(), std::size_t(3));
        QCOMPARE(report.strategies[1].name, std::string("kerneltuner:genetic_algorithm"));
        QCOMPARE(report.strategies[2].name, std::string("kerneltuner:dual_annealing"));
        QCOMPARE(report.strategies[1].source, std::string("kt.json"));
        const LabRun& ga = report.strategies[1].runs[0];
        QCOMPARE(ga.evaluations, std::size_t(2));
        QVERIFY((ga.order == std::vector<std::uint64_t>{5, 9}));
        const LabRun& da = report.strategies[2].runs[0];
        QCOMPARE(da.evaluations, std::size_t(1));
        QCOMPARE(da.best[1], da.best[0]); // flat after its end
        QCOMPARE(da.seconds[1], da.seconds[0]);
        QCOMPARE(report.strategies[2].notes.size(), std::size_t(1));
        QVERIFY(report.strategies[1].notes.empty());

        // A config not in the space: the file, the run and the config are named.
        Json bad = doc;
        bad["runs"][1]["configs"][0]["BLOCK"] = 96;
        const std::string e1 = inputError([&] { parseLabTraces(bad.dump(), "kt.json", space); });
        QVERIFY2(e1.find("kt.json") != std::string::npos && e1.find("run 1") != std::string::npos &&
                     e1.find("BLOCK=96") != std::string::npos,
                 e1.c_str());
        // A config its conditions reject (BLOCK >= 32 * NUM_WARPS).
        Json invalid = doc;
        invalid["runs"][0]["configs"][0]["BLOCK"] = 32;
        invalid["runs"][0]["configs"][0]["NUM_WARPS"] = 8;
        const std::string e2 = inputError([&] { parseLabTraces(invalid.dump(), "kt.json", space); });
        QVERIFY2(e2.find("run 0") != std::string::npos && e2.find("conditions") != std::string::npos, e2.c_str());
        // An unknown parameter, bad JSON, no runs.
        Json extra = doc;
        extra["runs"][0]["configs"][1]["TILE"] = 4;
        QVERIFY(inputError([&] { parseLabTraces(extra.dump(), "kt.json", space); }).find("TILE") != std::string::npos);
        QVERIFY(inputError([&] { parseLabTraces("{\"runs\": [", "kt.json", space); }).find("kt.json") !=
                std::string::npos);
        QVERIFY(!inputError([&] { parseLabTraces("{\"tool\": \"x\"}", "kt.json", space); }).empty());
    }

    void badOptions() {
        const TuningProblem problem = TuningProblem::load(kTiny);
        const ConfigSpace space = ConfigSpace::build(problem, 0);
        const StrategyLab lab(problem, 0, space, {tinyRecording(problem, space, true)}, "rec.json");
        LabOptions options;
        options.fraction = 1.5;
        QVERIFY(inputError([&] { lab.run(options); }).find("fraction") != std::string::npos);
        options.fraction = 0.0;
        QVERIFY(inputError([&] { lab.run(options); }).find("fraction") != std::string::npos);
        options.fraction.reset();
        options.strategies = {"nope"};
        const std::string e = inputError([&] { lab.run(options); });
        QVERIFY2(e.find("nope") != std::string::npos && e.find("exhaustive") != std::string::npos, e.c_str());
        // A recording of another shape does not match.
        const ConfigSpace space1 = ConfigSpace::build(problem, 1);
        const std::string m =
            inputError([&] { StrategyLab(problem, 1, space1, {tinyRecording(problem, space, true)}, "rec.json"); });
        QVERIFY2(m.find("does not match") != std::string::npos, m.c_str());
    }

    void cliOnSyntheticRecording() {
        QTemporaryDir dir;
        const std::string d = dir.path().toStdString();
        const TuningProblem problem = TuningProblem::load(kTiny);
        const ConfigSpace space = ConfigSpace::build(problem, 0);
        const std::string rec = d + "/rec.t4.json";
        writeFile(rec, writeT4(tinyRecording(problem, space, false)));
        const StrategyLab lab(problem, 0, space, std::filesystem::path(rec));
        const std::string traces = d + "/oracle.json";
        writeFile(traces, oracleTraces(lab, "oracle", 3, space.size()));

        const Run r =
            cli({"lab", QString::fromStdString(kTiny), "--replay", QString::fromStdString(rec), "--strategies",
                 "random,exhaustive", "--repeats", "8", "--traces", QString::fromStdString(traces), "--json",
                 QString::fromStdString(d + "/report.json"), "--curves", QString::fromStdString(d + "/curves")});
        QVERIFY2(r.status == 0, qPrintable(describe(r)));
        QVERIFY2(r.out.contains("Strategy lab") && r.out.contains("optimum") && r.out.contains("kerneltuner:oracle") &&
                     r.out.contains("score"),
                 qPrintable(describe(r)));
        // The oracle's row (one) ends with its two scores, each 1: the optimum at once.
        int oracleRows = 0;
        for (const QString& line : r.out.split('\n')) {
            if (!line.trimmed().startsWith("kerneltuner:oracle"))
                continue;
            ++oracleRows;
            const QStringList fields = line.split(' ', Qt::SkipEmptyParts);
            QVERIFY2(fields.size() >= 3, qPrintable(line));
            QCOMPARE(fields[1], QStringLiteral("3")); // runs
            QCOMPARE(fields[fields.size() - 2], QStringLiteral("1.000"));
            QCOMPARE(fields.last(), QStringLiteral("1.000"));
        }
        QVERIFY2(oracleRows == 1, qPrintable(describe(r)));
        const Json report = Json::parse(readFile(d + "/report.json"));
        QCOMPARE(report["strategies"].size(), std::size_t(3));
        QCOMPARE(report["strategies"][0]["name"].get<std::string>(), std::string("random"));
        QCOMPARE(report["strategies"][0]["runs"].get<int>(), 8);
        QCOMPARE(report["recording"]["space_size"].get<std::uint64_t>(), space.size());
        QCOMPARE(report["setup"]["evaluations_per_run"].get<std::uint64_t>(),
                 static_cast<std::uint64_t>(std::ceil(0.2 * double(space.size()) - 1e-9)));
        QVERIFY(std::abs(report["strategies"][2]["score"]["mean"].get<double>() - 1) < 1e-9);
        const std::string evals = readFile(d + "/curves/evaluations.csv");
        QVERIFY(evals.rfind("strategy,evaluations,mean,min,max\n", 0) == 0);
        QVERIFY(evals.find("\nrandom,1,") != std::string::npos);
        QVERIFY(evals.find("\nrandom-expected,1,") != std::string::npos);
        const std::string secs = readFile(d + "/curves/seconds.csv");
        QVERIFY(secs.rfind("strategy,seconds,mean,min,max\n", 0) == 0);
        QVERIFY(secs.find("\nexhaustive,") != std::string::npos);

        // JSON to stdout, nothing else there.
        const Run j = cli({"lab", QString::fromStdString(kTiny), "--replay", QString::fromStdString(rec), "--repeats",
                           "2", "--budget", "10", "--json", "-"});
        QVERIFY2(j.status == 0, qPrintable(describe(j)));
        const Json fromStdout = Json::parse(j.out.toStdString());
        QCOMPARE(fromStdout["setup"]["evaluations_per_run"].get<int>(), 10);

        // Bad input: exit status 2 and a message that says what.
        const QString problemArg = QString::fromStdString(kTiny), recArg = QString::fromStdString(rec);
        const Run unknown = cli({"lab", problemArg, "--replay", recArg, "--strategies", "random,nope"});
        QCOMPARE(unknown.status, 2);
        QVERIFY2(unknown.err.contains("unknown strategy 'nope'") && unknown.err.contains("known: exhaustive"),
                 qPrintable(describe(unknown)));
        const Run fraction = cli({"lab", problemArg, "--replay", recArg, "--fraction", "1.5"});
        QCOMPARE(fraction.status, 2);
        QVERIFY2(fraction.err.contains("fraction"), qPrintable(describe(fraction)));
        const Run shape = cli({"lab", problemArg, "--replay", recArg, "--shape", "1"});
        QCOMPARE(shape.status, 2);
        QVERIFY2(shape.err.contains("does not match"), qPrintable(describe(shape)));
        const Run missing = cli({"lab", problemArg, "--replay", QString::fromStdString(d + "/none.json")});
        QCOMPARE(missing.status, 2);
        writeFile(d + "/bad.json", "{\"tool\": \"Kernel Tuner\", \"runs\": [{\"strategy\": \"x\", \"configs\": "
                                   "[{\"BLOCK\": 96, \"ITEMS\": 1, \"NUM_WARPS\": 1, \"NUM_STAGES\": 1}]}]}");
        const Run badTrace =
            cli({"lab", problemArg, "--replay", recArg, "--traces", QString::fromStdString(d + "/bad.json")});
        QCOMPARE(badTrace.status, 2);
        QVERIFY2(badTrace.err.contains("bad.json") && badTrace.err.contains("run 0") &&
                     badTrace.err.contains("BLOCK=96"),
                 qPrintable(describe(badTrace)));
        const Run help = cli({"lab", "--help"});
        QCOMPARE(help.status, 0);
        QVERIFY(help.out.contains("--traces") && help.out.contains("--curves") && help.out.contains("--repeats"));
    }

    void cliOnCopyRecording() {
        const QString problem = QStringLiteral(TILESCOPE_SOURCE_DIR "/kernels/copy/copy.json");
        const QString rec = QStringLiteral(TILESCOPE_SOURCE_DIR "/tests/bench/data/lab/copy-h200-16M.t4.json.gz");
        QVERIFY2(QFile::exists(rec), qPrintable(rec + " is missing (it is part of the repository)"));
        const Run r = cli(
            {"lab", problem, "--replay", rec, "--shape", "1", "--strategies", "random,exhaustive", "--repeats", "5"});
        QVERIFY2(r.status == 0, qPrintable(describe(r)));
        QVERIFY2(r.out.contains("GB/s") && r.out.contains("random") && r.out.contains("exhaustive"),
                 qPrintable(describe(r)));
    }

    void timeEnergyFront() {
        // A recording of kernels/softmax on the H200 with each config's energy (--metrics energy):
        // the lab also scores the hypervolume of the time-energy front each strategy found, as a
        // fraction of the whole space's. Exhaustive has all of it once it has seen every config; the
        // fractions grow with the evaluations; a recording without energy has no such table.
        const TuningProblem problem = TuningProblem::load(TILESCOPE_SOURCE_DIR "/kernels/softmax/softmax.json");
        const ConfigSpace space = ConfigSpace::build(problem, 0);
        const std::filesystem::path rec = TILESCOPE_SOURCE_DIR "/tests/bench/data/lab/softmax-energy-h200-8192.t4.json.gz";
        const StrategyLab lab(problem, 0, space, rec);
        QVERIFY(lab.summary().hasEnergy);
        QVERIFY(lab.summary().frontHypervolume > 0);
        LabOptions options;
        options.strategies = {"random", "nsga2", "exhaustive"};
        options.repeats = 10;
        options.fraction = 1.0;
        const LabReport report = lab.run(options, {});
        for (const LabStrategyResult& r : report.strategies) {
            QCOMPARE(r.frontMilestones.size(), std::size_t(4)); // 5, 10, 20, 50 %
            double last = 0;
            for (const LabMilestone& m : r.frontMilestones) {
                QVERIFY(m.fraction.min >= 0 && m.fraction.max <= 1 + 1e-12);
                QVERIFY(m.fraction.mean >= last - 1e-12);
                last = m.fraction.mean;
            }
        }
        QVERIFY(report.strategies[1].frontMilestones[2].fraction.mean >
                report.strategies[0].frontMilestones[2].fraction.mean); // nsga2 over random at 20 %

        // With an objective per joule the optimum to find is the most frugal config.
        TuningProblem frugal = problem;
        frugal.objective = objectiveFor("energy", problem.objective);
        const StrategyLab energyLab(frugal, 0, space, rec);
        double least = 1e300;
        for (const LabEntry& e : energyLab.table())
            if (e.ok())
                least = std::min(least, *e.energy);
        QCOMPARE(*energyLab.table()[energyLab.summary().optimumIndex].energy, least);
        QVERIFY(energyLab.summary().optimumIndex != lab.summary().optimumIndex); // not the fastest

        const TuningProblem copy = TuningProblem::load(TILESCOPE_SOURCE_DIR "/kernels/copy/copy.json");
        const ConfigSpace copySpace = ConfigSpace::build(copy, 1);
        const StrategyLab plain(copy, 1, copySpace,
                                std::filesystem::path(TILESCOPE_SOURCE_DIR "/tests/bench/data/lab/copy-h200-16M.t4.json.gz"));
        QVERIFY(!plain.summary().hasEnergy);
        // An energy objective on a recording without energy says so.
        TuningProblem copyEnergy = copy;
        copyEnergy.objective = objectiveFor("energy", copy.objective);
        try {
            const StrategyLab none(copyEnergy, 1, copySpace,
                                   std::filesystem::path(TILESCOPE_SOURCE_DIR
                                                         "/tests/bench/data/lab/copy-h200-16M.t4.json.gz"));
            QFAIL("no error for an energy objective without energy");
        } catch (const InputError& e) {
            QVERIFY2(std::string(e.what()).find("the recording has none") != std::string::npos, e.what());
        }
    }
};

QTEST_GUILESS_MAIN(TestLab)
#include "tst_lab.moc"
