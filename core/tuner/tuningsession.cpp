#include "tuner/tuningsession.h"

#include "analysis/clocks.h"
#include "analysis/confidence.h"
#include "analysis/inertcheck.h"
#include "analysis/plausibility.h"
#include "analysis/staticanalysis.h"
#include "analysis/verificationsplit.h"
#include "base/error.h"
#include "base/sha256.h"
#include "exchange/configcodec.h"
#include "spec/tuningproblem.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <deque>
#include <fstream>
#include <future>
#include <random>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

namespace tilescope {

namespace {
using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
}

std::string formatSeconds(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", s);
    return buf;
}
} // namespace

// ObjectiveEvaluator

struct ObjectiveEvaluator::Impl {
    bool enabled = false;
    std::string name;
    expr::Expression count;
    double scale = 1;
    expr::ValueList storage;
    std::vector<expr::Value> slots;
    std::size_t parameters = 0;
};

ObjectiveEvaluator::ObjectiveEvaluator(const TuningProblem& problem, std::size_t shapeIndex)
    : m_impl(std::make_unique<Impl>()) {
    if (!problem.objective || problem.objective->count.empty())
        return;
    Impl& d = *m_impl;
    d.name = problem.objective->name.empty() ? "objective" : problem.objective->name;
    d.scale = problem.objective->scale > 0 ? problem.objective->scale : 1;
    try {
        d.count = expr::Expression::compile(problem.objective->count, problem.scope());
    } catch (const expr::ExprError& e) {
        throw InputError(problem.fileName, "/Tilescope/Objective/Count", e.what());
    }
    d.slots = problem.shapeSlots(shapeIndex, d.storage);
    d.parameters = problem.parameters.size();
    d.enabled = true;
}

ObjectiveEvaluator::~ObjectiveEvaluator() = default;
bool ObjectiveEvaluator::enabled() const {
    return m_impl->enabled;
}
const std::string& ObjectiveEvaluator::name() const {
    return m_impl->name;
}

std::optional<double> ObjectiveEvaluator::value(const ConfigSpace& space, const Config& config, double timeMs) const {
    const Impl& d = *m_impl;
    if (!d.enabled || !(timeMs > 0))
        return std::nullopt;
    std::vector<expr::Value> slots = d.slots;
    for (std::size_t p = 0; p < d.parameters && p < config.size(); ++p)
        slots[p] = space.value(config, static_cast<int>(p));
    expr::Value out;
    expr::EvalStatus status;
    if (!d.count.tryEvaluate(slots.data(), out, status) || !out.isNumber())
        return std::nullopt;
    const double count = out.kind == expr::Kind::Float ? out.f : static_cast<double>(out.i);
    return count / (timeMs * 1e-3) / d.scale;
}

// TuningSession

TuningSession::TuningSession(const TuningProblem& problem, Backend& backend, ResultStore& store, SessionOptions options,
                             SessionEvents events, CompileService* compiler)
    : m_problem(problem)
    , m_backend(backend)
    , m_store(store)
    , m_options(std::move(options))
    , m_events(std::move(events))
    , m_compiler(compiler) {}

TuningSession::~TuningSession() = default;

void TuningSession::cancel() {
    m_cancel.store(true);
}
bool TuningSession::cancelled() const {
    return m_cancel.load();
}

// Everything of one run(): the pipeline's state.
struct TuningSession::Run {
    TuningSession& self;
    const TuningProblem& problem;
    const SessionOptions& options;
    ConfigSpace space;
    BackendInfo backend;
    std::unique_ptr<ConfigCodec> codec;
    std::unique_ptr<ObjectiveEvaluator> objective;
    std::unique_ptr<StaticAnalyzer> analyzer;
    std::optional<ArchLimits> limits;
    std::vector<std::string> archs; // what each config is compiled for (sessionArchs)
    std::string arch;               // the first of them: static analysis and limits
    bool compiling = false;

    SessionInfo info;
    std::int64_t sessionId = 0;
    bool resumed = false;
    std::uint64_t priorResults = 0;
    std::unique_ptr<Strategy> strategy;

    std::unordered_set<std::uint64_t> done;         // configs with a final result
    std::unordered_set<std::uint64_t> placeholders; // configs whose stored result is Skipped (the store replaces it)
    SessionProgress progress;
    Clock::time_point start = Clock::now();
    std::string stopReason;
    std::vector<std::pair<double, double>> okTimes; // this run's Ok results: (median ms, relative spread)
    std::optional<Roofline> roofline;               // of the best so far (SessionOptions::earlyStop)
    std::vector<Remeasurement> remeasured;
    std::string confirmation;
    // Medians below what a config's outputs take to write (null: the problem cannot be planned).
    std::unique_ptr<PlausibilityCheck> plausibility;
    std::optional<ResultRecord> fastestImplausible; // of the session, prior runs included

