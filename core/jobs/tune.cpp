#include "jobs/tune.h"

#include "jobs/requestcheck.h"

#include "analysis/launchcheck.h"
#include "analysis/pareto.h"
#include "base/error.h"
#include "base/filewrite.h"
#include "base/pythonfiles.h"
#include "exchange/bestconfigs.h"
#include "measure/cuda/workerdepot.h"
#include "measure/metricnames.h"
#include "measure/replay/replaybackend.h"
#include "space/configspace.h"
#include "spec/tuningproblem.h"
#include "store/resultstore.h"
#include "tuner/cacherefresh.h"
#include "tuner/failurewatch.h"
#include "tuner/objective.h"
#include "tuner/sessionsetup.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <system_error>

namespace tilescope {

namespace {

/// The request's notes as the backends and the strategy's choice take them.
std::function<void(const std::string&)> notesFrom(const TuneEvents& events, std::string from = {}) {
    if (!events.note)
        return {};
    return [note = events.note, from = std::move(from)](const std::string& text) { note(from, text); };
}

/// The spec the request names, with --devices, and the options that only a GPU run takes checked.
BackendSpec tuneSpec(const TuneRequest& request) {
    BackendSpec spec = parseBackendSpec(request.backend);
    if (!request.devices.empty()) {
        if (spec.kind != BackendSpec::Kind::Cuda)
            throw InputError("", "--devices", "devices are for --backend cuda");
        if (request.backend != "cuda")
            throw InputError("", "--devices", "give the devices once: --backend " + request.backend + " or --devices");
        spec.devices = parseDeviceList(request.devices);
    }
    const TuneCudaSettings& cuda = request.cuda;
    for (const auto& [flag, name] : {std::pair{cuda.guard, "--guard"}, std::pair{cuda.sanitize, "--sanitize"},
                                     std::pair{!cuda.outputs.empty(), "--outputs"}}) {
        if (flag && spec.kind != BackendSpec::Kind::Cuda)
            throw InputError("", name, std::string(name) + " is for --backend cuda: it runs configs on a GPU");
    }
    if (request.mpi && (!spec.host.empty() || !cuda.launcher.empty()))
        throw InputError("", "--mpi", "the ranks of an MPI job drive their own node's GPUs: no ssh:// or --launcher");
    if (request.mpi && !request.joinCluster)
        throw InputError("", "--mpi",
                         "this tilescope-cli was built without MPI: install Open MPI (Debian: libopenmpi-dev) and "
                         "build again");
    return spec;
}

/// The problem tuned: read (or the one given), with the request's objectives in place of its own.
TuningProblem tunedProblem(const TuneRequest& request) {
    TuningProblem problem = request.problem ? *request.problem : TuningProblem::load(request.problemPath);
    // The first ranks the results, both steer a multi-objective search (as Tilescope.Objectives).
    if (!request.objectives.empty()) {
        problem.objectives = request.objectives;
        for (const std::string& o : problem.objectives)
            objectiveFor(o, problem.objective); // each must be one (a clear message)
        if (problem.objectives.size() == 2 && problem.objectives[0] == problem.objectives[1])
            throw InputError("", "--objective", "'" + problem.objectives[0] + "' is named twice");
        if (problem.objectives.size() > 2)
            throw InputError("", "--objective", "at most two objectives: time, energy or edp");
    }
    if (!problem.objectives.empty())
        problem.objective = objectiveFor(problem.objectives.front(), problem.objective);
    if (problem.objectives.size() < 2)
        problem.objectives.clear();
    return problem;
}

/// The objective that needs energy, for messages.
std::string energyObjectiveName(const TuningProblem& problem) {
    if (problem.objective && problem.objective->needsEnergy())
        return problem.objective->name;
    for (const std::string& o : problem.objectives)
        if (o != "time")
            return o;
    return "energy";
}

/// An objective of energy needs each launch's energy: measured on a GPU, or in the recording a
/// replay gives back. Bad input before any work where it cannot be had.
void requireEnergyIfNeeded(const TuningProblem& problem, const BackendSpec& spec, const TuneRequest& request) {
    if (!objectivesNeedEnergy(problem))
        return;
    const std::string where = !request.objectives.empty()   ? "--objective"
                              : !problem.objectives.empty() ? "/Tilescope/Objectives"
                                                            : "/Tilescope/Objective/Per";
    const std::string file = request.objectives.empty() ? request.problemPath : "";
    if (spec.kind == BackendSpec::Kind::Analysis)
        throw InputError(file, where,
                         "the objective " + energyObjectiveName(problem) +
                             " needs each launch's energy, which NVML measures on a GPU; the analysis backend only "
                             "compiles (use --backend cuda, or replay a recording with energy)");
    if (spec.kind != BackendSpec::Kind::Replay)
        return;
    ReplayBackend recording(spec.recording);
    const std::size_t shape = request.shapeList.empty() && request.shapeSet.shapes.empty() ? request.shape : 0;
    const ConfigSpace space = ConfigSpace::build(problem, shape);
    recording.open(problem, shape, space);
    for (const ResultRecord& r : recording.recordedData().results)
        if (energyOf(r.measurement.metrics))
            return;
    throw InputError(file, where,
                     "the objective " + energyObjectiveName(problem) +
                         " needs each launch's energy, and the recording " + spec.recording.string() +
                         " has none (record it with --metrics energy on a GPU, or import a Kernel Tuner "
                         "cache with nvml_energy)");
}

/// The shapes to tune: the set's, else `shape` alone.
std::vector<std::size_t> tunedShapes(const TuneRequest& request, const TuningProblem& problem) {
    if (!request.shapeList.empty())
        return parseShapeList(request.shapeList, problem.shapes.size());
    if (!request.shapeSet.shapes.empty())
        return request.shapeSet.shapes;
    checkShape(problem, request.shape);
    return {request.shape};
}

/// With two objectives: how many configs make the session's time-energy front, and where to see it.
std::string frontLine(const ResultStore& store, const SessionSummary& summary, const TuningProblem& problem,
                      const std::string& db) {
    std::vector<std::array<double, 2>> points;
    for (const ResultRecord& r : store.results(summary.session.id)) {
        const std::optional<double> joules = energyOf(r.measurement.metrics);
        if (r.ok() && joules)
            points.push_back({r.timeMs(), problem.objectives[1] == "edp" ? *joules * r.timeMs() : *joules});
    }
    const std::string second = problem.objectives[1] == "edp" ? "energy-delay" : "energy";
    if (points.empty())
        return "  front       no config has both time and " + second + "\n";
    return "  front       " + std::to_string(paretoFront(points).size()) + " of " + std::to_string(points.size()) +
           " configs trade time for " + second + " (tilescope-cli show " + db + " --session " +
           std::to_string(summary.session.id) + " --pareto time,energy)\n";
}

/// The results database, made when the run first stores something: a run that stops before (a
/// recording that does not match, no GPU) leaves no empty file behind, and no run ever deletes a
/// database, which another run may have opened meanwhile.
ResultStore openTuneStore(const TuneRequest& request) {
    const std::filesystem::path path = request.database;
    if (path.empty())
        throw InputError("", "", "no results database given");
    if (request.makeDatabaseFolder && path.has_parent_path()) {
        std::error_code ec;
        std::filesystem::create_directories(path.parent_path(), ec); // open() reports a folder it cannot use
    }
    StoreOptions options;
    options.createOnFirstWrite = true;
    return ResultStore::open(path, StoreMode::ReadWrite, options);
}

/// The shapes of `onlyStale`'s cache that are stale or missing for this kernel on the backend's
/// machine, said in a line; nullopt without onlyStale.
std::optional<CacheRefresh> planRefresh(const TuneRequest& request, const TuningProblem& problem,
                                        const BackendSpec& spec, const TuneEvents& events) {
    if (request.onlyStale.empty())
        return std::nullopt;
    CacheRefresh refresh =
        planCacheRefresh(request.onlyStale, problem, cacheTargetOf(spec, problem, notesFrom(events)));
    const std::string where = refresh.target.deviceName.empty() ? "" : " on " + refresh.target.deviceName;
    if (!events.line)
        return refresh;
    if (refresh.shapes.empty())
        events.line("Cache " + request.onlyStale + ": nothing is stale for kernel " + problem.kernelName + where +
                    "; nothing to tune");
    else
        events.line("Cache " + request.onlyStale + ": re-tuning " + std::to_string(refresh.shapes.size()) + " of " +
                    std::to_string(std::max<std::size_t>(1, problem.shapes.size())) +
                    " shapes (stale or missing for kernel " + problem.kernelName + where + ")");
    return refresh;
}

/// The cache rewritten: its fresh entries (and other machines') as they were, the stale ones
/// replaced by the winners of the sessions after `lastBefore`.
void rewriteCache(const TuneRequest& request, const CacheRefresh& refresh, ResultStore& store, std::int64_t lastBefore,
                  const TuneEvents& events) {
    store.flush();
    std::vector<SessionData> tuned;
    for (const SessionInfo& info : store.sessions())
        if (info.id > lastBefore)
            tuned.push_back(store.load(info.id));
    const std::vector<BestConfig> rewritten = refreshedCache(refresh, tuned);
    writeFileAtomically(request.onlyStale, writeBestConfigsJson(rewritten), "--only-stale");
    const std::size_t kept = refresh.cached.size() - refresh.staleEntries.size();
    if (events.line)
        events.line("rewrote " + request.onlyStale + ": " + std::to_string(kept) + " entries kept, " +
                    std::to_string(rewritten.size() - kept) + " from this run");
}

/// Tells TuneEvents::running of a session while it runs.
class RunningSession {
public:
    RunningSession(const TuneEvents& events, TuningSession& session)
        : m_events(events) {
        if (m_events.running)
            m_events.running(&session);
    }
    ~RunningSession() {
        if (m_events.running)
            m_events.running(nullptr);
    }
    RunningSession(const RunningSession&) = delete;
    RunningSession& operator=(const RunningSession&) = delete;

private:
    const TuneEvents& m_events;
};

/// The sessions of one run: each on the run's backend, store and compile service.
struct TuneRun {
    const TuneRequest& request;
    const TuneEvents& events;
    const TuningProblem& problem;
    const BackendSpec& spec;
    Backend& backend;
    ResultStore& store;
    CompileService* compiler;
    std::string objectiveName; // of the session running

