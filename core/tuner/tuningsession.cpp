#include "tuner/tuningsession.h"

#include "analysis/clocks.h"
#include "analysis/inertcheck.h"
#include "analysis/plausibility.h"
#include "analysis/staticanalysis.h"
#include "analysis/verificationsplit.h"
#include "base/error.h"
#include "base/sha256.h"
#include "base/textformat.h"
#include "compile/nvcc.h"
#include "compile/triton.h"
#include "exchange/configcodec.h"
#include "measure/metricnames.h"
#include "spec/problemfiles.h"
#include "spec/tuningproblem.h"
#include "tuner/compileahead.h"
#include "tuner/objective.h"
#include "tuner/prune.h"
#include "tuner/resume.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <deque>
#include <exception>
#include <future>
#include <thread>
#include <unordered_map>

namespace tilescope {

namespace {
using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
}

// Provenance (JSON text; anything but an object is dropped) with the entries of `entries` set.
std::string withProvenance(const std::string& provenanceJson, const nlohmann::ordered_json& entries) {
    nlohmann::ordered_json provenance = nlohmann::ordered_json::parse(provenanceJson, nullptr, false);
    if (!provenance.is_object())
        provenance = nlohmann::ordered_json::object();
    for (const auto& [key, value] : entries.items())
        provenance[key] = value;
    return provenance.dump();
}
} // namespace

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
    // Set when the run gives up on the compiles it queued: those not started yet come back Cancelled.
    std::shared_ptr<std::atomic<bool>> abandonCompiles = std::make_shared<std::atomic<bool>>(false);
    CompileAhead compiles;

    SessionInfo info;
    std::int64_t sessionId = 0;
    bool resumed = false;
    std::uint64_t priorResults = 0;
    std::unique_ptr<Strategy> strategy;

    SessionTally tally;
    Clock::time_point start = Clock::now();
    SessionPipeline pipeline;          // how busy the compile pool and the GPUs were
    std::multiset<double> rankedTimes; // the times of this run's results that rank, for the profiling of the leaders
    std::set<std::string> configKeys;  // the compile keys of the configs evaluated (SessionPipeline::binaries)
    CompileService::Stats compileStatsAtStart = self.m_compiler ? self.m_compiler->stats() : CompileService::Stats{};
    std::string stopReason;
    std::vector<std::pair<double, double>> okTimes; // this run's Ok results: (median ms, relative spread)
    std::optional<Roofline> roofline;               // of the best so far (SessionOptions::earlyStop)
    std::vector<Remeasurement> remeasured;
    std::string confirmation;
    std::string verification; // the verdict on the wrong results (SessionSummary::verification)
    std::string secondInputs; // what the final round's second input set found ("" none)
    // Medians below what a config's outputs take to write (null: the problem cannot be planned).
    std::unique_ptr<PlausibilityCheck> plausibility;
    FailureWatch watch;
    DeviceStateRange deviceStates; // the GPU's clocks and temperature over this run
    std::deque<PendingConfig> queue;
    // Configs the backend is measuring, by their item number in its measure() call (their
    // compiles are what the items point into).
    std::unordered_map<std::size_t, PendingConfig> measuring;
    std::size_t nextItem = 0;
    bool proposing = true;
    std::size_t resultsSeen = 0; // results when the run last looked between results
    bool firstHandedOn = false;  // the first proposal went to the backend first (measureReady)
    std::exception_ptr failure;  // found while the backend measured; thrown once it returns
    // The check for parameters whose values never reach the code, run beside the sweep's first
    // compiles (last, so that it ends before what it reads is destroyed).
    std::future<std::optional<LaunchWarning>> inertCheck;

    Run(TuningSession& s, ConfigSpace builtSpace)
        : self(s)
        , problem(s.m_problem)
        , options(s.m_options)
        , space(std::move(builtSpace))
        , watch(s.m_problem, space, s.m_options.stopOnSystematicFailure) {
        tally.setRankBy(s.m_options.rankBy);
    }
    // A run that ends early (an error in its set-up or its loop) gives up its compiles, the
    // inert-parameter check's among them, rather than wait for them.
    ~Run() { abandonCompiles->store(true); }
    Run(const Run&) = delete;
    Run& operator=(const Run&) = delete;

    const SessionProgress& progress() const { return tally.progress(); }

    bool timeUp() const {
        if (!options.budget.seconds)
            return false;
        return (backend.simulated ? progress().recordedSeconds : secondsSince(start)) >= *options.budget.seconds;
    }

    void updateRates() { tally.updateRates(secondsSince(start)); }

    // Stores a result and tells everyone.
    void record(ResultRecord r, std::uint64_t index) {
        // Compile logs, the worker's words and recordings pass here: no NUL or control bytes.
        r.measurement.message = cleanMessage(r.measurement.message);
        r.log = cleanMessage(r.log);
        r.sessionId = sessionId;
        r.spaceIndex = index;
        if (r.recordedAt.empty())
            r.recordedAt = nowIso8601();
        if (options.gpuStateMetrics && r.measurement.deviceState)
            appendGpuStateMetrics(*r.measurement.deviceState, r.measurement.metrics);
        r.id = self.m_store.append(sessionId, r);
        if (r.measurement.deviceState)
            deviceStates.add(*r.measurement.deviceState);
        const bool better = tally.add(r, index);
        watch.observe(r, index);
        if (better)
            roofline.reset();
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
            self.m_events.progress(progress());
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

    ResultRecord baseRecord(const PendingConfig& p) const {
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

    // Compile errors and configs over the device's limits become results without measuring.
    std::optional<ResultRecord> verdictBeforeMeasuring(PendingConfig& p) {
        if (!compiling)
            return std::nullopt;
        const CompileResult& cr = *p.compiled;
        p.analysis = analyzer->analyze(p.index, p.config, arch, cr);
        const std::optional<PruneVerdict> verdict =
            tilescope::verdictBeforeMeasuring(cr, *p.analysis, limits, options.pruneHeavySpills);
        if (!verdict)
            return std::nullopt;
        ResultRecord r = baseRecord(p);
        r.measurement.compileSeconds = cr.seconds;
        r.measurement.status = verdict->status;
        r.measurement.message = verdict->message;
        r.log = verdict->log;
        return r;
    }

    // The compile service, the static analysis and the device's limits, when configs are compiled.
    void setUpCompiling() {
        using C = SessionOptions::Compile;
        compiling = options.compile == C::Always || (options.compile == C::Auto && backend.needsCubins);
        if (compiling) {
            if (!self.m_compiler)
                throw std::logic_error("TuningSession: compiling needs a CompileService");
            if (arch.empty())
                throw InputError(problem.fileName, "",
                                 "no arch to compile for: the backend knows no device arch; give one");
            for (const std::string& a : archs)
                StaticAnalyzer::checkArch(a);
            analyzer = std::make_unique<StaticAnalyzer>(problem, options.shapeIndex);
            compiles = CompileAhead(*self.m_compiler, *analyzer, archs, abandonCompiles);
            // Parameters whose values never reach the code, on the same compile pool as the
            // sweep and beside it: waiting for the check's rounds (a config, then its neighbours)
            // kept most of the pool idle for as long as two compiles take, seconds each for a
            // heavily unrolled kernel. Its warning comes between results once it is done.
            if (options.checkInertParameters && self.m_events.warning && space.size() > 0) {
                std::vector<std::uint64_t> bases = space.sample(std::min<std::uint64_t>(8, space.size()), options.seed);
                inertCheck = std::async(std::launch::async, [this, bases = std::move(bases)] {
                    return inertWarning(problem, findInertParameters(*analyzer, space, *self.m_compiler, arch, bases,
                                                                     abandonCompiles.get()));
                });
            }
        }
        if (backend.limits)
            limits = backend.limits;
        else if (compiling)
            if (const ArchLimits* l = findArch(arch))
                limits = *l;
    }

    // The session as stored: the problem, the shape, the backend, the strategy, provenance.
    void describeSession(const std::string& strategyName) {
        const TuningProblem& pr = problem;
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
        nlohmann::ordered_json ours = nlohmann::ordered_json::object();
        ours["tool_version"] = TILESCOPE_VERSION;
        // Where the problem was: a file the database keeps only the hash of is looked for there.
        if (!pr.problemPath.empty()) {
            std::error_code ec;
            const std::filesystem::path where = std::filesystem::absolute(pr.problemPath, ec);
            ours["problem_file"] = (ec ? pr.problemPath : where.lexically_normal()).string();
        }
        ours["backend"] = backend.description;
        // The compiler that made the session's binaries: Triton, nvcc (the release its --version
        // names) where the problem asks for it, else NVRTC.
        if (compiling && problem.isTriton())
            ours["triton_version"] = tritonSetup().version;
        else if (compiling && problem.usesNvcc())
            ours["nvcc_version"] = nvccSetup().ok ? nvccSetup().release : std::string("unknown");
        else if (compiling)
            ours["nvrtc_version"] = nvrtcVersionString();
        if (options.partCount > 1)
            ours["part"] = {{"index", options.partIndex + 1}, {"count", options.partCount}};
        info.provenanceJson = withProvenance(backend.provenanceJson, ours);
        info.objectiveName = objective->enabled() ? objective->name() : "";
        info.spaceSize = space.size();
        info.state = SessionState::Running;
        info.startedAt = nowIso8601();
    }

    // Keeps the problem's files with the new session. A database that cannot take them loses
    // only this (the session then reads as one stored before files were kept): the results go on.
    void keepFiles(const std::vector<ProblemFile>& files) {
        if (files.empty())
            return;
        try {
            self.m_store.addSessionFiles(sessionId, files);
        } catch (const std::exception&) {
        }
    }

    void setUp() {
        // The files it is tuned with (the kernel, its headers, its data) are read and hashed while
        // the backend opens (a worker starting its CUDA context and uploading the same data).
        std::future<std::vector<ProblemFile>> filesRead =
            std::async(std::launch::async, [this] { return collectProblemFiles(problem); });
        backend = self.m_backend.open(problem, options.shapeIndex, space);
        archs = sessionArchs(options.arch, backend);
        arch = archs.empty() ? std::string() : archs.front();
        setUpCompiling();
        codec = std::make_unique<ConfigCodec>(space);
        objective = std::make_unique<ObjectiveEvaluator>(problem, options.shapeIndex);

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

        describeSession(strategyName);
        // Never throws: a problem whose outputs cannot be sized is simply not judged.
        plausibility = std::make_unique<PlausibilityCheck>(problem, options.shapeIndex, info.provenanceJson,
                                                           info.deviceName, info.arch);

        // The files, kept with a new session and compared with a session's before it is continued.
        const std::vector<ProblemFile> files = filesRead.get();
        std::vector<ResultRecord> prior;
        std::string nothingToResume;
        if (options.resume) {
            std::string refused;
            if (std::optional<ResumedSession> found = resumeSession(self.m_store, info, &files, &refused)) {
                sessionId = found->id;
                resumed = true;
                prior = std::move(found->prior);
                info.startedAt = found->startedAt;
            } else {
                nothingToResume = refused.empty() ? noSessionToResume(self.m_store, info) : refused;
            }
        }
        if (!resumed) {
            sessionId = self.m_store.createSession(info);
            keepFiles(files);
        }
        info.id = sessionId;
        // A run asked to resume goes on in a new session (a job script may always pass --resume),
        // and says so before any work.
        if (!nothingToResume.empty() && self.m_events.note)
            self.m_events.note(nothingToResume + "; this run starts session " + std::to_string(sessionId));
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
        compiles.feed(context, space);
        strategy = makeStrategy(strategyName, context);
        if (!options.firstConfigs.empty()) {
            std::vector<std::uint64_t> first;
            for (const ConfigValues& values : options.firstConfigs)
                if (const auto index = codec->indexOf(values))
                    first.push_back(*index);
            strategy = seededStrategy(std::move(strategy), std::move(first), space.size());
        }
        tally.setTotal(std::min<std::uint64_t>(context.configLimit, partSize));

        // Prior results: counted, and observed by the strategy, which then never proposes them.
        strategy->observe(takePrior(prior, space, *codec, tally));
    }

    // Why the run ends when nothing more is queued.
    std::string exhausted() const {
        const SessionProgress& p = progress();
        if (options.partCount > 1 && strategy->done())
            return "every config of part " + std::to_string(options.partIndex + 1) + " of " +
                   std::to_string(options.partCount) + " is done";
        if (p.done >= space.size())
            return "every config of the space is done";
        if (p.done + tally.skipped() >= space.size())
            return "every config of the space is done (" + std::to_string(tally.skipped()) + " skipped)";
        if (p.done >= p.total)
            return "the budget of " + std::to_string(p.total) + " configs is spent";
        if (strategy->done())
            return "the strategy has nothing more to propose";
        return "the strategy proposed nothing more";
    }

    // Queues what the strategy proposes until `ahead` configs are compiling or compiled (the
    // budget counts those being measured too).
    void propose(std::size_t ahead) {
        while (queue.size() < ahead) {
            const std::uint64_t planned = progress().done + queue.size() + measuring.size();
            if (planned >= progress().total)
                break;
            const auto want =
                static_cast<std::size_t>(std::min<std::uint64_t>(ahead - queue.size(), progress().total - planned));
            const std::vector<std::uint64_t> ids = strategy->propose(want);
            if (ids.empty())
                break;
            for (const std::uint64_t id : ids)
                if (id < space.size() && !tally.done().count(id))
                    queue.push_back(compiles.submit(id, space.at(id)));
        }
    }

    // Moves up to `batch` configs whose compiles are done from the queue to `taken`, oldest first.
    void takeReady(std::vector<PendingConfig>& taken, std::size_t batch) {
        for (auto it = queue.begin(); it != queue.end() && taken.size() < batch;) {
            if (it->ready()) {
                taken.push_back(std::move(*it));
                it = queue.erase(it);
            } else {
                ++it;
            }
        }
    }

    // Hands `taken` on: each config's compiles collected and counted; pruned and failed compiles
    // recorded at once, the rest kept in `measuring` under the next item numbers and added to
    // `items` (which point into the kept configs' compiles).
    void prepare(std::vector<PendingConfig>& taken, std::vector<MeasureItem>& items) {
        for (PendingConfig& p : taken) {
            p.collect();
            pipeline.compiled(p);
            if (p.compiled && !p.compiled->key.empty())
                configKeys.insert(p.compiled->key);
            for (const CompileResult& other : p.others)
                if (!other.key.empty())
                    configKeys.insert(other.key);
            if (auto verdict = verdictBeforeMeasuring(p)) {
                record(std::move(*verdict), p.index);
                continue;
            }
            const PendingConfig& kept = measuring.emplace(nextItem++, std::move(p)).first->second;
            items.push_back(compiles.measureItem(kept));
        }
    }

    // What the run does between results while a backend measures: commits, the failure watch,
    // the early stop and the time budget. After a new result only; a failure is kept for after
    // the backend returns (it must not unwind through it).
    void betweenResults() {
        self.m_store.commitIfDue();
        stopWhenTimeIsUp();
        try {
            deliverInertCheck(false);
        } catch (...) {
            if (!failure)
                failure = std::current_exception();
        }
        if (resultsSeen == tally.done().size() || failure)
            return;
        resultsSeen = tally.done().size();
        if (watch.due()) {
            try {
                checkSystematicFailure();
            } catch (...) {
                failure = std::current_exception();
                queue.clear();
                return;
            }
        }
        if (proposing)
            if (std::string why = earlyStopped(); !why.empty())
                stopProposing("stopped early: " + why); // a resume without the early stop goes on from here
    }

    // The inert-parameter check's warning once the check is done; `wait`: wait for it.
    void deliverInertCheck(bool wait) {
        if (!inertCheck.valid() || (!wait && inertCheck.wait_for(std::chrono::seconds(0)) != std::future_status::ready))
            return;
        if (std::optional<LaunchWarning> w = inertCheck.get())
            self.m_events.warning(*w);
    }

    // No more proposals: what is queued is not evaluated (a resume with a larger budget does it).
    void stopProposing(std::string why) {
        proposing = false;
        queue.clear();
        stopReason = std::move(why);
    }

    void stopWhenTimeIsUp() {
        if (proposing && timeUp())
            stopProposing("the time budget of " + formatDouble("%g", *options.budget.seconds) + " s is spent" +
                          (backend.simulated ? " (recorded time)" : ""));
    }

    // Configs whose compiles are done go to the backend in the order they were proposed (the
    // GPU does not wait on one slow compile while others are done: strategies observe results in
    // any order); when none is, it waits for whichever finishes first, keeping the queue topped
    // up with the strategy's proposals meanwhile. While the backend measures, its feed hands each
    // idle device the next config ready, so that no device waits for the others' slowest config.
    void measureReady(std::size_t batch, const std::optional<Clock::time_point>& deadline, std::size_t ahead) {
        std::vector<PendingConfig> taken;
        if (!firstHandedOn && !queue.empty()) {
            // The first config measured becomes the reference the others are compared with: the
            // strategy's first proposal (an exhaustive sweep's first config), whichever compile
            // finishes first, so that a run does not verify against a different config each time.
            queue.front().collect();
            taken.push_back(std::move(queue.front()));
            queue.pop_front();
            firstHandedOn = true;
        }
        takeReady(taken, batch);
        while (taken.empty()) {
            PendingConfig& oldest = queue.front();
            if (oldest.future.valid() && oldest.future.wait_for(std::chrono::seconds(0)) != std::future_status::ready)
                oldest.future.wait_for(std::chrono::milliseconds(1));
            else
                std::this_thread::sleep_for(std::chrono::microseconds(200));
            if (proposing)
                propose(ahead);
            takeReady(taken, batch);
            if (self.m_cancel.load() && taken.empty()) {
                taken.push_back(std::move(queue.front()));
                queue.pop_front();
            }
        }

        std::vector<MeasureItem> items;
        nextItem = 0;
        prepare(taken, items);
        if (items.empty())
            return;
        MeasureControl control;
        control.perConfigSeconds = options.perConfigSeconds;
        control.deadline = deadline;
        control.cancel = &self.m_cancel;
        // The race and the profiling of the leaders, against the best so far (SessionOptions).
        auto adapt = [&] {
            if (options.profileTop && *options.profileTop > 0)
                control.profileUnderMs = rankedTimes.size() >= SessionOptions::kProfileAfter * *options.profileTop
                                             ? *std::next(rankedTimes.begin(), std::ptrdiff_t(*options.profileTop - 1))
                                             : -1.0;
            if (!progress().best || progress().best->timeMs() <= 0)
                return;
            const ResultRecord& best = *progress().best;
            if (options.raceMargin)
                control.slowerThanMs =
                    std::max(best.timeMs(), best.measurement.time.ciHighMs) * (1.0 + *options.raceMargin);
        };
        adapt();
        control.feed = [&](std::size_t wanted, std::vector<MeasureItem>& out) {
            if (self.m_cancel.load() || failure)
                return;
            betweenResults();
            if (proposing)
                propose(ahead);
            std::vector<PendingConfig> ready;
            while (out.empty()) {
                ready.clear();
                takeReady(ready, wanted);
                if (ready.empty())
                    break;
                prepare(ready, out);
            }
            adapt();
        };
        self.m_backend.measure(items, control, [&](std::size_t item, Measurement m) {
            const auto found = measuring.find(item);
            if (found == measuring.end())
                return; // not the backend's to report
            const PendingConfig p = std::move(found->second);
            measuring.erase(found);
            // Configs the backend skipped because the run is stopping were not evaluated: nothing
            // to store, a resume does them.
            if (m.status == ResultStatus::Skipped && (self.m_cancel.load() || (deadline && Clock::now() >= *deadline)))
                return;
            // A replay's time budget ends where the real session's would have: the result that
            // crosses it is the last.
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
                r.objective = objective->value(space, p.config, r.timeMs(), energyOf(r.measurement.metrics));
            if (r.ranks())
                rankedTimes.insert(r.timeMs());
            pipeline.measured(r.measurement);
            record(std::move(r), p.index);
        });
        measuring.clear(); // a backend that broke its word leaves nothing pointing into these
    }

    // What NVRTC compiled from the session's start to the end of its search: distinct binaries of
    // the configs evaluated and of the others (a key compiled twice counts once in those), and
    // where the compiles ran.
    void countCompiles() {
        const CompileService& service = *self.m_compiler;
        const CompileService::Stats now = service.stats();
        const CompileService::Stats& before = compileStatsAtStart;
        pipeline.compiles = now.compiles - before.compiles;
        pipeline.compileSeconds = now.seconds - before.seconds;
        const std::vector<std::string> keys = service.compiledKeys(before.compiles);
        for (const std::string& key : std::set<std::string>(keys.begin(), keys.end()))
            ++(configKeys.count(key) ? pipeline.binaries : pipeline.otherBinaries);
        for (const auto& [place, count] : now.places) {
            const auto was = before.places.find(place);
            pipeline.compiledOn[place] = count - (was == before.places.end() ? 0 : was->second);
        }
    }

    // Stops the run with SystematicFailure when the failure watch finds the problem at fault.
    void checkSystematicFailure() {
        FailureWatch::CompileProbe probe;
        if (compiling)
            probe = [this](const Config& config) { return compiles.submitFirst(config); };
        const std::string why = watch.check(tally.done(), options.seed, probe);
        if (why.empty())
            return;
        abandonCompiles->store(true);
        throw SystematicFailure(problem.fileName, "", why);
    }

    // Whether the regime says further search cannot pay (SessionOptions::earlyStop).
    std::string earlyStopped() {
        if (!options.earlyStop || !progress().best || !progress().best->ranks())
            return {}; // nothing timed: no regime to read
        if (!roofline)
            roofline = rooflineOf(problem, options.shapeIndex, progress().best->config, info.provenanceJson, info.arch);
        return earlyStopReason(*options.earlyStop, spreadOf(okTimes), *roofline);
    }

    // The pipeline: strategy -> compile (ahead) -> prune -> measure -> store, until the strategy
    // is done, the budget spent or the run cancelled.
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
        proposing = true;
        // The compile pool and the GPUs from the session's start to the end of the search.
        struct PipelineAtEnd {
            Run& run;
            ~PipelineAtEnd() {
                run.pipeline.wallSeconds = secondsSince(run.start);
                if (run.compiling)
                    run.countCompiles();
            }
        } pipelineAtEnd{*this};
        for (;;) {
            if (self.m_cancel.load()) {
                stopReason = "stopped on request (a resume continues with the configs not done)";
                break;
            }
            stopWhenTimeIsUp();
            if (proposing)
                propose(ahead);
            if (queue.empty()) {
                if (stopReason.empty())
                    stopReason = exhausted();
                break;
            }
            measureReady(batch, deadline, ahead);
            self.m_store.flush();
            if (failure)
                std::rethrow_exception(failure);
            deliverInertCheck(false);
            if (watch.due())
                checkSystematicFailure();
            if (proposing)
                if (std::string why = earlyStopped(); !why.empty())
                    stopProposing("stopped early: " + why); // a resume without the early stop goes on from here
        }
        self.m_store.flush();
        if (self.m_cancel.load())
            abandonCompiles->store(true);
        deliverInertCheck(true);
    }

    // Measures the best configs once more (SessionOptions::confirmTop).
    void confirmBest();
    // The counters of the best configs that have none (SessionOptions::profileTop, counterNames).
    void profileLeaders();

    // The configs of `records` (results of this session) ready to measure again: each compiled
    // (from the cache: it compiled during the search) and made a measure item, unless its config
    // has left the space (a prior result) or no longer compiles.
    struct Remeasure {
        std::vector<PendingConfig> taken;
        std::vector<std::size_t> recordOf; // taken -> index in `records`
        std::vector<std::size_t> itemOf;   // taken -> item (taken.size(): none, it did not compile)
        std::vector<MeasureItem> items;
        std::vector<std::size_t> recordOfItem; // item -> index in `records`
    };
    Remeasure remeasure(const std::vector<ResultRecord>& records);

    // The verdict on the wrong results, after verifying again within the groups of a parameter
    // that splits them (analysis/verificationsplit.h) where nothing speaks against it.
    void judgeWrongResults();
    // Verifies the wrong results again, each against the first config of its group of `split`'s
    // parameter; those that agree say so in their message and stay wrong_result (a kernel wrong
    // for one value of the parameter agrees with itself: only the problem can say which it is).
    WithinGroupsCheck verifyWithin(const std::vector<ResultRecord>& before, const VerificationSplit& split,
                                   std::size_t parameter);

    // The verdicts on wrong results and on the second input set, into the session's provenance,
    // where `show` and the workbench read them.
    void keepVerdicts() {
        nlohmann::ordered_json v = nlohmann::ordered_json::object();
        if (!verification.empty())
            v["verification"] = verification;
        if (!secondInputs.empty())
            v["second_inputs"] = secondInputs;
        if (v.empty())
            return;
        info.provenanceJson = withProvenance(info.provenanceJson, v);
        self.m_store.setSessionProvenance(sessionId, info.deviceName, info.arch, info.provenanceJson);
    }

    // The GPU's clocks and temperature over this run, into the session's provenance.
    void keepDeviceStates() {
        if (pipeline.configs > 0 && !backend.simulated) {
            const double wall = std::max(1e-9, pipeline.wallSeconds);
            nlohmann::ordered_json p{{"configs", pipeline.configs},
                                     {"binaries_compiled", pipeline.binaries},
                                     {"other_binaries_compiled", pipeline.otherBinaries},
                                     {"nvrtc_compiles", pipeline.compiles},
                                     {"wall_seconds", pipeline.wallSeconds}};
            if (!pipeline.compiledOn.empty())
                p["compiled_on"] = pipeline.compiledOn;
            if (compiling)
                p["compile_pool_busy"] =
                    pipeline.compileSeconds / (wall * std::max(1u, self.m_compiler->threadCount()));
            if (!pipeline.devices.empty() && backend.kind != "analysis")
                p["gpu_busy"] = pipeline.benchmarkSeconds / (wall * static_cast<double>(pipeline.devices.size()));
            if (const BenchmarkParts& b = pipeline.parts; pipeline.measuredConfigs > 0 && b != BenchmarkParts{}) {
                const double n = static_cast<double>(pipeline.measuredConfigs);
                p["benchmark_ms_a_config"] = nlohmann::ordered_json{{"all", 1e3 * pipeline.benchmarkSeconds / n},
                                                                    {"check", 1e3 * b.check / n},
                                                                    {"timing", 1e3 * b.timing / n},
                                                                    {"warmup", 1e3 * b.warmup / n},
                                                                    {"counters", 1e3 * b.counters / n},
                                                                    {"energy", 1e3 * b.energy / n}};
                p["outputs_compared_on_gpu"] = b.comparedOnDevice;
                p["outputs_downloaded"] = b.downloaded;
                p["samples_a_config"] = static_cast<double>(b.samples) / n;
                p["configs_raced"] = b.raced;
                p["configs_profiled"] = b.profiled;
                p["read_write_buffers_unrestored"] = b.unrestored;
                if (b.batched > 0) {
                    p["configs_timed_in_batches"] = b.batched;
                    p["most_launches_a_batch"] = b.batchLaunches;
                }
            }
            info.provenanceJson = withProvenance(info.provenanceJson, {{"pipeline", std::move(p)}});
            self.m_store.setSessionProvenance(sessionId, info.deviceName, info.arch, info.provenanceJson);
        }
        if (deviceStates.count() == 0)
            return;
        info.provenanceJson = withProvenance(info.provenanceJson,
                                             {{"measured_state", nlohmann::ordered_json::parse(deviceStates.json())}});
        self.m_store.setSessionProvenance(sessionId, info.deviceName, info.arch, info.provenanceJson);
    }
};

