#include "tuner/strategylab.h"

#include "analysis/pareto.h"
#include "analysis/plausibility.h"
#include "base/error.h"
#include "base/filewrite.h"
#include "base/textformat.h"
#include "exchange/configcodec.h"
#include "exchange/recording.h"
#include "measure/replay/replaybackend.h"
#include "model/configjson.h"
#include "spec/tuningproblem.h"
#include "tuner/objective.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <numeric>
#include <sstream>
#include <unordered_set>

namespace tilescope {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kMilestones[] = {1, 2, 5, 10, 20};
constexpr double kFrontMilestones[] = {5, 10, 20, 50};

// Random draws done by recorded time t when each takes tau seconds: floor(t / tau), at most `most`.
std::uint64_t drawsBy(double t, double tau, std::size_t most) {
    const double k = std::floor(t / tau * (1 + 1e-9) + 1e-12);
    return static_cast<std::uint64_t>(std::clamp(k, 0.0, static_cast<double>(most)));
}

// Whether a best-so-far value counts as reaching `target` (a fraction of p_opt times p_opt):
// a relative slack absorbs rounding in the division.
bool reaches(double value, double target) {
    return value >= target * (1 - 1e-12);
}

// "Kernel Tuner 1.0" -> "kerneltuner": the tool's name without its version, lower case, letters
// and digits only.
std::string toolPrefix(const std::string& tool) {
    std::istringstream words(tool);
    std::string word, prefix;
    while (words >> word) {
        if (!word.empty() && (std::isdigit(static_cast<unsigned char>(word[0])) ||
                              ((word[0] == 'v' || word[0] == 'V') && word.size() > 1 &&
                               std::isdigit(static_cast<unsigned char>(word[1])))))
            break;
        for (const char c : word)
            if (std::isalnum(static_cast<unsigned char>(c)))
                prefix += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return prefix.empty() ? "trace" : prefix;
}

} // namespace

LabStat LabStat::of(const std::vector<double>& values) {
    LabStat s;
    std::vector<double> v;
    for (const double x : values)
        if (std::isfinite(x))
            v.push_back(x);
    s.count = v.size();
    if (v.empty())
        return s;
    const double n = static_cast<double>(v.size());
    s.mean = std::accumulate(v.begin(), v.end(), 0.0) / n;
    double ss = 0;
    for (const double x : v)
        ss += (x - s.mean) * (x - s.mean);
    s.stdev = v.size() > 1 ? std::sqrt(ss / (n - 1)) : 0.0;
    s.min = *std::min_element(v.begin(), v.end());
    s.max = *std::max_element(v.begin(), v.end());
    return s;
}

std::vector<double> expectedRandomBest(std::vector<double> performances, std::uint64_t maxK) {
    std::sort(performances.begin(), performances.end());
    const std::uint64_t n = performances.size();
    maxK = std::min(maxK, n);
    std::vector<double> expected(maxK, 0.0);
    for (std::uint64_t k = 1; k <= maxK; ++k) {
        // w_i = P(the best of k draws is the i-th smallest) = C(i-1, k-1) / C(N, k), from i = N down.
        const double wN = static_cast<double>(k) / static_cast<double>(n);
        double w = wN;
        double sum = w * performances[n - 1];
        for (std::uint64_t i = n; i > k; --i) {
            w *= static_cast<double>(i - k) / static_cast<double>(i - 1);
            sum += w * performances[i - 2];
            // The terms fall monotonically as i falls; what is left is at most w * i of the largest.
            if (w * static_cast<double>(i) < 1e-18 * wN)
                break;
        }
        expected[k - 1] = sum;
    }
    return expected;
}

// ---------------------------------------------------------------------------------------------
// Traces

LabTraces parseLabTraces(const std::string& text, const std::string& fileName, const ConfigSpace& space) {
    nlohmann::ordered_json doc;
    try {
        doc = nlohmann::ordered_json::parse(text);
    } catch (const nlohmann::ordered_json::parse_error& e) {
        throw InputError(fileName, "", std::string("not valid JSON: ") + e.what());
    }
    if (!doc.is_object())
        throw InputError(fileName, "", "a traces file is a JSON object with \"tool\" and \"runs\"");
    LabTraces traces;
    traces.file = fileName;
    if (doc.contains("tool")) {
        if (!doc["tool"].is_string())
            throw InputError(fileName, "/tool", "expected a string");
        traces.tool = doc["tool"].get<std::string>();
    }
    traces.prefix = toolPrefix(traces.tool);
    if (!doc.contains("runs") || !doc["runs"].is_array())
        throw InputError(fileName, "/runs", "missing: expected an array of runs");
    const ConfigCodec codec(space);
    std::size_t runIndex = 0;
    for (const auto& run : doc["runs"]) {
        const std::string where = "/runs/" + std::to_string(runIndex);
        if (!run.is_object())
            throw InputError(fileName, where, "expected an object with \"strategy\", \"seed\" and \"configs\"");
        LabTraceRun r;
        if (!run.contains("strategy") || !run["strategy"].is_string() || run["strategy"].get<std::string>().empty())
            throw InputError(fileName, where + "/strategy", "missing: expected the strategy's name");
        r.strategy = run["strategy"].get<std::string>();
        if (run.contains("seed")) {
            if (!run["seed"].is_number_integer())
                throw InputError(fileName, where + "/seed", "expected an integer");
            r.seed = run["seed"].get<std::uint64_t>();
        } else {
            r.seed = runIndex;
        }
        if (!run.contains("configs") || !run["configs"].is_array())
            throw InputError(fileName, where + "/configs", "missing: expected an array of configs");
        const std::string runName =
            "run " + std::to_string(runIndex) + " (" + r.strategy + ", seed " + std::to_string(r.seed) + ")";
        std::unordered_set<std::uint64_t> seen;
        std::size_t repeats = 0;
        std::size_t configIndex = 0;
        for (const auto& config : run["configs"]) {
            const std::string at = where + "/configs/" + std::to_string(configIndex);
            if (!config.is_object())
                throw InputError(fileName, at, runName + ": expected an object of parameter name -> value");
            const ConfigValues values = configFromJson(config);
            std::string why;
            const auto decoded = codec.fromValues(values, &why);
            std::optional<std::uint64_t> index;
            if (decoded) {
                index = space.indexOf(*decoded);
                if (!index)
                    why = "not a valid config of the space (its conditions reject it)";
            }
            if (!index)
                throw InputError(fileName, at,
                                 runName + ": config " + std::to_string(configIndex) + " (" + describeConfig(values) +
                                     ") is not in the space: " + why);
            if (seen.insert(*index).second)
                r.configs.push_back(*index);
            else
                ++repeats;
            ++configIndex;
        }
        if (repeats > 0)
            traces.notes.push_back(fileName + ": " + runName + " repeats " + std::to_string(repeats) +
                                   " config(s); each counts once, where first evaluated");
        traces.runs.push_back(std::move(r));
        ++runIndex;
    }
    if (traces.runs.empty())
        throw InputError(fileName, "/runs", "no runs");
    return traces;
}

LabTraces readLabTraces(const std::filesystem::path& path, const ConfigSpace& space) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw InputError(path.string(), "", "cannot read the traces file");
    const std::string text((std::istreambuf_iterator<char>(in)), {});
    return parseLabTraces(text, path.string(), space);
}