    // The first results of this run, while they all fail the same way (see SystematicFailure).
    struct FailureWatch {
        bool active = true;
        ResultStatus status = ResultStatus::Ok;
        std::string message;
        std::vector<Config> configs;
        std::size_t probed = 0;    // of them, configs compiled only to see whether they fail too
        std::size_t nextCheck = 5; // doubles after each check that did not stop the run
    };
    FailureWatch watch;
    // Set when the run gives up on the compiles it queued: those not started yet come back Cancelled.
    std::shared_ptr<std::atomic<bool>> abandonCompiles = std::make_shared<std::atomic<bool>>(false);

    struct Pending {
        std::uint64_t index = 0;
        Config config;
        std::future<CompileResult> future;
        std::optional<CompileResult> compiled;
        // The compiles for the session's further archs (devices of another kind), in their order.
        std::vector<std::future<CompileResult>> otherFutures;
        std::vector<CompileResult> others;
        std::optional<ConfigAnalysis> analysis;

        // Waits for its compiles.
        void collect() {
            if (future.valid())
                compiled = future.get();
            for (auto& f : otherFutures)
                others.push_back(f.get());
            otherFutures.clear();
        }
    };
    std::deque<Pending> queue;

    Run(TuningSession& s, ConfigSpace builtSpace)
        : self(s)
        , problem(s.m_problem)
        , options(s.m_options)
        , space(std::move(builtSpace)) {}

    bool timeUp() const {
        if (!options.budget.seconds)
            return false;
        return (backend.simulated ? progress.recordedSeconds : secondsSince(start)) >= *options.budget.seconds;
    }

    void updateRates() {
        progress.elapsedSeconds = secondsSince(start);
        progress.rate =
            progress.elapsedSeconds > 0 ? static_cast<double>(progress.thisRun) / progress.elapsedSeconds : 0;
        progress.etaSeconds = progress.rate > 0 && progress.total >= progress.done
                                  ? static_cast<double>(progress.total - progress.done) / progress.rate
                                  : -1;
    }

    Observation observationOf(const ResultRecord& r, std::uint64_t index, bool prior) const {
        Observation o;
        o.index = index;
        o.status = r.status();
        o.score = r.objective ? -*r.objective : r.timeMs();
        o.prior = prior;
        o.features = staticFeaturesOf(r);
        return o;
    }

    void count(const ResultRecord& r, int sign) {
        auto& n = progress.counts.byStatus[static_cast<std::size_t>(r.status())];
        n = sign > 0 ? n + 1 : n - 1;
        progress.counts.total = sign > 0 ? progress.counts.total + 1 : progress.counts.total - 1;
    }

    // Stores a result and tells everyone.
    void record(ResultRecord r, std::uint64_t index) {
        // Compile logs, the worker's words and recordings pass here: no NUL or control bytes.
        r.measurement.message = cleanMessage(r.measurement.message);
        r.log = cleanMessage(r.log);
        noteImplausible(r);
        r.sessionId = sessionId;
        r.spaceIndex = index;
        if (r.recordedAt.empty())
            r.recordedAt = nowIso8601();
        r.id = self.m_store.append(sessionId, r);
        if (r.measurement.deviceState)
            deviceStates.add(*r.measurement.deviceState);
        ++progress.thisRun;
        if (placeholders.erase(index) > 0) {
            ResultRecord replaced;
            replaced.measurement.status = ResultStatus::Skipped;
            count(replaced, -1);
        }
        if (r.status() == ResultStatus::Skipped)
            placeholders.insert(index);
        count(r, +1);
        watchFailure(r, index);
        progress.recordedSeconds += r.measurement.compileSeconds + r.measurement.benchmarkSeconds;
        if (isMeasured(r.status()))
            if (done.insert(index).second)
                ++progress.done;
        const bool better = r.ok() && (!progress.best || ranksBefore(r, *progress.best));
        if (better) {
            progress.best = r;
            roofline.reset();
        }
        if (r.ok() && r.timeMs() > 0)
            okTimes.emplace_back(r.timeMs(), r.measurement.time.stdevMs / r.timeMs());
        const Observation o = observationOf(r, index, false);
        strategy->observe(std::span<const Observation>(&o, 1));
        if (self.m_events.result)
            self.m_events.result(r);
        if (better && self.m_events.newBest)
            self.m_events.newBest(r);
        updateRates();
        if (self.m_events.progress)
            self.m_events.progress(progress);
    }

    void noteImplausible(const ResultRecord& r) {
        if (r.status() == ResultStatus::Implausible &&
            (!fastestImplausible || (r.timeMs() > 0 && r.timeMs() < fastestImplausible->timeMs())))
            fastestImplausible = r;
    }

    // An Ok median below the floor becomes Implausible, with the floor in its message.
    void judgeTime(ResultRecord& r) const {
        if (!r.ok() || !plausibility)
            return;
        std::string why = plausibility->verdict(r.config, r.timeMs());
        if (why.empty())
            return;
        r.measurement.status = ResultStatus::Implausible;
        r.measurement.message = std::move(why);
    }

    ResultRecord baseRecord(const Pending& p) const {
        ResultRecord r;
        r.config = codec->toValues(p.config);
        if (p.analysis) {
            const ConfigAnalysis& a = *p.analysis;
            if (a.geometry.error.empty()) {
                r.blockSize = a.geometry.threadsPerBlock();
                r.sharedDynamic = a.geometry.sharedDynamic;
            }
            if (a.compiled())
                r.measurement.staticInfo = a.info;
            if (a.compiled() && a.geometry.error.empty() && a.occupancy.maxWarps > 0)
                r.occupancy = a.occupancy.percent();
        }
        return r;
    }