void TuningSession::Run::judgeWrongResults() {
    if (progress().counts.of(ResultStatus::WrongResult) == 0)
        return;
    const std::vector<ResultRecord> before = self.m_store.results(sessionId);
    const std::vector<VerificationSplit> splits = verificationSplits(before);
    std::optional<WithinGroupsCheck> within;
    if (!splits.empty() && splitObstacle(before, splits.front()).empty() && !backend.simulated &&
        backend.kind != "analysis" && !self.m_cancel.load()) {
        const int p = problem.parameterIndex(splits.front().parameter);
        const bool declared = std::find(problem.verifyWithin.begin(), problem.verifyWithin.end(),
                                        splits.front().parameter) != problem.verifyWithin.end();
        if (p >= 0 && !declared)
            within = verifyWithin(before, splits.front(), static_cast<std::size_t>(p));
    }
    verification = describeVerification(before, splits, within ? &*within : nullptr);
}

TuningSession::Run::Remeasure TuningSession::Run::remeasure(const std::vector<ResultRecord>& records) {
    Remeasure m;
    for (std::size_t i = 0; i < records.size(); ++i) {
        if (const std::optional<std::uint64_t> index = spaceIndexOf(records[i], space, *codec)) {
            m.taken.push_back(compiles.submit(*index, space.at(*index)));
            m.recordOf.push_back(i);
        }
    }
    m.itemOf.assign(m.taken.size(), m.taken.size());
    for (std::size_t i = 0; i < m.taken.size(); ++i) {
        PendingConfig& p = m.taken[i];
        p.collect();
        if (p.compiled && !p.compiled->ok())
            continue;
        m.itemOf[i] = m.items.size();
        m.items.push_back(compiles.measureItem(p));
        m.recordOfItem.push_back(m.recordOf[i]);
    }
    return m;
}