// ---------------------------------------------------------------------------------------------
// The lab

struct StrategyLab::State {
    const ConfigSpace* space = nullptr;
    std::vector<LabEntry> table;
    LabSpaceSummary summary;
    std::vector<double> performances;       // per space index
    mutable std::vector<double> randomBest; // P_r(k), k = 1..size(), computed as far as needed

    const std::vector<double>& expected(std::uint64_t k) const {
        if (randomBest.size() < k)
            randomBest = expectedRandomBest(performances, k);
        return randomBest;
    }
};

StrategyLab::StrategyLab(const TuningProblem& problem, std::size_t shapeIndex, const ConfigSpace& space,
                         const std::filesystem::path& recording)
    : StrategyLab(problem, shapeIndex, space, readRecording(recording), recording.string()) {}

StrategyLab::StrategyLab(const TuningProblem& problem, std::size_t shapeIndex, const ConfigSpace& space,
                         std::vector<SessionData> recording, std::string name)
    : m_state(std::make_unique<State>()) {
    State& s = *m_state;
    s.space = &space;
    if (space.size() == 0)
        throw InputError(problem.fileName, "", "the space has no valid config at this shape");

    // The replay backend picks the recorded session that matches, with the same messages as tune.
    ReplayBackend backend(std::move(recording), name);
    backend.open(problem, shapeIndex, space);
    const SessionData& data = backend.recordedData();
    const ObjectiveEvaluator objective(problem, shapeIndex);
    // Times that cannot be right are no optimum to find (the recording's bandwidth or device).
    const PlausibilityCheck plausibility(problem, shapeIndex, data.info.provenanceJson, data.info.deviceName,
                                         data.info.arch);

    const std::uint64_t n = space.size();
    s.table.assign(n, LabEntry{});
    const ConfigCodec codec(space);
    LabSpaceSummary& sum = s.summary;
    sum.recording = name;
    sum.session = data.info.deviceName;
    sum.objectiveName = objective.enabled() ? objective.name() : "";
    sum.spaceSize = n;
    for (const ResultRecord& r : data.results) {
        const auto index = codec.indexOf(r.config);
        if (!index) {
            ++sum.unmatched;
            continue;
        }
        LabEntry& e = s.table[*index];
        // As the replay backend: later results replace earlier ones, but a placeholder never
        // replaces an outcome.
        if (e.recorded && !isMeasured(r.measurement.status) && isMeasured(e.status))
            continue;
        e = LabEntry{};
        e.recorded = true;
        e.status = r.measurement.status;
        e.compileSeconds = std::max(0.0, r.measurement.compileSeconds);
        e.seconds = e.compileSeconds + std::max(0.0, r.measurement.benchmarkSeconds);
        e.features = staticFeaturesOf(r);
        if (r.ok() && !plausibility.verdict(r.config, r.timeMs()).empty())
            e.status = ResultStatus::Implausible;
        if (e.status == ResultStatus::Ok && r.timeMs() > 0) {
            e.energy = energyOf(r.measurement.metrics);
            e.timeMs = r.timeMs();
            e.score = e.timeMs;
            if (objective.enabled()) {
                const auto value = objective.value(space, space.at(*index), e.timeMs, e.energy);
                if (value && *value > 0) {
                    e.performance = *value;
                    e.score = -*value;
                }
            } else {
                e.performance = 1.0 / e.timeMs;
            }
        }
    }

    s.performances.resize(n);
    std::vector<double> okPerformances;
    for (std::uint64_t i = 0; i < n; ++i) {
        const LabEntry& e = s.table[i];
        s.performances[i] = e.performance;
        sum.recorded += e.recorded ? 1 : 0;
        sum.totalSeconds += e.seconds;
        sum.compileSeconds += e.compileSeconds;
        if (e.ok()) {
            ++sum.ok;
            okPerformances.push_back(e.performance);
            if (e.performance > sum.optimum) {
                sum.optimum = e.performance;
                sum.optimumIndex = i;
                sum.optimumMs = e.timeMs;
            }
        }
    }
    sum.missing = n - sum.recorded;
    // The time-energy front, where every config that ran has its energy.
    std::vector<std::array<double, 2>> points;
    std::vector<double> times, energies;
    sum.hasEnergy = true;
    for (const LabEntry& e : s.table) {
        if (!e.ok())
            continue;
        if (!e.energy) {
            sum.hasEnergy = false;
            break;
        }
        points.push_back({e.timeMs, *e.energy});
        times.push_back(e.timeMs);
        energies.push_back(*e.energy);
    }
    if (sum.hasEnergy && !points.empty()) {
        const auto median = [](std::vector<double> v) {
            std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
            return v[v.size() / 2];
        };
        sum.referenceMs = median(times);
        sum.referenceJ = median(energies);
        sum.frontHypervolume = hypervolume(points, {sum.referenceMs, sum.referenceJ});
    }
    sum.hasEnergy = sum.hasEnergy && sum.frontHypervolume > 0;
    sum.secondsPerConfig = sum.totalSeconds / static_cast<double>(n);
    if (okPerformances.empty() && objective.needsEnergy() &&
        std::none_of(s.table.begin(), s.table.end(), [](const LabEntry& e) { return e.energy.has_value(); }))
        throw InputError(name, "",
                         "the objective " + objective.name() +
                             " needs each config's energy, and the recording has none (record it with tune "
                             "--metrics energy on a GPU, or use a Kernel Tuner cache with nvml_energy)");
    if (okPerformances.empty())
        throw InputError(name, "",
                         "no config of the space ran correctly in the recording: there is no optimum to find");
    std::sort(okPerformances.begin(), okPerformances.end());
    const std::size_t m = okPerformances.size();
    sum.median = m % 2 ? okPerformances[m / 2] : (okPerformances[m / 2 - 1] + okPerformances[m / 2]) / 2;
    sum.optimumConfig = codec.toValues(space.at(sum.optimumIndex));
}