    Pending makePending(std::uint64_t index) {
        Pending p;
        p.index = index;
        p.config = space.at(index);
        if (compiling) {
            p.future = self.m_compiler->submit(analyzer->requests().request(p.config, arch), abandonCompiles);
            for (std::size_t a = 1; a < archs.size(); ++a)
                p.otherFutures.push_back(
                    self.m_compiler->submit(analyzer->requests().request(p.config, archs[a]), abandonCompiles));
        }
        return p;
    }

    static bool ready(const Pending& p) {
        auto done = [](const std::future<CompileResult>& f) {
            return !f.valid() || f.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
        };
        return done(p.future) && std::all_of(p.otherFutures.begin(), p.otherFutures.end(), done);
    }

    // What the backend is given to measure `p` (its compiles collected).
    MeasureItem measureItem(const Pending& p) const {
        MeasureItem item;
        item.index = p.index;
        item.config = p.config;
        if (p.compiled) {
            item.compiles.push_back({arch, &*p.compiled});
            for (std::size_t a = 0; a < p.others.size() && a + 1 < archs.size(); ++a)
                item.compiles.push_back({archs[a + 1], &p.others[a]});
        }
        return item;
    }

    // Compile errors and configs over the device's limits become results without measuring.
    std::optional<ResultRecord> verdictBeforeMeasuring(Pending& p) {
        if (!compiling)
            return std::nullopt;
        const CompileResult& cr = *p.compiled;
        p.analysis = analyzer->analyze(p.index, p.config, arch, cr);
        const ConfigAnalysis& a = *p.analysis;
        ResultRecord r = baseRecord(p);
        r.measurement.compileSeconds = cr.seconds;
        if (!cr.ok()) {
            r.measurement.status = ResultStatus::CompileError;
            r.measurement.message = cr.message.empty() ? std::string(compileStatusName(cr.status)) : cr.message;
            r.log = cr.log;
            return r;
        }
        if (!a.geometry.error.empty()) {
            r.measurement.status = ResultStatus::LaunchError;
            r.measurement.message = a.geometry.error;
            return r;
        }
        if (limits) {
            KernelResources k;
            k.registers = cr.info.registers;
            k.sharedStatic = cr.info.sharedStatic;
            k.sharedDynamic = a.geometry.sharedDynamic;
            k.barriers = cr.info.barriers;
            k.blockSize = a.geometry.threadsPerBlock();
            const Occupancy occ = theoreticalOccupancy(*limits, k);
            if (!occ.launchable) {
                r.measurement.status = ResultStatus::Pruned;
                r.measurement.message = "over the device's limits: " + occ.reason;
                return r;
            }
        }
        if (options.pruneHeavySpills && a.spill == SpillClass::Heavy) {
            r.measurement.status = ResultStatus::Pruned;
            r.measurement.message = "heavy register spilling: " + std::to_string(cr.info.spillStores) +
                                    " bytes stored, " + std::to_string(cr.info.spillLoads) + " loaded per thread";
            return r;
        }
        return std::nullopt;
    }