    SessionSummary runOne(const SessionOptions& options) {
        SessionEvents sessionEvents = events.session;
        sessionEvents.started = [this](const SessionInfo& info, const SessionProgress& progress) {
            objectiveName = info.objectiveName;
            if (events.session.started)
                events.session.started(info, progress);
            if (events.started)
                events.started(info, progress, store.results(info.id)); // a resumed session's results so far
        };
        TuningSession session(problem, backend, store, options, sessionEvents, compiler);
        SessionSummary summary;
        {
            const RunningSession running(events, session);
            try {
                summary = session.run();
            } catch (const SystematicFailure& e) {
                if (request.keepGoingOption.empty())
                    throw;
                throw InputError(e.file(), e.location(),
                                 e.message() + "; the session is kept as failed (" + request.keepGoingOption +
                                     " tunes on regardless)");
            }
        }
        if (events.ended) {
            SessionReport report = sessionReport(summary, {request.problemPath, request.database, options.shapeIndex,
                                                           objectiveName, spec, &backend, options.rankBy});
            if (problem.objectives.size() == 2)
                report.text += frontLine(store, summary, problem, request.database);
            events.ended({summary, std::move(report)});
        }
        return summary;
    }
};

} // namespace

/// The session's options (the shape is the shape set's to set).
SessionOptions tuneSessionOptions(const TuneRequest& request, const BackendSpec& spec, const TuningProblem& problem,
                                  const TuneEvents& events) {
    SessionOptions options;
    options.seed = request.seed;
    options.resume = request.resume;
    options.backendLabel = (request.mpi ? "mpi:" : "") + spec.label();
    if (!request.part.empty()) {
        const SweepPart part = parseSweepPart(request.part);
        if (!request.shapeList.empty() || !request.shapeSet.shapes.empty())
            throw InputError("", "--part", "a split sweep tunes one shape (a job array runs one shape per task)");
        options.partIndex = part.index;
        options.partCount = part.count;
        if (part.count > 1)
            options.backendLabel += " (part " + request.part + ")";
    }
    if (spec.kind == BackendSpec::Kind::Analysis)
        options.arch = spec.arch;
    options.budget = request.budget ? *request.budget : Budget::fromProblem(problem);
    options.strategy = chooseStrategy(request.strategy, problem, options.budget, notesFrom(events));
    // Two objectives: a search that spreads along their front, unless one was chosen.
    if (problem.objectives.size() == 2 && !request.strategy && problem.searchName.empty() &&
        options.budget.mayEndEarly()) {
        options.strategy = "nsga2";
        if (events.note)
            events.note({}, "strategy nsga2: it searches for the " + problem.objectives[0] + "-" +
                                problem.objectives[1] + " front");
    }
    options.confirmTop = request.confirmTop;
    options.confirmRounds = request.confirmRounds;
    const bool timeRanks = std::all_of(problem.objectives.begin(), problem.objectives.end(),
                                       [](const std::string& o) { return o == "time"; });
    options.raceMargin = timeRanks ? request.raceMargin : std::nullopt;
    const std::vector<std::string>& metrics = request.cuda.metrics ? *request.cuda.metrics : problem.metrics;
    if (request.profileAll || wantsEveryConfigProfiled(metrics))
        options.profileTop = std::nullopt;
    if (spec.kind == BackendSpec::Kind::Cuda) {
        options.counterNames = cuptiMetricNames(expandMetricNames(metrics));
        options.gpuStateMetrics = wantsGpuState(metrics);
    }
    if (request.stopEarly)
        options.earlyStop = EarlyStop{};
    options.stopOnSystematicFailure = !request.keepGoing;
    options.rankBy = request.rankBy;
    return options;
}

BackendOptions tuneBackendOptions(const TuneRequest& request, const BackendSpec& spec, const TuningProblem& problem,
                                  const TuneEvents& events, const std::string& from) {
    BackendOptions options;
    options.replay.delay = std::max(std::chrono::milliseconds(0), request.replayDelay);
    options.replay.pace = request.replayPace;
    if (spec.kind != BackendSpec::Kind::Cuda)
        return options;
    const TuneCudaSettings& asked = request.cuda;
    CudaBackendOptions& cuda = options.cuda;
    cuda.metrics = expandMetricNames(asked.metrics ? *asked.metrics : problem.metrics);
    if (objectivesNeedEnergy(problem) && !wantsEnergy(cuda.metrics))
        cuda.metrics.push_back(std::string(kEnergyMetric)); // the objective is of each launch's energy
    cuda.verify = asked.verify;
    cuda.guard = asked.guard ? GuardPolicy::Every : GuardPolicy::Reference;
    cuda.sanitize = asked.sanitize;
    cuda.outputsDir = asked.outputs;
    cuda.seed = request.seed;
    cuda.timing.maxSeconds = asked.sampleSeconds;
    cuda.timing.minSamples = asked.minSamples;
    if (const std::string why = worker::setL2Context(asked.context, cuda.timing); !why.empty())
        throw InputError("", "--context", why);
    if (!asked.launcher.empty())
        cuda.launcher = splitCommand(asked.launcher); // else the spec's (ssh://)
    if (!asked.launcher.empty() && !spec.host.empty())
        throw InputError("", "--launcher", "give one way to reach the GPUs: ssh://" + spec.host + " or --launcher");
    cuda.remoteWorker = asked.remoteWorker;
    cuda.watchdogSeconds = asked.configTimeout;
    cuda.note = notesFrom(events, from);
    return options;
}

ScriptWorkers::ScriptWorkers(const std::string& backend) {
    if (const char* off = std::getenv(kWorkerDepotVariable); off && std::string_view(off) == "off")
        return;
    BackendSpec spec;
    try {
        spec = parseBackendSpec(backend);
    } catch (const std::exception&) {
        return; // the tunes say what is wrong with it
    }
    const std::filesystem::path worker = workerProgram();
    std::error_code ec;
    if (spec.kind != BackendSpec::Kind::Cuda || !spec.host.empty() || !std::filesystem::exists(worker, ec))
        return;
    try {
        m_depot = std::make_unique<WorkerDepot>(worker, spec.devices.empty() ? std::vector<int>{0} : spec.devices);
    } catch (const std::exception&) {
        m_depot.reset(); // each tune starts its own worker
    }
}

ScriptWorkers::~ScriptWorkers() = default;

std::optional<std::pair<std::string, std::string>> ScriptWorkers::environment() const {
    if (!m_depot)
        return std::nullopt;
    return std::pair<std::string, std::string>(kWorkerDepotVariable, m_depot->socketPath());
}

std::optional<double> parseRaceMargin(const std::string& text) {
    if (text == "off")
        return std::nullopt;
    const bool percent = !text.empty() && text.back() == '%';
    const std::string number = percent ? text.substr(0, text.size() - 1) : text;
    double value = 0;
    std::size_t used = 0;
    try {
        value = std::stod(number, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (number.empty() || used != number.size() || !std::isfinite(value))
        throw InputError("", "--race",
                         "'" + text + "' is not a margin: give a percentage (5%), a fraction (0.05) or off");
    if (percent)
        value /= 100.0;
    if (value < 0 || value > 10)
        throw InputError("", "--race", "the margin " + text + " is outside 0 to 1000 %");
    return value;
}

TuneOutcome runTune(const TuneRequest& request, const TuneEvents& events) {
    const BackendSpec spec = tuneSpec(request);
    TuneOutcome outcome;
    // With an MPI job, every rank but 0 serves rank 0 from here on; rank 0 makes its backend
    // before anything can fail, so that the ranks hear from it (at worst that they may go).
    std::unique_ptr<TuneCluster> cluster;
    if (request.mpi) {
        cluster = request.joinCluster(request, spec, events);
        if (!cluster->leads()) {
            outcome.served = cluster->serve();
            return outcome;
        }
    }

    const TuningProblem problem = tunedProblem(request);
    requireEnergyIfNeeded(problem, spec, request);
    if (spec.compiles())
        problem.requireLaunchable(); // before any work
    std::vector<std::size_t> shapes = tunedShapes(request, problem);
    // A launch that cannot be right is said before any GPU time (a replay launches nothing).
    if (events.launchWarning && spec.kind != BackendSpec::Kind::Replay)
        for (const std::size_t shape : shapes)
            for (const LaunchWarning& w : checkLaunch(problem, shape, ConfigSpace::build(problem, shape)))
                events.launchWarning(shape, w);
    const std::unique_ptr<Backend> ownBackend =
        cluster ? nullptr : makeBackend(spec, tuneBackendOptions(request, spec, problem, events));
    Backend& backend = cluster ? cluster->backend() : *ownBackend;
    const SessionOptions options = tuneSessionOptions(request, spec, problem, events);

    // Only the shapes whose cache entry (for this kernel on this machine) is stale or missing,
    // and nothing at all when none is.
    const std::optional<CacheRefresh> refresh = planRefresh(request, problem, spec, events);
    if (refresh) {
        if (refresh->shapes.empty())
            return outcome;
        shapes = refresh->shapes;
    }
    // Configs are compiled (NVRTC, on a pool, through the on-disk cache) when the backend runs
    // them; in an MPI job, by the ranks.
    const std::unique_ptr<CompileService> ownCompiler =
        cluster ? nullptr : makeCompileService(spec, request.jobs, !request.noCache, request.cacheDir);
    if (request.cancel && request.cancel->load()) // nothing stored yet: nothing to store
        throw std::runtime_error("cancelled before the session started");
    ResultStore store = openTuneStore(request);

    std::int64_t lastBefore = 0; // sessions after it are this run's
    if (refresh)
        for (const SessionInfo& info : store.sessions())
            lastBefore = std::max(lastBefore, info.id);
    TuneRun run{request, events, problem, spec, backend, store, cluster ? cluster->compiles() : ownCompiler.get(), {}};
    ShapeSetOptions set = request.shapeSet;
    set.shapes = shapes;
    if (set.database.empty())
        set.database = request.database;
    const ShapeSetResult result = runShapeSet(
        problem, store, set, options, [&run](const SessionOptions& one) { return run.runOne(one); }, events.line);
    outcome.cancelled = result.cancelled;
    outcome.sessions = result.sessions;
    outcome.last = result.last;
    if (request.loadShapeSet && result.sessions.size() > 1)
        for (const std::int64_t id : result.sessions)
            outcome.shapeSet.push_back(store.load(id));
    if (refresh && !outcome.cancelled)
        rewriteCache(request, *refresh, store, lastBefore, events);
    return outcome;
}

void checkBackendSpec(std::string_view spec, const std::string& field) {
    (void)parseBackendSpec(spec, field);
}

} // namespace tilescope
