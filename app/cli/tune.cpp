// tilescope-cli tune: a tuning session (or a shape set) from the command line. The engine is
// core/tuner (the session, the shape set, the backend a spec names, the summary); this file wires
// them from the options (tuneoptions.cpp), shows progress on stderr and the summary on stdout.

#include "tuneoptions.h"

#include "analysis/pareto.h"
#include "base/error.h"
#include "base/filewrite.h"
#include "measure/metricnames.h"
#include "measure/replay/replaybackend.h"
#ifdef TILESCOPE_HAVE_MPI
#include "measure/mpi/clusterbackend.h"
#endif
#include "space/configspace.h"
#include "spec/tuningproblem.h"
#include "store/resultstore.h"
#include "tuner/backendspec.h"
#include "tuner/cacherefresh.h"
#include "tuner/objective.h"
#include "tuner/sessionreport.h"
#include "tuner/sessionsetup.h"
#include "tuner/shapesetrun.h"
#include "tuner/tuningsession.h"

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>

namespace tilescope::cli {

namespace {

// The session a signal cancels. cancel() only sets an atomic flag, which a handler may do.
std::atomic<TuningSession*> g_session{nullptr};

void cancelSessionOnSignal(int) {
    if (TuningSession* s = g_session.load())
        s->cancel();
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
/// replay gives back. Bad input (exit 2) before any work where it cannot be had.
void requireEnergyIfNeeded(const TuningProblem& problem, const BackendSpec& spec, const TuneOptions& opt) {
    if (!objectivesNeedEnergy(problem))
        return;
    const std::string where = !opt.objective.empty()        ? "--objective"
                              : !problem.objectives.empty() ? "/Tilescope/Objectives"
                                                            : "/Tilescope/Objective/Per";
    const std::string file = opt.objective.empty() ? opt.problemPath : "";
    if (spec.kind == BackendSpec::Kind::Analysis)
        throw InputError(file, where,
                         "the objective " + energyObjectiveName(problem) +
                             " needs each launch's energy, which NVML measures on a GPU; the analysis backend only "
                             "compiles (use --backend cuda, or replay a recording with energy)");
    if (spec.kind != BackendSpec::Kind::Replay)
        return;
    ReplayBackend recording(spec.recording);
    const std::size_t shape = opt.shapes.empty() ? opt.shape : 0;
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

/// The shapes to tune: --shapes all or a list, else --shape alone.
std::vector<std::size_t> shapeList(const TuneOptions& opt, const TuningProblem& problem) {
    if (opt.shapes.empty()) {
        checkShape(problem, opt.shape);
        return {opt.shape};
    }
    if (opt.shapeOption->count() > 0)
        throw InputError("", "--shapes", "give --shape or --shapes, not both");
    return parseShapeList(opt.shapes, problem.shapes.size());
}

/// The backends' settings from the command line; the CUDA backend's notes go to stderr after `who`.
BackendOptions backendOptions(const TuneOptions& opt, const BackendSpec& spec, const TuningProblem& problem,
                              const std::string& who = {}) {
    BackendOptions options;
    options.replay.delay = std::chrono::milliseconds(std::max(0, opt.replayDelayMs));
    options.replay.pace = opt.replayPace;
    if (spec.kind != BackendSpec::Kind::Cuda)
        return options;
    CudaBackendOptions& cuda = options.cuda;
    cuda.metrics = expandMetricNames(opt.metricsOption->count() > 0 ? splitList(opt.metrics) : problem.metrics);
    if (objectivesNeedEnergy(problem) && !wantsEnergy(cuda.metrics))
        cuda.metrics.push_back(std::string(kEnergyMetric)); // the objective is of each launch's energy
    cuda.verify = !opt.noVerify;
    cuda.guard = opt.guard ? GuardPolicy::Every : GuardPolicy::Reference;
    cuda.sanitize = opt.sanitize;
    cuda.outputsDir = opt.outputs;
    cuda.seed = opt.seed;
    cuda.timing.maxSeconds = opt.sampleSeconds;
    cuda.timing.minSamples = opt.minSamples;
    if (const std::string why = worker::setL2Context(opt.context, cuda.timing); !why.empty())
        throw InputError("", "--context", why);
    if (!opt.launcher.empty())
        cuda.launcher = splitCommand(opt.launcher); // else the spec's (ssh://)
    if (!opt.launcher.empty() && !spec.host.empty())
        throw InputError("", "--launcher", "give one way to reach the GPUs: ssh://" + spec.host + " or --launcher");
    cuda.remoteWorker = opt.remoteWorker;
    cuda.watchdogSeconds = opt.configTimeout;
    cuda.note = stderrNotes(who);
    return options;
}

#ifdef TILESCOPE_HAVE_MPI
/// The slots of this rank of an MPI job: one per GPU of its share of the node's, or the replays.
std::vector<std::unique_ptr<Backend>> mpiSlots(const TuneOptions& opt, const BackendSpec& spec, const MpiJob& job,
                                               const TuningProblem& problem) {
    std::vector<std::unique_ptr<Backend>> slots;
    // A coordinating rank 0 measures nothing; the other ranks of its node share its GPUs.
    if (opt.mpiCoordinator && job.rank() == 0)
        return slots;
    if (spec.kind == BackendSpec::Kind::Replay) {
        for (std::size_t i = 0; i < opt.replaySlots; ++i)
            slots.push_back(makeBackend(spec, backendOptions(opt, spec, problem)));
        return slots;
    }
    if (spec.kind == BackendSpec::Kind::Analysis) {
        slots.push_back(makeBackend(spec)); // measures nothing: the rank is there to compile
        return slots;
    }
    const std::string who = job.size() > 1 ? "rank " + std::to_string(job.rank()) + ": " : "";
    const int besideCoordinator = opt.mpiCoordinator && job.sharesNodeWithRank0() ? 1 : 0;
    for (int device :
         localGpus(spec.devices, job.localRank() - besideCoordinator, job.localSize() - besideCoordinator)) {
        BackendSpec one = spec;
        one.devices = {device};
        slots.push_back(makeBackend(one, backendOptions(opt, spec, problem, who)));
    }
    return slots;
}

/// The compile service of this rank of an MPI job: --jobs threads, else this node's hardware
/// threads shared out among the ranks of the node that compile (a coordinating rank 0 does not),
/// or the CPUs the rank is bound to when the launcher bound it to fewer (then it says so).
std::optional<CompileServiceOptions> mpiCompiler(const TuneOptions& opt, const BackendSpec& spec, const MpiJob& job) {
    const int besideCoordinator = opt.mpiCoordinator && job.sharesNodeWithRank0() ? 1 : 0;
    const int sharers = std::max(1, job.localSize() - (opt.mpiCoordinator && job.rank() == 0 ? 0 : besideCoordinator));
    const unsigned share = std::max(1u, ThreadPool::machineThreads() / unsigned(sharers));
    const unsigned usable = ThreadPool::usableThreads();
    unsigned threads = opt.jobs ? opt.jobs : std::min(share, usable);
    if (!opt.jobs && usable < share)
        std::fprintf(stderr,
                     "note: rank %d is bound to %u of its node's %u CPUs, so it compiles on %u thread%s (mpirun "
                     "binds each rank to a core unless given --bind-to none, or --map-by ...:PE=N for N a rank)\n",
                     job.rank(), usable, ThreadPool::machineThreads(), threads, threads == 1 ? "" : "s");
    return compileServiceOptions(spec, threads, !opt.noCache, opt.cacheDir);
}
#endif

/// The session's options from the command line (the shape is the run's to set).
SessionOptions sessionOptions(const TuneOptions& opt, const BackendSpec& spec, const TuningProblem& problem) {
    SessionOptions options;
    options.seed = opt.seed;
    options.resume = opt.resume;
    options.backendLabel = (opt.mpi ? "mpi:" : "") + spec.label();
    if (!opt.part.empty()) {
        const SweepPart part = parseSweepPart(opt.part);
        if (!opt.shapes.empty())
            throw InputError("", "--part", "a split sweep tunes one shape (a job array runs one shape per task)");
        options.partIndex = part.index;
        options.partCount = part.count;
        if (part.count > 1)
            options.backendLabel += " (part " + opt.part + ")";
    }
    if (spec.kind == BackendSpec::Kind::Analysis)
        options.arch = spec.arch;
    if (opt.budgetOption->count() > 0)
        options.budget.configs = opt.budget;
    else if (opt.fractionOption->count() > 0)
        options.budget.fraction = opt.fraction;
    else if (opt.maxTimeOption->count() > 0)
        options.budget.seconds = opt.maxTime;
    else
        options.budget = Budget::fromProblem(problem);
    options.strategy = chooseStrategy(!opt.strategy.empty() ? std::optional(opt.strategy) : std::nullopt, problem,
                                      options.budget, stderrNotes());
    // Two objectives: a search that spreads along their front, unless one was chosen.
    if (problem.objectives.size() == 2 && opt.strategy.empty() && problem.searchName.empty() &&
        options.budget.mayEndEarly()) {
        options.strategy = "nsga2";
        std::fprintf(stderr, "note: strategy nsga2: it searches for the %s-%s front\n", problem.objectives[0].c_str(),
                     problem.objectives[1].c_str());
    }
    options.confirmTop = opt.confirm;
    options.confirmRounds = opt.confirmRounds;
    if (opt.stopEarly)
        options.earlyStop = EarlyStop{};
    options.stopOnSystematicFailure = !opt.keepGoing;
    options.rankBy = opt.rankBy;
    return options;
}

} // namespace

int runTune(const TuneOptions& given) {
    OpenedProblem opened; // a database's problem, with its session's options
    const TuneOptions opt = resolveTuneOptions(given, opened);
    BackendSpec spec = parseBackendSpec(opt.backend);
    if (!opt.devices.empty()) {
        if (spec.kind != BackendSpec::Kind::Cuda)
            throw InputError("", "--devices", "devices are for --backend cuda");
        if (opt.backend != "cuda")
            throw InputError("", "--devices", "give the devices once: --backend " + opt.backend + " or --devices");
        spec.devices = parseDeviceList(opt.devices);
    }
    for (const auto& [flag, name] : {std::pair{opt.guard, "--guard"}, std::pair{opt.sanitize, "--sanitize"},
                                     std::pair{!opt.outputs.empty(), "--outputs"}}) {
        if (flag && spec.kind != BackendSpec::Kind::Cuda)
            throw InputError("", name, std::string(name) + " is for --backend cuda: it runs configs on a GPU");
    }

    // With --mpi, every rank but 0 serves rank 0 from here on; rank 0 makes its backend before
    // anything can fail, so that the ranks hear from it (at worst that they may go).
#ifdef TILESCOPE_HAVE_MPI
    std::unique_ptr<MpiJob> mpi; // finalized after the backend tells the ranks to go
#endif
    std::unique_ptr<Backend> backend;
    CompileService* rankCompiles = nullptr; // with --mpi: the ranks compile
    if (opt.mpi) {
        if (!spec.host.empty() || !opt.launcher.empty())
            throw InputError("", "--mpi",
                             "the ranks of an MPI job drive their own node's GPUs: no ssh:// or --launcher");
#ifdef TILESCOPE_HAVE_MPI
        mpi = std::make_unique<MpiJob>(nullptr, nullptr);
        ClusterOptions cluster;
        cluster.silenceSeconds = opt.mpiSilence;
        cluster.note = stderrNotes(mpi->rank() == 0 ? "" : "rank " + std::to_string(mpi->rank()) + ": ");
        cluster.compiler = [&opt, &spec, job = mpi.get()] { return mpiCompiler(opt, spec, *job); };
        SlotFactory slots = [&opt, &spec, job = mpi.get()](const TuningProblem& p) {
            return mpiSlots(opt, spec, *job, p);
        };
        if (mpi->rank() != 0)
            return serveClusterRank(*mpi, slots, cluster);
        auto clusterBackend = std::make_unique<ClusterBackend>(*mpi, slots, cluster);
        rankCompiles = clusterBackend->compiles();
        backend = std::move(clusterBackend);
        if (mpi->size() > 1 && !mpi->survivesLostRanks())
            std::fprintf(stderr, "note: without mpirun --enable-recovery, a rank that dies ends the whole job (what "
                                 "is stored stays; --resume continues)\n");
#else
        throw InputError("", "--mpi",
                         "this tilescope-cli was built without MPI: install Open MPI (Debian: libopenmpi-dev) and "
                         "build again");
#endif
    }

    TuningProblem problem = opened.stored ? std::move(opened.problem) : TuningProblem::load(opt.problemPath);
    // --objective A[,B]: the first ranks the results, both steer a multi-objective search (as
    // Tilescope.Objectives).
    if (!opt.objective.empty()) {
        problem.objectives = splitList(opt.objective);
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
    requireEnergyIfNeeded(problem, spec, opt);
    if (spec.compiles())
        problem.requireLaunchable(); // before any work
    std::vector<std::size_t> shapes = shapeList(opt, problem);
    // A launch that cannot be right is said before any GPU time (a replay launches nothing).
    for (const std::size_t shape : shapes)
        if (spec.kind != BackendSpec::Kind::Replay)
            printLaunchWarnings(problem, shape, ConfigSpace::build(problem, shape), opt.problemPath);
    if (!backend)
        backend = makeBackend(spec, backendOptions(opt, spec, problem));
    const SessionOptions options = sessionOptions(opt, spec, problem);

    // --only-stale: the shapes whose cache entry (for this kernel on this machine) is stale or
    // missing, and nothing at all when none is.
    std::optional<CacheRefresh> refresh;
    if (!opt.onlyStale.empty()) {
        refresh = planCacheRefresh(opt.onlyStale, problem, cacheTargetOf(spec, problem, stderrNotes()));
        const std::string where = refresh->target.deviceName.empty() ? "" : " on " + refresh->target.deviceName;
        if (refresh->shapes.empty()) {
            std::printf("Cache %s: nothing is stale for kernel %s%s; nothing to tune\n", opt.onlyStale.c_str(),
                        problem.kernelName.c_str(), where.c_str());
            return kOk;
        }
        shapes = refresh->shapes;
        std::printf("Cache %s: re-tuning %zu of %zu shapes (stale or missing for kernel %s%s)\n", opt.onlyStale.c_str(),
                    shapes.size(), std::max<std::size_t>(1, problem.shapes.size()), problem.kernelName.c_str(),
                    where.c_str());
    }

    // A new database is made when the run first stores something: a run that stops before (a
    // recording that does not match, no GPU) leaves no empty file behind, and no run ever deletes
    // a database, which another run may have opened meanwhile.
    StoreOptions storeOptions;
    storeOptions.createOnFirstWrite = true;
    ResultStore store = ResultStore::open(opt.db, StoreMode::ReadWrite, storeOptions);

    std::unique_ptr<Progress> progress;
    std::uint64_t priorDone = 0;
    std::string objectiveName;
    auto bestNote = [&](const SessionProgress& p) {
        return p.best ? "best " + bestResultText(*p.best, objectiveName, opt.rankBy) : std::string();
    };
    SessionEvents events;
    events.started = [&](const SessionInfo& info, const SessionProgress& p) {
        priorDone = p.done;
        objectiveName = info.objectiveName;
        std::string verb = "tuned";
        if (priorDone > 0)
            verb = "tuned (resumed; " + formatCount(double(priorDone)) + " done before)";
        progress = std::make_unique<Progress>(verb, p.total > priorDone ? p.total - priorDone : 0);
    };
    events.note = [](const std::string& text) { std::fprintf(stderr, "note: --resume: %s\n", text.c_str()); };
    events.warning = [&](const LaunchWarning& w) {
        std::fprintf(stderr, "warning: %s: %s: %s\n", opt.problemPath.c_str(), w.location.c_str(), w.message.c_str());
    };
    events.progress = [&](const SessionProgress& p) {
        if (progress)
            progress->update(p.done - std::min(p.done, priorDone), bestNote(p));
    };

    // Configs are compiled (NVRTC, on a pool, through the on-disk cache) when the backend runs them;
    // with --mpi, by the ranks that measure.
    const std::unique_ptr<CompileService> ownCompiler =
        rankCompiles ? nullptr : makeCompileService(spec, opt.jobs, !opt.noCache, opt.cacheDir);
    CompileService* const compiler = rankCompiles ? rankCompiles : ownCompiler.get();

    // One session: run, then its summary on stdout.
    auto runOne = [&](const SessionOptions& run) -> SessionSummary {
        TuningSession session(problem, *backend, store, run, events, compiler);
        g_session.store(&session);
        const auto oldInt = std::signal(SIGINT, cancelSessionOnSignal);
        const auto oldTerm = std::signal(SIGTERM, cancelSessionOnSignal);
        struct Restore {
            void (*oldInt)(int);
            void (*oldTerm)(int);
            ~Restore() {
                g_session.store(nullptr);
                std::signal(SIGINT, oldInt);
                std::signal(SIGTERM, oldTerm);
            }
        } restore{oldInt, oldTerm};
        SessionSummary summary;
        try {
            summary = session.run();
        } catch (const SystematicFailure& e) {
            progress.reset();
            throw InputError(e.file(), e.location(),
                             e.message() + "; the session is kept as failed (--keep-going tunes on regardless)");
        }
        // The progress line's last state: complete only when the session got through its total (a
        // cancelled or timed-out run ends on its last update; the summary says where it stopped).
        const SessionProgress& p = summary.progress;
        if (progress && p.done + p.counts.of(ResultStatus::Skipped) >= p.total)
            progress->finish(bestNote(p));
        const SessionReport report = sessionReport(
            summary, {opt.problemPath, opt.db, run.shapeIndex, objectiveName, spec, backend.get(), run.rankBy});
        std::fputs(report.text.c_str(), stdout);
        if (problem.objectives.size() == 2)
            std::fputs(frontLine(store, summary, problem, opt.db).c_str(), stdout);
        for (const std::string& warning : report.warnings)
            std::fprintf(stderr, "warning: %s\n", warning.c_str());
        for (const std::string& note : report.notes)
            std::fprintf(stderr, "note: %s\n", note.c_str());
        return summary;
    };

    std::int64_t lastBefore = 0; // sessions after it are this run's
    for (const SessionInfo& info : store.sessions())
        lastBefore = std::max(lastBefore, info.id);
    ShapeSetOptions set = opt.shapeSet;
    set.shapes = shapes;
    set.database = opt.db;
    const bool cancelled = runShapeSet(problem, store, set, options, runOne, [](const std::string& line) {
                               std::printf("%s\n", line.c_str());
                               std::fflush(stdout);
                           }).cancelled;
    if (cancelled)
        return 130;
    if (!refresh)
        return kOk;
    // The cache rewritten: its fresh entries (and other machines') as they were, the stale ones
    // replaced by this run's winners.
    store.flush();
    std::vector<SessionData> tuned;
    for (const SessionInfo& info : store.sessions())
        if (info.id > lastBefore)
            tuned.push_back(store.load(info.id));
    const std::vector<BestConfig> rewritten = refreshedCache(*refresh, tuned);
    writeFileAtomically(opt.onlyStale, writeBestConfigsJson(rewritten), "--only-stale");
    const std::size_t kept = refresh->cached.size() - refresh->staleEntries.size();
    std::printf("rewrote %s: %zu entries kept, %zu from this run\n", opt.onlyStale.c_str(), kept,
                rewritten.size() - kept);
    return kOk;
}

} // namespace tilescope::cli