StrategyLab::~StrategyLab() = default;

const ConfigSpace& StrategyLab::space() const {
    return *m_state->space;
}
const std::vector<LabEntry>& StrategyLab::table() const {
    return m_state->table;
}
const LabSpaceSummary& StrategyLab::summary() const {
    return m_state->summary;
}

std::uint64_t StrategyLab::limitFor(const LabOptions& options) const {
    Budget budget;
    if (options.budget) {
        if (*options.budget == 0)
            throw InputError("", "--budget", "the budget must be at least 1 config");
        budget.configs = options.budget;
    } else {
        const double f = options.fraction.value_or(0.2);
        if (!(f > 0 && f <= 1))
            throw InputError("", "--fraction",
                             "the fraction of the space must be in (0, 1], got " + formatDouble("%.6g", f));
        budget.fraction = f;
    }
    return std::max<std::uint64_t>(1, budget.configLimit(m_state->space->size()));
}

LabRun StrategyLab::replayOrder(const std::vector<std::uint64_t>& order, std::uint64_t limit,
                                const std::vector<double>* costs) const {
    const State& s = *m_state;
    LabRun run;
    run.best.reserve(limit);
    run.seconds.reserve(limit);
    double best = 0, seconds = 0;
    for (const std::uint64_t index : order) {
        if (run.order.size() >= limit)
            break;
        if (index >= s.table.size())
            throw std::out_of_range("StrategyLab: config index out of the space");
        const LabEntry& e = s.table[index];
        best = std::max(best, e.performance);
        seconds += costs && run.order.size() < costs->size() ? (*costs)[run.order.size()] : e.seconds;
        run.order.push_back(index);
        run.best.push_back(best);
        run.seconds.push_back(seconds);
    }
    run.evaluations = run.order.size();
    run.best.resize(limit, best);
    run.seconds.resize(limit, seconds);
    return run;
}