    void setUp() {
        const TuningProblem& pr = problem;
        backend = self.m_backend.open(pr, options.shapeIndex, space);
        archs = sessionArchs(options.arch, backend);
        arch = archs.empty() ? std::string() : archs.front();
        using C = SessionOptions::Compile;
        compiling = options.compile == C::Always || (options.compile == C::Auto && backend.needsCubins);
        if (compiling) {
            if (!self.m_compiler)
                throw std::logic_error("TuningSession: compiling needs a CompileService");
            if (arch.empty())
                throw InputError(pr.fileName, "", "no arch to compile for: the backend knows no device arch; give one");
            for (const std::string& a : archs)
                StaticAnalyzer::checkArch(a);
            analyzer = std::make_unique<StaticAnalyzer>(pr, options.shapeIndex);
            // Before any GPU time: parameters whose values never reach the code.
            if (options.checkInertParameters && self.m_events.warning && space.size() > 0) {
                const std::vector<std::uint64_t> bases =
                    space.sample(std::min<std::uint64_t>(8, space.size()), options.seed);
                if (std::optional<LaunchWarning> w =
                        inertWarning(pr, findInertParameters(*analyzer, space, *self.m_compiler, arch, bases)))
                    self.m_events.warning(*w);
            }
        }
        if (backend.limits)
            limits = backend.limits;
        else if (compiling)
            if (const ArchLimits* l = findArch(arch))
                limits = *l;
        codec = std::make_unique<ConfigCodec>(space);
        objective = std::make_unique<ObjectiveEvaluator>(pr, options.shapeIndex);

        const std::string strategyName = canonicalStrategyName(options.strategy);
        if (strategyName.empty()) {
            StrategyContext probe;
            probe.space = &space;
            makeStrategy(options.strategy, probe); // throws the InputError listing the names
        }

        if (options.partCount > 1 && strategyName != "exhaustive")
            throw InputError("", "--part",
                             "only an exhaustive sweep splits into parts (the " + strategyName +
                                 " strategy chooses configs from what it measured): run one session across the GPUs "
                                 "instead (--mpi)");
        if (options.partIndex >= std::max<std::uint64_t>(1, options.partCount))
            throw InputError("", "--part", "the part must be one of 1 to " + std::to_string(options.partCount));

        info.kernel = pr.kernelName;
        info.problemJson = pr.toJson();
        info.problemHash = Sha256::hex(Sha256::hash(info.problemJson));
        info.sourceHash = pr.sourceHash();
        info.shapeIndex = static_cast<std::int64_t>(options.shapeIndex);
        if (options.shapeIndex < pr.shapes.size())
            info.shape = pr.shapes[options.shapeIndex].dims;
        if (!pr.problemSize.empty()) {
            expr::ValueList storage;
            pr.shapeSlots(options.shapeIndex, storage);
            for (const auto& v : storage.items())
                info.problemSize.push_back(v.i);
        }
        for (const auto& p : pr.parameters)
            info.parameters.push_back(p.name);
        info.backend = options.backendLabel.empty() ? backend.kind : options.backendLabel;
        info.strategy = strategyName;
        info.seed = options.seed;
        info.budget = options.budget.describe();
        info.deviceName = backend.deviceName;
        info.arch = backend.arch.empty() ? arch : backend.arch;
        nlohmann::ordered_json provenance = nlohmann::ordered_json::parse(backend.provenanceJson, nullptr, false);
        if (!provenance.is_object())
            provenance = nlohmann::ordered_json::object();
        provenance["tool_version"] = TILESCOPE_VERSION;
        provenance["backend"] = backend.description;
        if (compiling)
            provenance["nvrtc_version"] = nvrtcVersionString();
        if (options.partCount > 1)
            provenance["part"] = {{"index", options.partIndex + 1}, {"count", options.partCount}};
        info.provenanceJson = provenance.dump();
        // Never throws: a problem whose outputs cannot be sized is simply not judged.
        plausibility = std::make_unique<PlausibilityCheck>(pr, options.shapeIndex, info.provenanceJson, info.deviceName,
                                                           info.arch);
        info.objectiveName = objective->enabled() ? objective->name() : "";
        info.spaceSize = space.size();
        info.state = SessionState::Running;
        info.startedAt = nowIso8601();

        std::vector<ResultRecord> prior;
        if (options.resume) {
            if (const auto found = self.m_store.findResumable(info)) {
                sessionId = found->id;
                resumed = true;
                self.m_store.setSessionState(sessionId, SessionState::Running);
                prior = self.m_store.results(sessionId);
                info.startedAt = found->startedAt;
            }
        }
        if (!resumed)
            sessionId = self.m_store.createSession(info);
        info.id = sessionId;
        priorResults = prior.size();

        StrategyContext context;
        context.space = &space;
        context.seed = options.seed;
        context.budget = options.budget;
        context.partIndex = options.partIndex;
        context.partCount = std::max<std::uint64_t>(1, options.partCount);
        // The configs of this session's part of the space (all of it unless split).
        const std::uint64_t partSize =
            space.size() > context.partIndex
                ? (space.size() - context.partIndex + context.partCount - 1) / context.partCount
                : 0;
        context.configLimit = std::min(options.budget.configLimit(space.size()), partSize);
        if (compiling) {
            context.staticFeatures = [this](std::uint64_t index) -> std::optional<StaticFeatures> {
                if (index >= space.size())
                    return std::nullopt;
                return featuresOf(index, self.m_compiler->compile(analyzer->requests().request(space.at(index), arch)));
            };
            context.staticFeaturesMany =
                [this](std::span<const std::uint64_t> indices) -> std::vector<std::optional<StaticFeatures>> {
                // Submitted together: the compile pool works on them in parallel (cache hits are instant).
                std::vector<std::future<CompileResult>> futures;
                for (const std::uint64_t index : indices)
                    futures.push_back(index < space.size()
                                          ? self.m_compiler->submit(analyzer->requests().request(space.at(index), arch))
                                          : std::future<CompileResult>());
                std::vector<std::optional<StaticFeatures>> out(indices.size());
                for (std::size_t i = 0; i < indices.size(); ++i)
                    if (futures[i].valid())
                        out[i] = featuresOf(indices[i], futures[i].get());
                return out;
            };
        }
        strategy = makeStrategy(strategyName, context);
        if (!options.firstConfigs.empty()) {
            std::vector<std::uint64_t> first;
            for (const ConfigValues& values : options.firstConfigs)
                if (const auto index = codec->indexOf(values))
                    first.push_back(*index);
            strategy = seededStrategy(std::move(strategy), std::move(first), space.size());
        }
        progress.total = std::min<std::uint64_t>(context.configLimit, partSize);

        // Prior results: counted, and observed by the strategy, which then never proposes them.
        std::vector<Observation> observations;
        for (const ResultRecord& r : prior) {
            std::optional<std::uint64_t> index = r.spaceIndex;
            if (!index || *index >= space.size() || codec->toValues(space.at(*index)) != r.config)
                index = codec->indexOf(r.config);
            count(r, +1);
            noteImplausible(r);
            progress.recordedSeconds += r.measurement.compileSeconds + r.measurement.benchmarkSeconds;
            if (r.ok() && (!progress.best || ranksBefore(r, *progress.best)))
                progress.best = r;
            if (index && r.status() == ResultStatus::Skipped)
                placeholders.insert(*index);
            if (!index || !isMeasured(r.status()))
                continue;
            if (done.insert(*index).second) {
                ++progress.done;
                observations.push_back(observationOf(r, *index, true));
            }
        }
        strategy->observe(observations);
    }