WithinGroupsCheck TuningSession::Run::verifyWithin(const std::vector<ResultRecord>& before,
                                                   const VerificationSplit& split, std::size_t parameter) {
    WithinGroupsCheck check;
    check.parameter = split.parameter;
    std::vector<ResultRecord> wrong;
    std::copy_if(before.begin(), before.end(), std::back_inserter(wrong),
                 [](const ResultRecord& r) { return r.status() == ResultStatus::WrongResult; });
    Remeasure again = remeasure(wrong);
    if (again.items.empty())
        return check;
    MeasureControl control;
    control.perConfigSeconds = options.perConfigSeconds;
    control.cancel = &self.m_cancel;
    control.verifyWithin = {parameter};
    self.m_backend.measure(again.items, control, [&](std::size_t item, Measurement m) {
        if (item >= again.recordOfItem.size() || m.status == ResultStatus::Skipped)
            return;
        ++check.verified;
        tally.addRecordedSeconds(m.benchmarkSeconds);
        ResultRecord r = wrong[again.recordOfItem[item]];
        if (m.status != ResultStatus::WrongResult && m.status != ResultStatus::Ok) {
            if (check.firstDiffering.empty())
                check.firstDiffering =
                    describeConfig(r.config) + ": " + std::string(statusName(m.status)) + ", " + m.message;
            return;
        }
        if (m.status == ResultStatus::WrongResult) {
            if (check.firstDiffering.empty())
                check.firstDiffering = describeConfig(r.config) + ": " + m.message;
            return;
        }
        // It agrees with its group, which is no proof that it is right (a kernel wrong for one
        // value of the parameter agrees with itself): it stays wrong_result, and says so.
        ++check.agree;
        r.measurement.message += "; it agrees with the first config with " + split.parameter + " = " +
                                 r.config.find(split.parameter)->plain() + " (verified again within the groups of " +
                                 split.parameter + ")";
        self.m_store.updateVerdict(r.id, r.measurement, r.objective, m.benchmarkSeconds);
        if (self.m_events.updated)
            self.m_events.updated(r);
    });
    tally.setBest(self.m_store.best(sessionId, options.rankBy));
    return check;
}