LabRun StrategyLab::runStrategy(const std::string& name, std::uint64_t seed, std::uint64_t limit,
                                std::size_t batch) const {
    const State& s = *m_state;
    StrategyContext context;
    context.space = s.space;
    context.seed = seed;
    context.budget.configs = limit;
    context.configLimit = limit;
    // Static features come from the recording, but a real session compiles the config to learn
    // them: its recorded compile time is charged once, to the next evaluation, and not again when
    // the config is evaluated (the compile cache has it).
    std::vector<char> compiled(s.table.size(), 0);
    double compilePending = 0;
    context.staticFeatures = [&s, &compiled, &compilePending](std::uint64_t index) -> std::optional<StaticFeatures> {
        if (index >= s.table.size())
            return std::nullopt;
        if (!compiled[index]) {
            compiled[index] = 1;
            compilePending += s.table[index].compileSeconds;
        }
        return s.table[index].features;
    };
    std::vector<double> costs;
    const std::unique_ptr<Strategy> strategy = makeStrategy(name, context);

    std::vector<std::uint64_t> order;
    order.reserve(limit);
    std::vector<char> seen(s.table.size(), 0);
    std::string note;
    std::vector<Observation> observations;
    batch = std::max<std::size_t>(1, batch);
    while (order.size() < limit) {
        if (strategy->done()) {
            note = "the strategy had nothing more to propose after " + std::to_string(order.size()) + " configs";
            break;
        }
        std::vector<std::uint64_t> proposed =
            strategy->propose(static_cast<std::size_t>(std::min<std::uint64_t>(batch, limit - order.size())));
        if (proposed.empty()) {
            note = "the strategy proposed nothing more after " + std::to_string(order.size()) + " configs";
            break;
        }
        observations.clear();
        for (const std::uint64_t index : proposed) {
            if (order.size() >= limit)
                break;
            if (index >= s.table.size() || seen[index])
                throw std::logic_error("strategy '" + name + "' proposed config " + std::to_string(index) +
                                       (index >= s.table.size() ? ", outside the space" : " twice"));
            seen[index] = 1;
            order.push_back(index);
            const LabEntry& e = s.table[index];
            costs.push_back(e.seconds - (compiled[index] ? e.compileSeconds : 0) + compilePending);
            compiled[index] = 1;
            compilePending = 0;
            Observation o;
            o.index = index;
            o.status = e.status;
            o.score = e.score;
            o.features = e.features;
            o.energy = e.energy;
            observations.push_back(o);
        }
        strategy->observe(observations);
    }
    LabRun run = replayOrder(order, limit, &costs);
    run.seed = seed;
    run.label = "seed " + std::to_string(seed);
    run.note = note;
    return run;
}