    void loop() {
        const std::size_t batch =
            std::max<std::size_t>(1, options.batchSize ? options.batchSize : backend.preferredBatch);
        const std::size_t ahead = std::max(batch, options.compileAhead ? options.compileAhead
                                                  : compiling          ? batch + 2 * self.m_compiler->threadCount()
                                                                       : batch);
        std::optional<Clock::time_point> deadline;
        if (options.budget.seconds && !backend.simulated)
            deadline = start + std::chrono::duration_cast<Clock::duration>(
                                   std::chrono::duration<double>(*options.budget.seconds));
        bool proposing = true;
        for (;;) {
            if (self.m_cancel.load()) {
                stopReason = "stopped on request (a resume continues with the configs not done)";
                break;
            }
            if (proposing && timeUp()) {
                proposing = false;
                queue.clear(); // not evaluated: left for a resume with a larger budget
                stopReason = "the time budget of " + formatSeconds(*options.budget.seconds) + " s is spent" +
                             (backend.simulated ? " (recorded time)" : "");
            }
            while (proposing && queue.size() < ahead) {
                const std::uint64_t planned = progress.done + queue.size();
                if (planned >= progress.total)
                    break;
                const auto want =
                    static_cast<std::size_t>(std::min<std::uint64_t>(ahead - queue.size(), progress.total - planned));
                const std::vector<std::uint64_t> ids = strategy->propose(want);
                if (ids.empty())
                    break;
                for (const std::uint64_t id : ids)
                    if (id < space.size() && !done.count(id))
                        queue.push_back(makePending(id));
            }
            if (queue.empty()) {
                if (stopReason.empty()) {
                    if (options.partCount > 1 && strategy->done())
                        stopReason = "every config of part " + std::to_string(options.partIndex + 1) + " of " +
                                     std::to_string(options.partCount) + " is done";
                    else if (progress.done >= space.size())
                        stopReason = "every config of the space is done";
                    else if (progress.done + placeholders.size() >= space.size())
                        stopReason =
                            "every config of the space is done (" + std::to_string(placeholders.size()) + " skipped)";
                    else if (progress.done >= progress.total)
                        stopReason = "the budget of " + std::to_string(progress.total) + " configs is spent";
                    else if (strategy->done())
                        stopReason = "the strategy has nothing more to propose";
                    else
                        stopReason = "the strategy proposed nothing more";
                }
                break;
            }

            // A batch: the oldest config (waiting for its compile), then those behind it that are ready.
            std::vector<Pending> taken;
            taken.push_back(std::move(queue.front()));
            queue.pop_front();
            while (taken.size() < batch && !queue.empty() && ready(queue.front())) {
                taken.push_back(std::move(queue.front()));
                queue.pop_front();
            }
            std::vector<MeasureItem> items;
            std::vector<std::size_t> itemOf; // item -> index in `taken`
            for (std::size_t i = 0; i < taken.size(); ++i) {
                Pending& p = taken[i];
                p.collect();
                if (auto verdict = verdictBeforeMeasuring(p)) {
                    record(std::move(*verdict), p.index);
                    continue;
                }
                items.push_back(measureItem(p));
                itemOf.push_back(i);
            }
            if (!items.empty()) {
                MeasureControl control;
                control.perConfigSeconds = options.perConfigSeconds;
                control.deadline = deadline;
                control.cancel = &self.m_cancel;
                // Adaptive sampling: a config twice as slow as the best so far stops sampling as
                // soon as its samples show it (the confirmation round measures the best fully).
                if (progress.best && progress.best->timeMs() > 0)
                    control.slowerThanMs = 2.0 * progress.best->timeMs();
                self.m_backend.measure(items, control, [&](std::size_t item, Measurement m) {
                    const Pending& p = taken.at(itemOf.at(item));
                    // Configs the backend skipped because the run is stopping were not evaluated:
                    // nothing to store, a resume does them.
                    if (m.status == ResultStatus::Skipped &&
                        (self.m_cancel.load() || (deadline && Clock::now() >= *deadline)))
                        return;
                    // A replay's time budget ends where the real session's would have: the result
                    // that crosses it is the last.
                    if (backend.simulated && timeUp())
                        return;
                    ResultRecord r = baseRecord(p);
                    const std::optional<StaticInfo> ours = r.measurement.staticInfo;
                    r.measurement = std::move(m);
                    if (ours)
                        r.measurement.staticInfo = ours;
                    if (p.compiled)
                        r.measurement.compileSeconds = p.compiled->seconds;
                    judgeTime(r);
                    if (r.ok())
                        r.objective = objective->value(space, p.config, r.timeMs());
                    record(std::move(r), p.index);
                });
            }
            self.m_store.flush();
            if (watch.active && watch.configs.size() >= watch.nextCheck)
                checkSystematicFailure();
            if (proposing && options.earlyStop && progress.best) {
                if (!roofline)
                    roofline =
                        rooflineOf(problem, options.shapeIndex, progress.best->config, info.provenanceJson, info.arch);
                if (std::string why = earlyStopReason(*options.earlyStop, spreadOf(okTimes), *roofline); !why.empty()) {
                    proposing = false;
                    queue.clear(); // not evaluated: a resume without the early stop goes on from here
                    stopReason = "stopped early: " + why;
                }
            }
        }
        self.m_store.flush();
        if (self.m_cancel.load())
            abandonCompiles->store(true);
    }