void TuningSession::Run::confirmBest() {
    std::vector<ResultRecord> top;
    for (ResultRecord& r : self.m_store.results(sessionId, true, options.confirmTop))
        if (r.ok())
            top.push_back(std::move(r));
    Remeasure again = remeasure(top);
    if (again.taken.empty())
        return;
    const std::vector<PendingConfig>& taken = again.taken;
    const std::vector<std::size_t>& topOf = again.recordOf;
    const std::vector<std::size_t>& itemOf = again.itemOf;
    const std::vector<MeasureItem>& items = again.items;

    // A second input set: each config is verified again on inputs from another seed, against its
    // reference config run on them, so that a kernel right only by accident of the data is caught.
    const std::uint64_t inputSeed = options.seed + 0x9E3779B97F4A7C15ull;
    const bool reseeded = self.m_backend.reseed(inputSeed);

    MeasureControl control;
    control.perConfigSeconds = options.perConfigSeconds;
    control.cancel = &self.m_cancel;
    control.keepSamples = true;
    control.samplesPerConfig = std::max(1, options.confirmSamples);
    const std::vector<RoundPool> pools = measureInterleaved(
        self.m_backend, items, control, std::max<std::size_t>(1, options.confirmRounds), deviceStates);

    const RoundPool unmeasured;
    std::size_t caught = 0;    // wrong on the second input set
    std::string caughtExample; // one of them, for people
    for (std::size_t i = 0; i < taken.size(); ++i) {
        const RoundPool& pool = itemOf[i] < pools.size() ? pools[itemOf[i]] : unmeasured;
        tally.addRecordedSeconds(pool.seconds);
        std::optional<Remeasurement> x = remeasurementOf(top[topOf[i]], pool, options.seed + 1 + i);
        if (!x)
            continue; // cancelled: nothing measured
        if (x->failure.empty()) {
            ResultRecord& r = x->result;
            r.objective = objective->value(space, taken[i].config, r.timeMs(), energyOf(r.measurement.metrics));
            self.m_store.updateTiming(r.id, r.measurement.time, r.objective, pool.seconds);
            if (self.m_events.updated)
                self.m_events.updated(r);
        } else if (reseeded && pool.failed && pool.failed->status == ResultStatus::WrongResult) {
            // Wrong on the second input set: it never wins.
            ResultRecord r = top[topOf[i]];
            const std::optional<StaticInfo> staticInfo = r.measurement.staticInfo;
            const double compileSeconds = r.measurement.compileSeconds;
            r.measurement = *pool.failed;
            r.measurement.staticInfo = staticInfo;
            r.measurement.compileSeconds = compileSeconds;
            r.measurement.message =
                "on a second input set (seed " + std::to_string(inputSeed) + "): " + r.measurement.message;
            r.objective.reset();
            self.m_store.updateVerdict(r.id, r.measurement, std::nullopt, pool.seconds);
            tally.restatus(ResultStatus::Ok, ResultStatus::WrongResult);
            if (self.m_events.updated)
                self.m_events.updated(r);
            ++caught;
            if (caughtExample.empty())
                caughtExample = describeConfig(r.config) + ": " + pool.failed->message;
        }
        remeasured.push_back(std::move(*x));
    }
    if (reseeded)
        secondInputs = caught == 0 ? "the best " + std::to_string(remeasured.size()) +
                                         " configs were verified again on a second input set (seed " +
                                         std::to_string(inputSeed) + ") and agree with their reference config"
                                   : std::to_string(caught) + " of the best " + std::to_string(remeasured.size()) +
                                         " configs are wrong on a second input set (seed " + std::to_string(inputSeed) +
                                         "), right only by accident of the first inputs (" + caughtExample + ")";
    tally.setBest(self.m_store.best(sessionId, options.rankBy));
    confirmation = concludeFinalRound(remeasured, configKey(top.front().config));
}