LabWindow StrategyLab::window(const LabOptions& options, std::uint64_t limit) const {
    const LabSpaceSummary& sum = m_state->summary;
    const std::uint64_t n = sum.spaceSize;
    LabWindow w;
    w.kind = options.window;
    w.cutoffStart = options.cutoffStart;
    w.cutoffEnd = options.cutoffEnd;
    w.timePoints = std::max<std::size_t>(1, options.timePoints);
    // Expected draws without replacement until a config within the cutoff.
    auto drawsTo = [&](double cutoff) -> std::uint64_t {
        const double target = sum.optimum - (1 - cutoff) * (sum.optimum - sum.median);
        std::uint64_t good = 0;
        for (const double p : m_state->performances)
            good += p > 0 && reaches(p, target) ? 1 : 0;
        const double k = std::ceil(static_cast<double>(n + 1) / static_cast<double>(good + 1) - 1e-9);
        return static_cast<std::uint64_t>(std::max(1.0, k));
    };
    if (options.window == ScoreWindow::Budget) {
        w.startEvaluations = 1;
        w.endEvaluations = limit;
    } else {
        if (!(options.cutoffStart >= 0 && options.cutoffStart < options.cutoffEnd && options.cutoffEnd <= 1))
            throw InputError("", "", "the methodology's cutoff percentiles must satisfy 0 <= start < end <= 1");
        w.startEvaluations = drawsTo(options.cutoffStart);
        w.endEvaluations = drawsTo(options.cutoffEnd);
        if (w.endEvaluations > limit) {
            w.endEvaluations = limit;
            w.clamped = true;
        }
        w.startEvaluations = std::min(w.startEvaluations, w.endEvaluations);
    }
    w.startSeconds = static_cast<double>(w.startEvaluations) * sum.secondsPerConfig;
    w.endSeconds = static_cast<double>(w.endEvaluations) * sum.secondsPerConfig;
    return w;
}

LabStrategyResult StrategyLab::evaluate(std::string name, std::vector<LabRun> runs, std::uint64_t limit,
                                        const LabWindow& window) const {
    const State& s = *m_state;
    const LabSpaceSummary& sum = s.summary;
    const double opt = sum.optimum;
    const std::uint64_t n = sum.spaceSize;
    const std::vector<double>& pr = s.expected(std::min(limit, n));

    LabStrategyResult r;
    r.name = std::move(name);

    for (const double q : kMilestones) {
        const auto k = static_cast<std::uint64_t>(std::max(1.0, std::ceil(q / 100 * static_cast<double>(n) - 1e-9)));
        if (k > limit)
            continue;
        LabMilestone m;
        m.percent = q;
        m.evaluations = k;
        std::vector<double> values;
        for (const LabRun& run : runs)
            values.push_back(run.best[k - 1] / opt);
        m.fraction = LabStat::of(values);
        r.milestones.push_back(m);
    }
    if (sum.hasEnergy) {
        for (const double q : kFrontMilestones) {
            const auto k =
                static_cast<std::uint64_t>(std::max(1.0, std::ceil(q / 100 * static_cast<double>(n) - 1e-9)));
            if (k > limit)
                continue;
            LabMilestone m;
            m.percent = q;
            m.evaluations = k;
            std::vector<double> values;
            for (const LabRun& run : runs) {
                std::vector<std::array<double, 2>> found;
                for (std::size_t i = 0; i < run.order.size() && i < k; ++i) {
                    const LabEntry& e = s.table[run.order[i]];
                    if (e.ok() && e.energy)
                        found.push_back({e.timeMs, *e.energy});
                }
                values.push_back(hypervolume(found, {sum.referenceMs, sum.referenceJ}) / sum.frontHypervolume);
            }
            m.fraction = LabStat::of(values);
            r.frontMilestones.push_back(m);
        }
    }

    auto target = [&](double tolerance) {
        LabTarget t;
        t.tolerance = tolerance;
        std::vector<double> evals, secs;
        for (const LabRun& run : runs) {
            const auto it = std::find_if(run.best.begin(), run.best.end(),
                                         [&](double b) { return reaches(b, (1 - tolerance) * opt); });
            if (it == run.best.end()) {
                ++t.never;
                continue;
            }
            const auto k = static_cast<std::size_t>(it - run.best.begin());
            evals.push_back(static_cast<double>(k + 1));
            secs.push_back(run.seconds[k]);
        }
        t.evaluations = LabStat::of(evals);
        t.seconds = LabStat::of(secs);
        return t;
    };
    r.within1 = target(0.01);
    r.within5 = target(0.05);

    // The methodology score per run, on both axes.
    const double tau = sum.secondsPerConfig;
    const std::uint64_t k0 = window.startEvaluations, k1 = std::min(window.endEvaluations, limit);
    std::vector<double> scoresEvals, scoresTime, finals;
    for (const LabRun& run : runs) {
        finals.push_back(run.best[limit - 1] / opt);
        double total = 0;
        std::size_t points = 0;
        for (std::uint64_t k = k0; k <= k1; ++k) {
            const double base = pr[k - 1];
            if (opt - base <= 1e-12 * opt)
                continue;
            total += (run.best[k - 1] - base) / (opt - base);
            ++points;
        }
        scoresEvals.push_back(points ? total / static_cast<double>(points) : kNaN);

        if (!(tau > 0)) {
            scoresTime.push_back(kNaN);
            continue;
        }
        total = 0;
        points = 0;
        const std::size_t count = std::max<std::size_t>(1, window.timePoints);
        const double t0 = window.startSeconds, t1 = window.endSeconds;
        for (std::size_t j = 0; j < count; ++j) {
            const double t = count == 1 || t1 <= t0 ? t0 : t0 + (t1 - t0) * static_cast<double>(j) / double(count - 1);
            const auto done = static_cast<std::size_t>(
                std::upper_bound(run.seconds.begin(), run.seconds.end(), t * (1 + 1e-9) + 1e-12) - run.seconds.begin());
            const double best = done > 0 ? run.best[done - 1] : 0.0;
            const std::uint64_t kk = drawsBy(t, tau, pr.size());
            const double base = kk > 0 ? pr[kk - 1] : 0.0;
            if (opt - base <= 1e-12 * opt)
                continue;
            total += (best - base) / (opt - base);
            ++points;
        }
        scoresTime.push_back(points ? total / static_cast<double>(points) : kNaN);
    }
    r.score = LabStat::of(scoresTime);
    r.scoreEvals = LabStat::of(scoresEvals);
    r.finalFraction = LabStat::of(finals);

    std::size_t shortRuns = 0, fewest = limit;
    for (const LabRun& run : runs)
        if (run.evaluations < limit) {
            ++shortRuns;
            fewest = std::min<std::size_t>(fewest, run.evaluations);
        }
    if (shortRuns > 0)
        r.notes.push_back(std::to_string(shortRuns) + " of " + std::to_string(runs.size()) +
                          " run(s) evaluated fewer configs than the budget of " + std::to_string(limit) +
                          " (fewest: " + std::to_string(fewest) + "); their curves stay flat after their end");
    r.runs = std::move(runs);
    return r;
}