    static bool mayBeSystematic(ResultStatus s) {
        return s == ResultStatus::CompileError || s == ResultStatus::LaunchError || s == ResultStatus::Crashed;
    }

    void watchFailure(const ResultRecord& r, std::uint64_t index) {
        if (!watch.active || !options.stopOnSystematicFailure)
            return;
        const ResultStatus s = r.status();
        if (s == ResultStatus::Skipped || s == ResultStatus::Pruned)
            return; // says nothing either way
        if (!mayBeSystematic(s) ||
            (!watch.configs.empty() && (s != watch.status || r.measurement.message != watch.message))) {
            watch.active = false; // a config ran, or failed otherwise: the parameters matter
            return;
        }
        watch.status = s;
        watch.message = r.measurement.message;
        watch.configs.push_back(space.at(index));
    }

    // Every parameter with several values took at least two of them among the failed configs.
    bool noParameterExplains() const {
        for (std::size_t p = 0; p < problem.parameters.size(); ++p) {
            if (problem.parameters[p].values.size() < 2)
                continue;
            const std::uint16_t first = watch.configs.front()[p];
            if (std::all_of(watch.configs.begin(), watch.configs.end(), [&](const Config& c) { return c[p] == first; }))
                return false;
        }
        return true;
    }

    void checkSystematicFailure() {
        watch.nextCheck *= 2;
        if (watch.status == ResultStatus::CompileError && compiling) {
            // A few configs from anywhere in the space: compiles are cheap (and cached for later).
            std::mt19937_64 rng(options.seed * 0x9E3779B97F4A7C15ULL + watch.configs.size());
            std::vector<std::future<CompileResult>> probes;
            for (int tries = 0; probes.size() < 4 && tries < 64; ++tries) {
                const std::uint64_t index = rng() % space.size();
                if (done.count(index))
                    continue;
                Config config = space.at(index);
                probes.push_back(self.m_compiler->submit(analyzer->requests().request(config, arch), abandonCompiles));
                watch.configs.push_back(std::move(config));
                ++watch.probed;
            }
            for (auto& probe : probes) {
                const CompileResult cr = probe.get();
                const std::string message = cr.message.empty() ? std::string(compileStatusName(cr.status)) : cr.message;
                if (cr.ok() || message != watch.message) {
                    watch.active = false;
                    return;
                }
            }
        }
        if (!noParameterExplains())
            return;
        abandonCompiles->store(true);
        const std::size_t tried = watch.configs.size() - watch.probed;
        throw SystematicFailure(
            problem.fileName, "",
            "every config failed the same way, whatever its parameters, so the problem or its kernel is at fault: " +
                std::string(statusName(watch.status)) + ": " + watch.message + " (the first " + std::to_string(tried) +
                " configs of this run" +
                (watch.probed > 0 ? " and " + std::to_string(watch.probed) + " more compiled from across the space"
                                  : std::string()) +
                ")");
    }

    // What compiling a config tells a strategy before it is measured.
    std::optional<StaticFeatures> featuresOf(std::uint64_t index, const CompileResult& cr) const {
        if (!cr.ok())
            return std::nullopt;
        const ConfigAnalysis a = analyzer->analyze(index, space.at(index), arch, cr);
        StaticFeatures f;
        f.info = a.info;
        f.blockSize = a.geometry.threadsPerBlock();
        f.sharedBytes = a.sharedBytes();
        f.occupancy = a.occupancy.percent();
        f.launchable = a.occupancy.launchable;
        return f;
    }

    // Measures the best configs once more (SessionOptions::confirmTop).
    void confirmBest();

    // The GPU's clocks and temperature over this run, into the session's provenance.
    DeviceStateRange deviceStates;
    void keepDeviceStates() {
        if (deviceStates.count() == 0)
            return;
        nlohmann::ordered_json provenance = nlohmann::ordered_json::parse(info.provenanceJson, nullptr, false);
        if (!provenance.is_object())
            provenance = nlohmann::ordered_json::object();
        provenance["measured_state"] = nlohmann::ordered_json::parse(deviceStates.json());
        info.provenanceJson = provenance.dump();
        self.m_store.setSessionProvenance(sessionId, info.deviceName, info.arch, info.provenanceJson);
    }
};