void TuningSession::Run::profileLeaders() {
    auto hasCounters = [&](const ResultRecord& r) {
        return std::any_of(r.measurement.metrics.begin(), r.measurement.metrics.end(), [&](const Metric& m) {
            return std::find(options.counterNames.begin(), options.counterNames.end(), m.name) !=
                   options.counterNames.end();
        });
    };
    std::vector<ResultRecord> top;
    for (ResultRecord& r : self.m_store.results(sessionId, true, *options.profileTop))
        if (r.ok() && r.timeMs() > 0 && !hasCounters(r))
            top.push_back(std::move(r));
    Remeasure again = remeasure(top);
    const std::vector<MeasureItem>& items = again.items;
    const std::vector<std::size_t>& topOfItem = again.recordOfItem;
    if (items.empty())
        return;
    MeasureControl control;
    control.perConfigSeconds = options.perConfigSeconds;
    control.cancel = &self.m_cancel;
    control.countersOnly = true;
    self.m_backend.measure(items, control, [&](std::size_t i, Measurement m) {
        if (i >= topOfItem.size())
            return;
        tally.addRecordedSeconds(m.benchmarkSeconds);
        pipeline.benchmarkSeconds += std::max(0.0, m.benchmarkSeconds);
        pipeline.parts.counters += m.parts.counters;
        pipeline.parts.profiled += m.parts.profiled;
        if (m.status != ResultStatus::Ok)
            return; // its verdict stands: the search measured it right
        ResultRecord& r = top[topOfItem[i]];
        bool added = false;
        for (Metric& metric : m.metrics) {
            if (std::find(options.counterNames.begin(), options.counterNames.end(), metric.name) !=
                options.counterNames.end()) {
                r.measurement.metrics.push_back(std::move(metric));
                added = true;
            }
        }
        if (!added)
            return;
        self.m_store.updateVerdict(r.id, r.measurement, r.objective, m.benchmarkSeconds);
        if (self.m_events.updated)
            self.m_events.updated(r);
    });
    self.m_store.flush();
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
        m_events.started(run.info, run.progress());
    }
    try {
        run.loop();
        run.judgeWrongResults();
        if (m_options.confirmTop > 0 && !run.backend.simulated && !m_cancel.load())
            run.confirmBest();
        if (m_options.profileTop && !m_options.counterNames.empty() && !run.backend.simulated && !m_cancel.load())
            run.profileLeaders();
        run.keepVerdicts();
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
    summary.progress = run.progress();
    summary.stopReason = run.stopReason;
    summary.remeasured = std::move(run.remeasured);
    summary.confirmation = run.confirmation;
    summary.clocksMoved = run.deviceStates.movedNote();
    summary.implausible = run.tally.implausibleNote();
    if (!run.backend.simulated)
        summary.pipeline = run.pipeline;
    if (run.compiling && m_compiler)
        summary.compileThreads = m_compiler->threadCount();
    summary.verification = run.verification;
    summary.secondInputs = run.secondInputs;
    if (m_events.finished)
        m_events.finished(summary);
    return summary;
}

} // namespace tilescope