LabReport StrategyLab::run(const LabOptions& options, const std::vector<LabTraces>& traces) const {
    const auto started = std::chrono::steady_clock::now();
    const State& s = *m_state;
    LabReport report;
    report.space = s.summary;
    report.limit = limitFor(options);
    if (options.repeats == 0)
        throw InputError("", "--repeats", "at least one run per strategy is needed");
    if (options.batch == 0)
        throw InputError("", "--batch", "the batch must be at least 1 config");
    report.repeats = options.repeats;
    report.seed = options.seed;
    report.batch = options.batch;
    if (options.budget)
        report.budget = std::to_string(report.limit) + " configs";
    else
        report.budget = formatDouble("%.6g", options.fraction.value_or(0.2) * 100) + " % of the space (" +
                        std::to_string(report.limit) + " configs)";
    report.window = window(options, report.limit);

    const std::vector<double>& pr = s.expected(report.limit);
    for (std::size_t k = 0; k < report.limit && k < pr.size(); ++k)
        report.randomExpected.push_back(pr[k] / s.summary.optimum);

    // Which strategies: canonical names, each once.
    std::vector<std::string> names;
    const std::string known = joined(strategyNames());
    if (options.strategies.empty()) {
        for (const auto& n : strategyNames())
            if (n != "exhaustive")
                names.push_back(n);
    } else {
        for (const auto& given : options.strategies) {
            const std::string canonical = canonicalStrategyName(given);
            if (canonical.empty())
                throw InputError("", "--strategies", "unknown strategy '" + given + "' (known: " + known + ")");
            if (std::find(names.begin(), names.end(), canonical) == names.end())
                names.push_back(canonical);
        }
    }

    std::size_t total = names.size() * options.repeats;
    for (const auto& t : traces)
        total += t.runs.size();
    std::size_t done = 0;
    auto tick = [&](const std::string& what) {
        ++done;
        if (options.progress)
            options.progress(done, total, what);
        if (options.cancel && options.cancel->load())
            throw Cancelled();
    };

    for (const std::string& name : names) {
        std::vector<LabRun> runs;
        for (std::size_t r = 0; r < options.repeats; ++r) {
            runs.push_back(runStrategy(name, options.seed + r, report.limit, options.batch));
            tick(name);
        }
        report.strategies.push_back(evaluate(name, std::move(runs), report.limit, report.window));
    }

    for (const LabTraces& t : traces) {
        std::vector<std::string> order;
        std::map<std::string, std::vector<LabRun>> byStrategy;
        for (const LabTraceRun& tr : t.runs) {
            if (!byStrategy.count(tr.strategy))
                order.push_back(tr.strategy);
            LabRun run = replayOrder(tr.configs, report.limit);
            run.seed = tr.seed;
            run.label = "seed " + std::to_string(tr.seed);
            if (tr.configs.size() < report.limit)
                run.note = "the trace has " + std::to_string(tr.configs.size()) + " configs, fewer than the budget";
            byStrategy[tr.strategy].push_back(std::move(run));
            tick(t.prefix + ":" + tr.strategy);
        }
        for (const std::string& strategy : order) {
            LabStrategyResult r =
                evaluate(t.prefix + ":" + strategy, std::move(byStrategy[strategy]), report.limit, report.window);
            r.source = t.file;
            report.strategies.push_back(std::move(r));
        }
        report.notes.insert(report.notes.end(), t.notes.begin(), t.notes.end());
    }

    if (s.summary.missing > 0)
        report.notes.push_back(std::to_string(s.summary.missing) + " config(s) of the space are missing from the " +
                               "recording; they count as failed observations");
    if (!(s.summary.secondsPerConfig > 0))
        report.notes.push_back("the recording has no compile or benchmark times: the time-based figures are "
                               "undefined");
    if (report.window.clamped)
        report.notes.push_back("the methodology's window ends past the budget; it is cut at the budget (" +
                               std::to_string(report.limit) + " configs)");
    report.wallSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return report;
}