void TuningSession::Run::confirmBest() {
    std::vector<ResultRecord> top;
    for (ResultRecord& r : self.m_store.results(sessionId, true, options.confirmTop))
        if (r.ok())
            top.push_back(std::move(r));
    std::vector<Pending> taken;
    std::vector<std::size_t> topOf; // pending -> index in `top`
    for (std::size_t i = 0; i < top.size(); ++i) {
        std::optional<std::uint64_t> index = top[i].spaceIndex;
        if (!index || *index >= space.size() || codec->toValues(space.at(*index)) != top[i].config)
            index = codec->indexOf(top[i].config);
        if (!index)
            continue; // a prior result of a config no longer in the space
        taken.push_back(makePending(*index));
        topOf.push_back(i);
    }
    if (taken.empty())
        return;
    std::vector<MeasureItem> items;
    std::vector<std::size_t> takenOf; // item -> index in `taken`
    for (std::size_t i = 0; i < taken.size(); ++i) {
        Pending& p = taken[i];
        p.collect(); // from the compile cache: it compiled during the search
        if (p.compiled && !p.compiled->ok())
            continue;
        items.push_back(measureItem(p));
        takenOf.push_back(i);
    }

    // Round robin: every round measures each config once (a few samples, the L2 treated as in the
    // search), starting one further along each time, so that drifts of clock or temperature
    // spread over all of them instead of favouring whichever came first.
    struct Pool {
        std::vector<double> samples;
        std::size_t rounds = 0;
        double seconds = 0;
        std::optional<Measurement> failed;
        std::optional<Measurement> last;
    };
    std::vector<Pool> pools(taken.size());
    MeasureControl control;
    control.perConfigSeconds = options.perConfigSeconds;
    control.cancel = &self.m_cancel;
    control.keepSamples = true;
    control.samplesPerConfig = std::max(1, options.confirmSamples);
    const std::size_t rounds = std::max<std::size_t>(1, options.confirmRounds);
    for (std::size_t round = 0; round < rounds && !self.m_cancel.load() && !items.empty(); ++round) {
        std::vector<MeasureItem> order;
        std::vector<std::size_t> orderOf; // position -> item
        for (std::size_t k = 0; k < items.size(); ++k) {
            const std::size_t item = (k + round) % items.size();
            order.push_back(items[item]);
            orderOf.push_back(item);
        }
        self.m_backend.measure(order, control, [&](std::size_t position, Measurement m) {
            Pool& pool = pools.at(takenOf.at(orderOf.at(position)));
            if (m.status == ResultStatus::Skipped || pool.failed)
                return;
            pool.seconds += m.benchmarkSeconds;
            if (m.status != ResultStatus::Ok) {
                pool.failed = std::move(m);
                return;
            }
            ++pool.rounds;
            if (m.deviceState)
                deviceStates.add(*m.deviceState);
            if (m.samplesMs.empty())
                pool.samples.push_back(m.time.medianMs); // a backend that keeps no samples: the round's median
            else
                pool.samples.insert(pool.samples.end(), m.samplesMs.begin(), m.samplesMs.end());
            pool.last = std::move(m);
        });
    }

    const std::string firstWinner = configKey(top.front().config);
    for (std::size_t i = 0; i < taken.size(); ++i) {
        Remeasurement x;
        x.result = top[topOf[i]];
        x.firstMs = x.result.timeMs();
        Pool& pool = pools[i];
        x.rounds = pool.rounds;
        progress.recordedSeconds += pool.seconds;
        if (pool.failed) {
            const Measurement& m = *pool.failed;
            x.failure = std::string(statusName(m.status)) + (m.message.empty() ? "" : ": " + m.message);
        } else if (pool.samples.empty()) {
            continue; // cancelled: nothing measured
        } else {
            TimingStats t;
            const MedianInterval ci = bootstrapMedian(pool.samples, 0.95, 2000, options.seed + 1 + i);
            t.medianMs = ci.median;
            t.ciLowMs = ci.low;
            t.ciHighMs = ci.high;
            t.minMs = *std::min_element(pool.samples.begin(), pool.samples.end());
            t.maxMs = *std::max_element(pool.samples.begin(), pool.samples.end());
            double mean = 0;
            for (double v : pool.samples)
                mean += v;
            mean /= static_cast<double>(pool.samples.size());
            double m2 = 0;
            for (double v : pool.samples)
                m2 += (v - mean) * (v - mean);
            t.stdevMs = pool.samples.size() > 1 ? std::sqrt(m2 / static_cast<double>(pool.samples.size() - 1)) : 0;
            t.samples = static_cast<int>(pool.samples.size());
            x.result.measurement.time = t;
            if (pool.last && pool.last->deviceState)
                x.result.measurement.deviceState = pool.last->deviceState;
            x.result.objective = objective->value(space, taken[i].config, t.medianMs);
            x.result.measurement.benchmarkSeconds += pool.seconds;
            self.m_store.updateTiming(x.result.id, t, x.result.objective, pool.seconds);
            if (self.m_events.updated)
                self.m_events.updated(x.result);
        }
        remeasured.push_back(std::move(x));
    }
    std::stable_sort(remeasured.begin(), remeasured.end(), [](const Remeasurement& a, const Remeasurement& b) {
        return a.failure.empty() && (!b.failure.empty() || ranksBefore(a.result, b.result));
    });
    progress.best = self.m_store.best(sessionId);
    if (remeasured.empty())
        return;
    char buf[200];
    const Remeasurement& winner = remeasured.front();
    const std::size_t measuredRounds = winner.rounds;
    if (!winner.failure.empty()) {
        confirmation = "the best " + std::to_string(remeasured.size()) + " configs measured again all failed (" +
                       winner.failure + ")";
        return;
    }
    const TimingStats& wt = winner.result.measurement.time;
    if (configKey(winner.result.config) == firstWinner) {
        std::snprintf(buf, sizeof buf,
                      "the winner held when the best %zu were measured again, interleaved in %zu rounds: %.4g ms "
                      "(95 %%: %.4g-%.4g; the search measured %.4g ms)",
                      remeasured.size(), measuredRounds, wt.medianMs, wt.ciLowMs, wt.ciHighMs, winner.firstMs);
    } else {
        std::snprintf(buf, sizeof buf,
                      "measured again, interleaved in %zu rounds, another of the best %zu won: %.4g ms (95 %%: "
                      "%.4g-%.4g; the search measured %.4g ms); the first winner's result was a lucky sample",
                      measuredRounds, remeasured.size(), wt.medianMs, wt.ciLowMs, wt.ciHighMs, winner.firstMs);
    }
    confirmation = buf;
    // Which of them the pooled samples cannot tell apart from the winner (95 % intervals of the
    // median that overlap the winner's).
    std::vector<MedianInterval> intervals;
    for (const Remeasurement& x : remeasured) {
        const auto interval = medianIntervalOf(x.result.measurement.time);
        if (!x.failure.empty() || !interval)
            break;
        intervals.push_back(*interval);
    }
    for (std::size_t i : indistinguishableFromBest(intervals))
        remeasured[i].indistinguishable = true;
    if (intervals.size() >= 2) {
        const std::size_t tied = indistinguishableFromBest(intervals).size() - 1;
        confirmation += tied == 0 ? "; its 95 % interval is apart from the others'"
                                  : "; " + std::to_string(tied) +
                                        " of the others cannot be told apart from it (their "
                                        "95 % intervals overlap): any of them is as good";
    }
}