// ---------------------------------------------------------------------------------------------
// Output

namespace {

nlohmann::ordered_json statJson(const LabStat& s) {
    nlohmann::ordered_json j;
    auto v = [](double x) { return std::isfinite(x) ? nlohmann::ordered_json(x) : nlohmann::ordered_json(nullptr); };
    j["mean"] = v(s.mean);
    j["stdev"] = v(s.stdev);
    j["min"] = v(s.min);
    j["max"] = v(s.max);
    j["count"] = s.count;
    return j;
}

nlohmann::ordered_json targetJson(const LabTarget& t) {
    nlohmann::ordered_json j;
    j["tolerance"] = t.tolerance;
    j["evaluations"] = statJson(t.evaluations);
    j["seconds"] = statJson(t.seconds);
    j["never"] = t.never;
    return j;
}

std::string csvField(const std::string& text) {
    if (text.find_first_of(",\"\n") == std::string::npos)
        return text;
    std::string quoted = "\"";
    for (const char c : text)
        quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
    return quoted + "\"";
}

} // namespace

std::string labReportJson(const LabReport& report) {
    using Json = nlohmann::ordered_json;
    const LabSpaceSummary& s = report.space;
    Json j;
    Json rec;
    rec["file"] = s.recording;
    rec["device"] = s.session;
    rec["objective"] = s.objectiveName.empty() ? "1/ms" : s.objectiveName;
    rec["space_size"] = s.spaceSize;
    rec["recorded"] = s.recorded;
    rec["missing"] = s.missing;
    rec["unmatched"] = s.unmatched;
    rec["ok"] = s.ok;
    rec["optimum"] = s.optimum;
    rec["optimum_ms"] = s.optimumMs;
    rec["optimum_index"] = s.optimumIndex;
    rec["optimum_config"] = toJson(s.optimumConfig);
    rec["median"] = s.median;
    rec["recorded_seconds"] = s.totalSeconds;
    rec["seconds_per_config"] = s.secondsPerConfig;
    rec["compile_seconds_per_config"] = s.compileSeconds / static_cast<double>(std::max<std::uint64_t>(1, s.spaceSize));
    j["recording"] = rec;
    Json setup;
    setup["budget"] = report.budget;
    setup["evaluations_per_run"] = report.limit;
    setup["repeats"] = report.repeats;
    setup["seed"] = report.seed;
    setup["batch"] = report.batch;
    j["setup"] = setup;
    Json w;
    w["kind"] = report.window.kind == ScoreWindow::Methodology ? "methodology" : "budget";
    w["cutoff_start"] = report.window.cutoffStart;
    w["cutoff_end"] = report.window.cutoffEnd;
    w["start_evaluations"] = report.window.startEvaluations;
    w["end_evaluations"] = report.window.endEvaluations;
    w["start_seconds"] = report.window.startSeconds;
    w["end_seconds"] = report.window.endSeconds;
    w["clamped_to_budget"] = report.window.clamped;
    j["score_window"] = w;
    Json rows = Json::array();
    for (const LabStrategyResult& r : report.strategies) {
        Json row;
        row["name"] = r.name;
        if (!r.source.empty())
            row["source"] = r.source;
        row["runs"] = r.runs.size();
        Json ms = Json::array();
        for (const LabMilestone& m : r.milestones) {
            Json mj;
            mj["percent"] = m.percent;
            mj["evaluations"] = m.evaluations;
            mj["fraction_of_optimum"] = statJson(m.fraction);
            ms.push_back(mj);
        }
        row["milestones"] = ms;
        if (!r.frontMilestones.empty()) {
            Json fronts = Json::array();
            for (const LabMilestone& m : r.frontMilestones)
                fronts.push_back(Json{{"percent", m.percent},
                                      {"evaluations", m.evaluations},
                                      {"fraction_of_front_hypervolume", statJson(m.fraction)}});
            row["front_milestones"] = fronts;
        }
        row["within_1_percent"] = targetJson(r.within1);
        row["within_5_percent"] = targetJson(r.within5);
        row["score"] = statJson(r.score);
        row["score_evaluations"] = statJson(r.scoreEvals);
        row["final_fraction_of_optimum"] = statJson(r.finalFraction);
        Json runs = Json::array();
        for (const LabRun& run : r.runs) {
            Json rj;
            rj["seed"] = run.seed;
            rj["evaluations"] = run.evaluations;
            rj["final_fraction_of_optimum"] = run.best.empty() ? 0.0 : run.best.back() / s.optimum;
            rj["recorded_seconds"] = run.seconds.empty() ? 0.0 : run.seconds.back();
            if (!run.note.empty())
                rj["note"] = run.note;
            runs.push_back(rj);
        }
        row["per_run"] = runs;
        if (!r.notes.empty())
            row["notes"] = r.notes;
        rows.push_back(row);
    }
    j["strategies"] = rows;
    j["random_expected_fraction"] = report.randomExpected;
    j["notes"] = report.notes;
    j["wall_seconds"] = report.wallSeconds;
    return j.dump(2);
}

void writeLabCurves(const LabReport& report, const std::filesystem::path& directory) {
    std::error_code ec;
    std::filesystem::create_directories(directory, ec);
    if (ec)
        throw InputError(directory.string(), "", "cannot create the folder: " + ec.message());
    const double opt = report.space.optimum;
    const double tau = report.space.secondsPerConfig;
    auto line = [](std::ostream& out, const std::string& name, double x, double mean, double lo, double hi) {
        char buf[160];
        std::snprintf(buf, sizeof buf, ",%.9g,%.6f,%.6f,%.6f\n", x, mean, lo, hi);
        out << csvField(name) << buf;
    };

    // Each file whole or not at all (an old one stays as it was when writing fails).
    std::ostringstream evals;
    evals << "strategy,evaluations,mean,min,max\n";
    for (const LabStrategyResult& r : report.strategies)
        for (std::uint64_t k = 1; k <= report.limit; ++k) {
            double sum = 0, lo = 1e300, hi = -1e300;
            for (const LabRun& run : r.runs) {
                const double f = run.best[k - 1] / opt;
                sum += f;
                lo = std::min(lo, f);
                hi = std::max(hi, f);
            }
            if (!r.runs.empty())
                line(evals, r.name, double(k), sum / double(r.runs.size()), lo, hi);
        }
    for (std::size_t k = 0; k < report.randomExpected.size(); ++k)
        line(evals, "random-expected", double(k + 1), report.randomExpected[k], report.randomExpected[k],
             report.randomExpected[k]);
    writeFileAtomically(directory / "evaluations.csv", evals.str());

    std::ostringstream secs;
    secs << "strategy,seconds,mean,min,max\n";
    double tMax = 0;
    for (const LabStrategyResult& r : report.strategies)
        for (const LabRun& run : r.runs)
            if (!run.seconds.empty())
                tMax = std::max(tMax, run.seconds.back());
    constexpr int kPoints = 200;
    if (tMax > 0) {
        for (const LabStrategyResult& r : report.strategies)
            for (int j = 1; j <= kPoints; ++j) {
                const double t = tMax * j / kPoints;
                double sum = 0, lo = 1e300, hi = -1e300;
                for (const LabRun& run : r.runs) {
                    const auto done = static_cast<std::size_t>(
                        std::upper_bound(run.seconds.begin(), run.seconds.end(), t * (1 + 1e-9)) - run.seconds.begin());
                    const double f = done > 0 ? run.best[done - 1] / opt : 0.0;
                    sum += f;
                    lo = std::min(lo, f);
                    hi = std::max(hi, f);
                }
                if (!r.runs.empty())
                    line(secs, r.name, t, sum / double(r.runs.size()), lo, hi);
            }
        if (tau > 0 && !report.randomExpected.empty())
            for (int j = 1; j <= kPoints; ++j) {
                const double t = tMax * j / kPoints;
                const std::uint64_t k = drawsBy(t, tau, report.randomExpected.size());
                const double f = k > 0 ? report.randomExpected[k - 1] : 0.0;
                line(secs, "random-expected", t, f, f, f);
            }
    }
    writeFileAtomically(directory / "seconds.csv", secs.str());
}

} // namespace tilescope