SessionSummary TuningSession::run() {
    if (m_options.shapeIndex >= std::max<std::size_t>(1, m_problem.shapes.size()))
        throw InputError(m_problem.fileName, "--shape",
                         "shape " + std::to_string(m_options.shapeIndex) + " does not exist; the problem has " +
                             std::to_string(m_problem.shapes.size()) + " shape(s), numbered from 0");
    Run run(*this, ConfigSpace::build(m_problem, m_options.shapeIndex));
    run.setUp(); // InputErrors before the session exists leave nothing behind

    if (m_events.started) {
        run.updateRates();
        m_events.started(run.info, run.progress);
    }
    try {
        run.loop();
        if (m_options.confirmTop > 0 && !run.backend.simulated && !m_cancel.load())
            run.confirmBest();
        run.keepDeviceStates();
        const bool wasCancelled = m_cancel.load();
        m_store.setSessionState(run.sessionId, wasCancelled ? SessionState::Cancelled : SessionState::Finished,
                                run.confirmation.empty() ? run.stopReason : run.stopReason + "; " + run.confirmation);
    } catch (const std::exception& e) {
        try {
            m_store.flush();
            m_store.setSessionState(run.sessionId, SessionState::Failed, e.what());
        } catch (...) {
            // The store itself failed: the error below says why.
        }
        if (m_events.error)
            m_events.error(e.what());
        m_backend.close();
        throw;
    }
    m_backend.close();

    SessionSummary summary;
    summary.session = m_store.session(run.sessionId).value_or(run.info);
    summary.resumed = run.resumed;
    summary.priorResults = run.priorResults;
    run.updateRates();
    summary.progress = run.progress;
    summary.stopReason = run.stopReason;
    summary.remeasured = std::move(run.remeasured);
    summary.confirmation = run.confirmation;
    summary.clocksMoved = run.deviceStates.movedNote();
    if (const std::uint64_t n = run.progress.counts.of(ResultStatus::Implausible); n > 0 && run.fastestImplausible)
        summary.implausible = std::to_string(n) + (n == 1 ? " config" : " configs") +
                              " ran faster than physics allows and never rank (the fastest, " +
                              describeConfig(run.fastestImplausible->config) + ": " +
                              run.fastestImplausible->measurement.message + ")";
    if (run.progress.counts.of(ResultStatus::WrongResult) > 0)
        summary.verification = describeVerificationSplits(verificationSplits(m_store.results(run.sessionId)));
    if (m_events.finished)
        m_events.finished(summary);
    return summary;
}

} // namespace tilescope
