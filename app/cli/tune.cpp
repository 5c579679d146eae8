// tilescope-cli tune: a tuning session from the command line. The engine is TuningSession in
// core/tuner; this file picks the backend, the strategy and the budget from the options, shows
// progress on stderr and a summary on stdout.

#include "cli.h"

#include "analysis/clocks.h"
#include "base/error.h"
#include "base/filewrite.h"
#include "compile/compilecache.h"
#include "compile/compileservice.h"
#include "exchange/configcodec.h"
#include "exchange/exchange.h"
#include "measure/analysis/analysisbackend.h"
#include "measure/cuda/cudabackend.h"
#include "measure/metricnames.h"
#ifdef TILESCOPE_HAVE_MPI
#include "measure/mpi/clusterbackend.h"
#endif
#include "measure/replay/replaybackend.h"
#include "search/strategy.h"
#include "shapes/dispatchtable.h"
#include "space/configspace.h"
#include "spec/tuningproblem.h"
#include "store/resultstore.h"
#include "tuner/backendspec.h"
#include "tuner/tuningsession.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <set>

namespace tilescope::cli {

namespace {

struct TuneOptions {
    std::string problemPath;
    std::string backend;
    std::string strategy;
    std::uint64_t budget = 0;
    double fraction = 0;
    double maxTime = 0;
    std::uint64_t seed = 0;
    std::string db;
    bool resume = false;
    std::size_t shape = 0;
    int replayDelayMs = 0;
    double replayPace = 0;       ///< testing aid: wall time per replayed config, in recorded benchmark times
    std::size_t replaySlots = 1; ///< testing aid: replay slots per MPI rank (simulated GPUs)
    bool mpi = false;            ///< one session across the ranks of an MPI job
    bool mpiCoordinator = false; ///< rank 0 measures nothing
    std::string part;            ///< "I/N": one part of an exhaustive sweep split across tasks
    double mpiSilence = 30;      ///< a rank silent this long is lost
    // --backend cuda
    std::string devices;
    std::string metrics;
    unsigned jobs = 0;
    std::string cacheDir;
    bool noCache = false;
    bool noVerify = false;
    bool guard = false;    ///< every config on guarded buffers
    bool sanitize = false; ///< the first config once under compute-sanitizer
    bool keepGoing = false;
    double configTimeout = 0;
    double sampleSeconds = 0.25;
    int minSamples = 10;
    std::size_t confirm = 3;
    std::size_t confirmRounds = 5;
    std::string context = "flush";                 ///< the L2 before each sample: flush, warm, pollute:SIZE
    std::string launcher;                          ///< a command that starts the worker elsewhere
    std::string remoteWorker = "tilescope-worker"; ///< the worker's path there
    // shape sets
    std::string shapes;        ///< "all" or "0,2,5"; "" = --shape alone
    std::size_t seedTop = 3;   ///< winners of the shapes tuned before that start a shape's search
    std::size_t crossEval = 0; ///< top configs of each shape measured on every other shape
    bool stopEarly = false;    ///< stop a search when the regime says more cannot pay
    std::string onlyStale;     ///< a JSON cache: tune only its stale or missing shapes, then rewrite it
    CLI::Option* shapeOption = nullptr;
    CLI::Option* metricsOption = nullptr;
    CLI::Option* strategyOption = nullptr;
    CLI::Option* budgetOption = nullptr;
    CLI::Option* fractionOption = nullptr;
    CLI::Option* maxTimeOption = nullptr;
};

// The session a signal cancels. cancel() only sets an atomic flag, which a handler may do.
std::atomic<TuningSession*> g_session{nullptr};

void onInterrupt(int) {
    if (TuningSession* s = g_session.load())
        s->cancel();
}

std::string fmt(const char* format, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, format, v);
    return buf;
}

std::string bestText(const ResultRecord& best, const std::string& objectiveName) {
    std::string text = fmt("%.4g ms", best.timeMs());
    if (best.measurement.time.hasInterval())
        text += " (95 %: " + fmt("%.4g", best.measurement.time.ciLowMs) + "-" +
                fmt("%.4g", best.measurement.time.ciHighMs) + ")";
    if (best.objective)
        text += "  " + fmt("%.4g", *best.objective) + " " + objectiveName;
    return text;
}

/// The shapes to tune: --shapes all or a list, else --shape alone.
std::vector<std::size_t> shapeList(const TuneOptions& opt, const TuningProblem& problem) {
    if (opt.shapes.empty()) {
        checkShape(problem, opt.shape);
        return {opt.shape};
    }
    if (opt.shapeOption->count() > 0)
        throw InputError("", "--shapes", "give --shape or --shapes, not both");
    const std::size_t count = std::max<std::size_t>(1, problem.shapes.size());
    std::vector<std::size_t> list;
    if (opt.shapes == "all") {
        for (std::size_t i = 0; i < count; ++i)
            list.push_back(i);
        return list;
    }
    for (const std::string& item : splitList(opt.shapes)) {
        std::size_t index = 0;
        const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), index);
        if (ec != std::errc() || end != item.data() + item.size())
            throw InputError("", "--shapes", "expected all or shape indexes such as 0,2,5, got '" + item + "'");
        if (index >= count)
            throw InputError("", "--shapes",
                             "shape " + item + " does not exist (the problem has " + std::to_string(count) +
                                 (count == 1 ? " shape)" : " shapes: 0 to " + std::to_string(count - 1) + ")"));
        if (std::find(list.begin(), list.end(), index) == list.end())
            list.push_back(index);
    }
    return list;
}

/// How far apart two of the problem's shapes are (shapeDistance of their dims).
double shapesApart(const TuningProblem& problem, std::size_t a, std::size_t b) {
    if (a >= problem.shapes.size() || b >= problem.shapes.size())
        return 0;
    auto values = [&](std::size_t s) {
        std::vector<std::int64_t> v;
        for (const auto& [name, value] : problem.shapes[s].dims)
            v.push_back(value);
        return v;
    };
    return shapeDistance(values(a), values(b));
}

/// A shape set in one database: each shape's search starts from the winners of the shapes tuned
/// before it (the nearest first); then, with --cross-eval N, every shape measures the best N of
/// every other shape, so that the shape x config matrix `table` reads is filled where it counts.
int runShapeSet(const TuneOptions& opt, const TuningProblem& problem, ResultStore& store,
                const std::vector<std::size_t>& shapes, const SessionOptions& base,
                const std::function<SessionSummary(const SessionOptions&)>& runOne) {
    const std::size_t keep = std::max(opt.seedTop, opt.crossEval);
    std::vector<std::pair<std::size_t, std::vector<ConfigValues>>> tops; // per tuned shape: its best configs
    std::map<std::size_t, std::int64_t> sessionOf;
    auto topOf = [&](std::int64_t session) {
        std::vector<ConfigValues> configs;
        for (const ResultRecord& r : ranked(store.results(session))) {
            if (!r.ok() || configs.size() >= keep)
                break;
            configs.push_back(r.config);
        }
        return configs;
    };
    for (std::size_t n = 0; n < shapes.size(); ++n) {
        const std::size_t shape = shapes[n];
        SessionOptions run = base;
        run.shapeIndex = shape;
        std::vector<std::pair<std::size_t, std::vector<ConfigValues>>> nearest = tops;
        std::stable_sort(nearest.begin(), nearest.end(), [&](const auto& a, const auto& b) {
            return shapesApart(problem, shape, a.first) < shapesApart(problem, shape, b.first);
        });
        for (const auto& [tuned, configs] : nearest)
            for (std::size_t i = 0; i < configs.size() && i < opt.seedTop; ++i)
                run.firstConfigs.push_back(configs[i]);
        std::printf("Shape %zu of %zu%s\n", n + 1, shapes.size(),
                    run.firstConfigs.empty() ? ""
                                             : (": the search starts from " + std::to_string(run.firstConfigs.size()) +
                                                " winners of the shapes tuned before (those valid here)")
                                                   .c_str());
        std::fflush(stdout);
        const SessionSummary summary = runOne(run);
        if (summary.session.state == SessionState::Cancelled)
            return 130;
        sessionOf[shape] = summary.session.id;
        tops.emplace_back(shape, topOf(summary.session.id));
    }
    if (opt.crossEval > 0) {
        for (const std::size_t shape : shapes) {
            const ConfigSpace space = ConfigSpace::build(problem, shape);
            const ConfigCodec codec(space);
            std::set<std::string> measured;
            for (const ResultRecord& r : store.results(sessionOf[shape]))
                measured.insert(configJson(r.config));
            SessionOptions run = base;
            run.shapeIndex = shape;
            run.strategy = "exhaustive";
            run.confirmTop = 0;
            run.earlyStop.reset();
            run.resume = false;
            for (const auto& [other, configs] : tops) {
                if (other == shape)
                    continue;
                for (std::size_t i = 0; i < configs.size() && i < opt.crossEval; ++i)
                    if (codec.indexOf(configs[i]) && measured.insert(configJson(configs[i])).second)
                        run.firstConfigs.push_back(configs[i]);
            }
            if (run.firstConfigs.empty())
                continue;
            run.budget = Budget{};
            run.budget.configs = run.firstConfigs.size();
            std::printf("Cross-evaluation at shape %zu: the best %zu of the other shapes, %zu configs not measured "
                        "here yet\n",
                        shape, opt.crossEval, run.firstConfigs.size());
            std::fflush(stdout);
            if (runOne(run).session.state == SessionState::Cancelled)
                return 130;
        }
    }
    // What the set says: per shape, what tuning gained against the noise, and the table at 3 %.
    std::vector<SessionData> data;
    for (const SessionInfo& info : store.sessions())
        data.push_back(store.load(info.id));
    try {
        const ShapeConfigMatrix matrix = buildShapeConfigMatrix(data, problem.kernelName, opt.db);
        const std::vector<ShapeRegime> regimes = shapeRegimes(data, matrix);
        const DispatchTable table = planWithinRegret(matrix, 0.03);
        std::printf("Shape set: %zu shapes in %s\n", matrix.shapes.size(), opt.db.c_str());
        for (std::size_t s = 0; s < matrix.shapes.size(); ++s)
            std::printf("  %s  %s\n", matrix.shapeLabel(s).c_str(), regimes[s].verdict.c_str());
        std::printf("  table       %zu configs run every shape within 3 %% of its best (worst %s); `tilescope-cli "
                    "table %s` for other bounds, a C++ header or a Triton module\n",
                    table.entries.size(), fmt("%.2f %%", 100 * table.worstRegret).c_str(), opt.db.c_str());
    } catch (const InputError& e) {
        std::printf("Shape set: %zu shapes in %s (no table: %s)\n", shapes.size(), opt.db.c_str(), e.message().c_str());
    }
    return kOk;
}

/// The CUDA backend's settings from the command line, for `devices`; its notes go to stderr
/// after `who` ("" or "rank 2: ").
CudaBackendOptions cudaOptions(const TuneOptions& opt, const BackendSpec& spec, const TuningProblem& problem,
                               std::vector<int> devices, const std::string& who = {}) {
    CudaBackendOptions cuda;
    cuda.devices = std::move(devices);
    cuda.metrics = expandMetricNames(opt.metricsOption->count() > 0 ? splitList(opt.metrics) : problem.metrics);
    cuda.verify = !opt.noVerify;
    cuda.guard = opt.guard ? GuardPolicy::Every : GuardPolicy::Reference;
    cuda.sanitize = opt.sanitize;
    cuda.seed = opt.seed;
    cuda.timing.maxSeconds = opt.sampleSeconds;
    cuda.timing.minSamples = opt.minSamples;
    if (const std::string why = worker::setL2Context(opt.context, cuda.timing); !why.empty())
        throw InputError("", "--context", why);
    cuda.launcher = opt.launcher.empty() ? spec.launcher() : splitCommand(opt.launcher);
    if (!opt.launcher.empty() && !spec.host.empty())
        throw InputError("", "--launcher", "give one way to reach the GPUs: ssh://" + spec.host + " or --launcher");
    cuda.remoteWorker = opt.remoteWorker;
    cuda.watchdogSeconds = opt.configTimeout;
    cuda.note = [who](const std::string& text) { std::fprintf(stderr, "%snote: %s\n", who.c_str(), text.c_str()); };
    return cuda;
}

ReplayOptions replayOptions(const TuneOptions& opt) {
    ReplayOptions replay;
    replay.delay = std::chrono::milliseconds(std::max(0, opt.replayDelayMs));
    replay.pace = opt.replayPace;
    return replay;
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
            slots.push_back(std::make_unique<ReplayBackend>(spec.recording, replayOptions(opt)));
        return slots;
    }
    const std::string who = job.size() > 1 ? "rank " + std::to_string(job.rank()) + ": " : "";
    const int besideCoordinator = opt.mpiCoordinator && job.sharesNodeWithRank0() ? 1 : 0;
    for (int device : localGpus(spec.devices, job.localRank() - besideCoordinator, job.localSize() - besideCoordinator))
        slots.push_back(std::make_unique<CudaBackend>(cudaOptions(opt, spec, problem, {device}, who)));
    return slots;
}
#endif

int runTune(const TuneOptions& opt) {
    BackendSpec spec = parseBackendSpec(opt.backend);
    if (!opt.devices.empty()) {
        if (spec.kind != BackendSpec::Kind::Cuda)
            throw InputError("", "--devices", "devices are for --backend cuda");
        if (opt.backend != "cuda")
            throw InputError("", "--devices", "give the devices once: --backend " + opt.backend + " or --devices");
        spec.devices = parseDeviceList(opt.devices);
    }
    for (const auto& [flag, name] : {std::pair{opt.guard, "--guard"}, std::pair{opt.sanitize, "--sanitize"}}) {
        if (flag && spec.kind != BackendSpec::Kind::Cuda)
            throw InputError("", name, std::string(name) + " is for --backend cuda: it runs configs on a GPU");
    }

    // With --mpi, every rank but 0 serves rank 0 from here on; rank 0 makes its backend before
    // anything can fail, so that the ranks hear from it (at worst that they may go).
#ifdef TILESCOPE_HAVE_MPI
    std::unique_ptr<MpiJob> mpi; // finalized after the backend tells the ranks to go
#endif
    std::unique_ptr<Backend> backend;
    if (opt.mpi) {
        if (spec.kind == BackendSpec::Kind::Analysis)
            throw InputError("", "--mpi", "an MPI job measures on GPUs or replays a recording; analysis needs no job");
        if (!spec.host.empty() || !opt.launcher.empty())
            throw InputError("", "--mpi",
                             "the ranks of an MPI job drive their own node's GPUs: no ssh:// or --launcher");
#ifdef TILESCOPE_HAVE_MPI
        mpi = std::make_unique<MpiJob>(nullptr, nullptr);
        ClusterOptions cluster;
        cluster.silenceSeconds = opt.mpiSilence;
        cluster.note = [rank = mpi->rank()](const std::string& text) {
            std::fprintf(stderr, "%snote: %s\n", rank == 0 ? "" : ("rank " + std::to_string(rank) + ": ").c_str(),
                         text.c_str());
        };
        SlotFactory slots = [&opt, &spec, job = mpi.get()](const TuningProblem& p) {
            return mpiSlots(opt, spec, *job, p);
        };
        if (mpi->rank() != 0)
            return serveClusterRank(*mpi, slots, cluster);
        backend = std::make_unique<ClusterBackend>(*mpi, slots, cluster);
        if (mpi->size() > 1 && !mpi->survivesLostRanks())
            std::fprintf(stderr, "note: without mpirun --enable-recovery, a rank that dies ends the whole job (what "
                                 "is stored stays; --resume continues)\n");
#else
        throw InputError("", "--mpi",
                         "this tilescope-cli was built without MPI: install Open MPI (Debian: libopenmpi-dev) and "
                         "build again");
#endif
    }

    const TuningProblem problem = TuningProblem::load(opt.problemPath);
    if (spec.compiles())
        problem.requireLaunchable(); // before any work
    for (const std::size_t shape : shapeList(opt, problem)) {
        // A launch that cannot be right is said before any GPU time (a replay launches nothing).
        if (spec.kind != BackendSpec::Kind::Replay)
            printLaunchWarnings(problem, shape, ConfigSpace::build(problem, shape), opt.problemPath);
    }

    // The backend.
    if (!backend) {
        switch (spec.kind) {
        case BackendSpec::Kind::Replay:
            backend = std::make_unique<ReplayBackend>(spec.recording, replayOptions(opt));
            break;
        case BackendSpec::Kind::Cuda:
            backend = std::make_unique<CudaBackend>(cudaOptions(opt, spec, problem, spec.devices));
            break;
        case BackendSpec::Kind::Analysis:
            backend = std::make_unique<AnalysisBackend>(spec.arch);
            break;
        }
    }

    SessionOptions options;
    options.seed = opt.seed;
    options.resume = opt.resume;
    options.backendLabel = (opt.mpi ? "mpi:" : "") + spec.label();
    if (!opt.part.empty()) {
        const std::size_t slash = opt.part.find('/');
        std::uint64_t index = 0;
        std::uint64_t count = 0;
        const char* text = opt.part.data();
        const auto a = std::from_chars(text, text + (slash == std::string::npos ? opt.part.size() : slash), index);
        const auto b = slash == std::string::npos ? std::from_chars_result{text, std::errc::invalid_argument}
                                                  : std::from_chars(text + slash + 1, text + opt.part.size(), count);
        if (a.ec != std::errc() || b.ec != std::errc() || a.ptr != text + slash || b.ptr != text + opt.part.size() ||
            count < 1 || index < 1 || index > count)
            throw InputError("", "--part", "'" + opt.part + "' is not I/N with 1 <= I <= N (e.g. 2/4)");
        if (!opt.shapes.empty())
            throw InputError("", "--part", "a split sweep tunes one shape (a job array runs one shape per task)");
        options.partIndex = index - 1;
        options.partCount = count;
        if (count > 1)
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
    if (opt.strategyOption->count() > 0) {
        options.strategy = opt.strategy;
    } else {
        std::string unknown;
        options.strategy = defaultStrategy(problem.searchName, options.budget, &unknown);
        if (!unknown.empty())
            std::fprintf(stderr,
                         "note: the problem's Search.Name '%s' is no strategy this version has; tuning with %s "
                         "(--strategy picks one)\n",
                         unknown.c_str(), options.strategy.c_str());
    }
    if (canonicalStrategyName(options.strategy).empty()) {
        std::string known;
        for (const std::string& name : strategyNames())
            known += (known.empty() ? "" : ", ") + name;
        throw InputError("", "--strategy", "unknown strategy '" + options.strategy + "' (known: " + known + ")");
    }
    options.confirmTop = opt.confirm;
    options.confirmRounds = opt.confirmRounds;
    if (opt.stopEarly)
        options.earlyStop = EarlyStop{};
    options.stopOnSystematicFailure = !opt.keepGoing;
    std::vector<std::size_t> shapes = shapeList(opt, problem);

    // --only-stale: the shapes whose cache entry (for this kernel on this machine) is stale or
    // missing, and nothing at all when none is.
    std::vector<BestConfig> cached;     // --only-stale: the cache as read
    std::set<std::size_t> staleEntries; // of this kernel on the target device: replaced after tuning
    if (!opt.onlyStale.empty()) {
        std::ifstream head(opt.onlyStale);
        char first = 0;
        head >> first; // skips white space
        if (first != '{' || detectRecordingFormat(opt.onlyStale) != RecordingFormat::BestConfigs)
            throw InputError(opt.onlyStale, "--only-stale",
                             "is not a JSON cache of tuned configs: --only-stale rewrites JSON caches (export "
                             "--format json); a C++ header or Triton export is checked with `check` and exported "
                             "again after tuning");
        cached = readBestConfigs(opt.onlyStale);
        CacheTarget target;
        if (spec.kind == BackendSpec::Kind::Cuda) {
            target = thisMachine(problem);
        } else if (spec.kind == BackendSpec::Kind::Replay) {
            for (const SessionData& s : readRecording(spec.recording))
                if (!s.info.deviceName.empty()) {
                    target.deviceName = s.info.deviceName;
                    target.arch = s.info.arch;
                    break;
                }
        } else {
            target.arch = spec.arch;
        }
        const CacheCheck check = checkCache(cached, {&problem}, target);
        std::set<std::size_t> retune;
        for (const StaleEntry& e : check.stale) {
            if (e.kernel != problem.kernelName)
                continue;
            if (e.entry != StaleEntry::kMissing) {
                const BestConfig& b = cached[e.entry];
                if (!target.deviceName.empty() && !b.device.empty() && b.device != target.deviceName)
                    continue; // another machine's entry: not this run's to replace
                staleEntries.insert(e.entry);
            }
            for (std::size_t i = 0; i < problem.shapes.size(); ++i)
                if (sameShape(problem.shapes[i].dims, e.dims))
                    retune.insert(i);
        }
        if (retune.empty()) {
            std::printf("Cache %s: nothing is stale for kernel %s%s; nothing to tune\n", opt.onlyStale.c_str(),
                        problem.kernelName.c_str(),
                        target.deviceName.empty() ? "" : (" on " + target.deviceName).c_str());
            return kOk;
        }
        shapes.assign(retune.begin(), retune.end());
        std::printf("Cache %s: re-tuning %zu of %zu shapes (stale or missing for kernel %s%s)\n", opt.onlyStale.c_str(),
                    shapes.size(), std::max<std::size_t>(1, problem.shapes.size()), problem.kernelName.c_str(),
                    target.deviceName.empty() ? "" : (" on " + target.deviceName).c_str());
    }

    // A database this run creates is removed again when the run stores nothing (a recording that
    // does not match, no GPU): bad input leaves no empty file behind. Declared before the store,
    // so the store is closed first.
    struct RemoveIfUnused {
        std::filesystem::path path;
        bool armed = false;
        ~RemoveIfUnused() {
            if (!armed)
                return;
            std::error_code ec;
            for (const char* suffix : {"", "-wal", "-shm", "-journal"})
                std::filesystem::remove(path.string() + suffix, ec);
        }
    } cleanup{opt.db, !std::filesystem::exists(opt.db)};
    ResultStore store = ResultStore::open(opt.db, StoreMode::ReadWrite);

    std::unique_ptr<Progress> progress;
    std::uint64_t priorDone = 0;
    std::string objectiveName;
    SessionEvents events;
    events.started = [&](const SessionInfo& info, const SessionProgress& p) {
        priorDone = p.done;
        objectiveName = info.objectiveName;
        std::string verb = "tuned";
        if (priorDone > 0)
            verb = "tuned (resumed; " + formatCount(double(priorDone)) + " done before)";
        progress = std::make_unique<Progress>(verb, p.total > priorDone ? p.total - priorDone : 0);
    };
    events.warning = [&](const LaunchWarning& w) {
        std::fprintf(stderr, "warning: %s: %s: %s\n", opt.problemPath.c_str(), w.location.c_str(), w.message.c_str());
    };
    events.progress = [&](const SessionProgress& p) {
        if (progress)
            progress->update(p.done - std::min(p.done, priorDone),
                             p.best ? "best " + bestText(*p.best, objectiveName) : std::string());
    };

    // Configs are compiled (NVRTC, on a pool, through the on-disk cache) when the backend runs them.
    std::unique_ptr<CompileService> compiler;
    if (spec.compiles()) {
        std::shared_ptr<CompileCache> cache;
        if (!opt.noCache) {
            CompileCacheOptions cacheOptions;
            cacheOptions.directory = opt.cacheDir;
            cache = std::make_shared<CompileCache>(cacheOptions);
        }
        compiler = std::make_unique<CompileService>(CompileServiceOptions{opt.jobs, cache});
    }

    // One session: run, then its summary on stdout.
    auto runOne = [&](const SessionOptions& run) -> SessionSummary {
        TuningSession session(problem, *backend, store, run, events, compiler.get());
        g_session.store(&session);
        const auto oldInt = std::signal(SIGINT, onInterrupt);
        const auto oldTerm = std::signal(SIGTERM, onInterrupt);
        SessionSummary summary;
        try {
            summary = session.run();
        } catch (...) {
            g_session.store(nullptr);
            std::signal(SIGINT, oldInt);
            std::signal(SIGTERM, oldTerm);
            cleanup.armed = cleanup.armed && store.sessions().empty();
            try {
                throw;
            } catch (const SystematicFailure& e) {
                if (progress)
                    progress.reset();
                throw InputError(e.file(), e.location(),
                                 e.message() + "; the session is kept as failed (--keep-going tunes on regardless)");
            }
        }
        cleanup.armed = false;
        g_session.store(nullptr);
        std::signal(SIGINT, oldInt);
        std::signal(SIGTERM, oldTerm);
        // The progress line's last state: complete only when the session got through its total (a
        // cancelled or timed-out run ends on its last update; the summary says where it stopped).
        if (progress &&
            summary.progress.done + summary.progress.counts.of(ResultStatus::Skipped) >= summary.progress.total) {
            const SessionProgress& p = summary.progress;
            progress->finish(p.best ? "best " + bestText(*p.best, objectiveName) : std::string());
        }

        const SessionInfo& s = summary.session;
        const SessionProgress& p = summary.progress;
        std::printf("Session %lld %s: %s\n", static_cast<long long>(s.id),
                    std::string(sessionStateName(s.state)).c_str(), summary.stopReason.c_str());
        std::printf("  problem     %s  (kernel %s%s)\n", opt.problemPath.c_str(), s.kernel.c_str(),
                    s.shape.empty() ? ""
                                    : (", shape " + std::to_string(run.shapeIndex) + ": " + s.shapeLabel()).c_str());
        const auto* replay = dynamic_cast<const ReplayBackend*>(backend.get());
        std::printf("  backend     %s\n", replay
                                              ? ("replay of " + spec.recording.string() + " (" +
                                                 formatCount(double(replay->matchedResults())) + " recorded configs" +
                                                 (s.deviceName.empty() ? "" : " on " + s.deviceName) + ")")
                                                    .c_str()
                                              : s.backend.c_str());
        std::printf("  strategy    %s, seed %llu, budget: %s\n", s.strategy.c_str(),
                    static_cast<unsigned long long>(s.seed), s.budget.empty() ? "the whole space" : s.budget.c_str());
        std::printf("  results     %s of %s configs%s: %s\n", formatCount(double(p.done)).c_str(),
                    formatCount(double(p.total)).c_str(),
                    summary.resumed ? (" (resumed; this run " + formatCount(double(p.thisRun)) + ")").c_str() : "",
                    statusSummary(p.counts).c_str());
        if (p.best)
            std::printf("  best        %s  %s\n", bestText(*p.best, objectiveName).c_str(),
                        describeConfig(p.best->config).c_str());
        else
            std::printf("  best        none (no config ran correctly)\n");
        if (!summary.implausible.empty())
            std::printf("  implausible %s\n", summary.implausible.c_str());
        if (!summary.verification.empty())
            std::printf("  verify      %s\n", summary.verification.c_str());
        if (!summary.confirmation.empty())
            std::printf("  confirmed   %s\n", summary.confirmation.c_str());
        if (const std::string state = measuredStateSentence(s.provenanceJson); !state.empty())
            std::printf("  gpu state   %s\n", state.c_str());
        if (!summary.clocksMoved.empty())
            std::fprintf(stderr,
                         "warning: the GPU's clocks moved while this session measured (%s): its times may not "
                         "compare with each other; tune again on an idle GPU, or lock the clocks (nvidia-smi -lgc)\n",
                         summary.clocksMoved.c_str());
        std::printf("  time        %s wall; recorded compile + benchmark time %s%s\n",
                    formatDuration(p.elapsedSeconds).c_str(), formatDuration(p.recordedSeconds).c_str(),
                    spec.kind == BackendSpec::Kind::Replay ? " (what the recorded session spent on these configs)"
                                                           : "");
        std::printf("  database    %s  (tilescope-cli show %s --session %lld)\n", opt.db.c_str(), opt.db.c_str(),
                    static_cast<long long>(s.id));
        if (p.counts.of(ResultStatus::Skipped) > 0)
            std::fprintf(stderr, "note: %s config(s) were skipped%s\n",
                         formatCount(double(p.counts.of(ResultStatus::Skipped))).c_str(),
                         spec.kind == BackendSpec::Kind::Replay ? ": absent from the recording"
                                                                : " (tilescope-cli show lists why)");
        return summary;
    };

    std::int64_t lastBefore = 0; // sessions after it are this run's
    for (const SessionInfo& info : store.sessions())
        lastBefore = std::max(lastBefore, info.id);
    int status = kOk;
    if (shapes.size() == 1) {
        options.shapeIndex = shapes.front();
        const SessionSummary summary = runOne(options);
        status = summary.session.state == SessionState::Cancelled ? 130 : kOk;
    } else {
        status = runShapeSet(opt, problem, store, shapes, options, runOne);
    }
    if (opt.onlyStale.empty() || status != kOk)
        return status;
    // The cache rewritten: its fresh entries (and other machines') as they were, the stale ones
    // replaced by this run's winners.
    store.flush();
    std::vector<SessionData> tuned;
    for (const SessionInfo& info : store.sessions())
        if (info.id > lastBefore)
            tuned.push_back(store.load(info.id));
    std::vector<BestConfig> rewritten;
    for (std::size_t i = 0; i < cached.size(); ++i)
        if (!staleEntries.count(i))
            rewritten.push_back(cached[i]);
    const std::size_t kept = rewritten.size();
    for (BestConfig& b : bestConfigs(tuned))
        rewritten.push_back(std::move(b));
    writeFileAtomically(opt.onlyStale, writeBestConfigsJson(rewritten), "--only-stale");
    std::printf("rewrote %s: %zu entries kept, %zu from this run\n", opt.onlyStale.c_str(), kept,
                rewritten.size() - kept);
    return kOk;
}

} // namespace

void registerTune(CLI::App& app) {
    auto opt = std::make_shared<TuneOptions>();
    CLI::App* cmd = app.add_subcommand("tune", "Tune a problem: evaluate configs chosen by a strategy on a backend, "
                                               "storing every result in a database as it arrives");
    addProblemArgument(cmd, opt->problemPath);
    cmd->add_option("--backend", opt->backend,
                    "Where measurements come from: cuda or cuda:DEVICES measures on this machine's GPUs (one "
                    "tilescope-worker process per device); ssh://USER@HOST/DEVICES measures on another machine's GPUs "
                    "through your ssh (keys or an agent; tilescope-worker on its PATH, or --remote-worker); "
                    "replay:FILE answers from a recording (a T4 results file, "
                    "a Kernel Tuner cache or a Tilescope database); analysis:ARCH compiles each config for ARCH "
                    "(e.g. sm_90) and records registers, spills and occupancy, measuring nothing")
        ->required();
    opt->strategyOption =
        cmd->add_option("--strategy", opt->strategy,
                        "exhaustive (every config in order), random (random order without replacement), "
                        "annealing, genetic, bayes (Bayesian optimisation), bayes-prior (with the compiler's static "
                        "features), or auto (the one the strategy lab found best); default: the problem's "
                        "Search.Name, else auto with a budget and exhaustive without");
    opt->budgetOption =
        cmd->add_option("--budget", opt->budget, "Evaluate at most N configs")->check(wholeNumber(1, kAny));
    opt->fractionOption = cmd->add_option("--fraction", opt->fraction, "Evaluate at most this fraction of the space")
                              ->check(fractionOfSpace());
    opt->maxTimeOption = cmd->add_option("--max-time", opt->maxTime,
                                         "Stop after S seconds of tuning (with replay: of recorded time, the "
                                         "compile + measurement time of the configs replayed, summed; more than "
                                         "the recorded session's wall time when it compiled in parallel)")
                             ->check(positiveNumber());
    opt->budgetOption->excludes(opt->fractionOption)->excludes(opt->maxTimeOption);
    opt->fractionOption->excludes(opt->maxTimeOption);
    cmd->add_option("--seed", opt->seed, "Seed of the random strategy (the same seed gives the same run)")
        ->capture_default_str()
        ->check(wholeNumber(0, kAny));
    cmd->add_option("--db", opt->db, "The results database (SQLite; created when missing)")->required();
    cmd->add_flag("--resume", opt->resume,
                  "Continue the newest session of the same problem, shape, backend, strategy and seed in the "
                  "database, skipping every config it has done");
    addShapeOption(cmd, opt->shape);
    opt->shapeOption = cmd->get_option("--shape");
    cmd->add_option("--shapes", opt->shapes,
                    "Tune a shape set in one database: all, or shape indexes such as 0,2,5 (one session per shape, "
                    "each started from the winners of the shapes tuned before; then `table` makes a dispatch table)")
        ->group("Shape sets");
    cmd->add_option("--seed-top", opt->seedTop,
                    "With --shapes: how many winners of each shape tuned before start a shape's search")
        ->capture_default_str()
        ->check(wholeNumber(0, 1000))
        ->group("Shape sets");
    cmd->add_option("--cross-eval", opt->crossEval,
                    "With --shapes: after the search, measure the best N configs of every shape on every other shape "
                    "(where valid), filling the shape x config matrix a dispatch table is chosen from")
        ->check(wholeNumber(0, 1000))
        ->group("Shape sets");
    cmd->add_option("--only-stale", opt->onlyStale,
                    "A JSON cache (export --format json): tune only the problem's shapes whose entry for this machine "
                    "is stale or missing (as `check` says), then rewrite the cache with their new winners; nothing "
                    "when none is")
        ->check(CLI::ExistingFile)
        ->group("Shape sets");
    cmd->add_flag("--stop-early", opt->stopEarly,
                  "Stop the search when the regime says more cannot pay: the best runs at 95 % of the roofline or "
                  "more (Tilescope.Roofline, the device's measured copy), or 24 configs or more are measured and a "
                  "quarter of them are within twice the measurement noise of the best (any of those is as good)");
    cmd->add_flag("--keep-going", opt->keepGoing,
                  "Go on when the first configs all fail with the same error whatever their parameters (a "
                  "kernel that does not compile, a missing entry function); by default the session stops there "
                  "with exit status 2");
    cmd->add_option("--devices", opt->devices,
                    "With cuda: the GPUs to use, e.g. 0 or 0,1,2,3 (one worker each; default 0; the same as "
                    "--backend cuda:0,1,2,3)")
        ->group("CUDA backend");
    opt->metricsOption = cmd->add_option("--metrics", opt->metrics,
                                         "With cuda: CUPTI metrics per config in a separate profiling pass: default, "
                                         "bank-conflicts (shared-memory bank conflicts; with default, two passes), "
                                         "none, or metric names separated by commas (default: the problem's "
                                         "Tilescope.Metrics)")
                             ->group("CUDA backend");
    cmd->add_option("--jobs", opt->jobs, "With cuda: compile threads (default: one per hardware thread)")
        ->check(wholeNumber(1, kMaxJobs))
        ->group("CUDA backend");
    CLI::Option* cacheDir = cmd->add_option("--cache-dir", opt->cacheDir,
                                            "With cuda: folder of the compile cache (default: $TILESCOPE_CACHE_DIR/"
                                            "compile, else $XDG_CACHE_HOME/tilescope/compile)")
                                ->group("CUDA backend");
    CLI::Option* noCache =
        cmd->add_flag("--no-cache", opt->noCache, "With cuda: compile everything, use no cache")->group("CUDA backend");
    cacheDir->excludes(noCache);
    cmd->add_flag("--no-verify", opt->noVerify,
                  "With cuda: do not compare outputs with the reference (the first config that runs)")
        ->group("CUDA backend");
    cmd->add_flag("--guard", opt->guard,
                  "With cuda: run every config on guarded buffers, each ending at an unmapped page, so that a "
                  "kernel that reads or writes past a buffer's end faults every time instead of touching a "
                  "neighbour; the result names the arguments and their sizes (by default only the reference run is "
                  "guarded, and the timed launches use ordinary allocations)")
        ->group("CUDA backend");
    cmd->add_flag("--sanitize", opt->sanitize,
                  "With cuda: first run the reference config once under compute-sanitizer's memcheck (from the CUDA "
                  "toolkit: on PATH, beside nvcc, in $CUDA_HOME/bin or /usr/local/cuda/bin, or "
                  "$TILESCOPE_COMPUTE_SANITIZER), compiled with line information; its first report becomes that "
                  "config's result, naming the kernel's line and the buffer the faulting address is next to")
        ->group("CUDA backend");
    cmd->add_option("--sample-time", opt->sampleSeconds,
                    "With cuda: kernel time to spend sampling each config, in seconds (sampling stops earlier "
                    "once the spread is under 0.5 %)")
        ->capture_default_str()
        ->check(positiveNumber())
        ->group("CUDA backend");
    cmd->add_option("--min-samples", opt->minSamples, "With cuda: timed launches per config at least")
        ->capture_default_str()
        ->check(wholeNumber(1, 100000))
        ->group("CUDA backend");
    cmd->add_option("--context", opt->context,
                    "With cuda: the L2 cache before each timed sample: flush (cold, every sample alike), warm (back "
                    "to back, the L2 holding what the kernel left) or pollute:SIZE (SIZE bytes written first, as a "
                    "bandwidth-heavy predecessor of that size would; e.g. pollute:16MiB). The session records it")
        ->capture_default_str()
        ->group("CUDA backend");
    cmd->add_option("--launcher", opt->launcher,
                    "With cuda: start each worker through this command (a launcher such as 'srun --gres=gpu:1' "
                    "or a container's exec), which must pass the worker's stdin and stdout; --backend "
                    "ssh://USER@HOST/DEVICES does the same through ssh ($TILESCOPE_SSH replaces the ssh program). "
                    "Configs compile here with NVRTC and travel as cubins: the far side needs the NVIDIA driver "
                    "and tilescope-worker, not the CUDA toolkit")
        ->group("CUDA backend");
    cmd->add_option("--remote-worker", opt->remoteWorker,
                    "With ssh:// or --launcher: the path of tilescope-worker on the far side")
        ->capture_default_str()
        ->group("CUDA backend");
    cmd->add_option("--config-timeout", opt->configTimeout,
                    "With cuda: a config without a result after S seconds is a timeout and its worker is "
                    "restarted (default: derived from --sample-time)")
        ->check(positiveNumber())
        ->group("CUDA backend");
    cmd->add_option("--confirm", opt->confirm,
                    "After the search, measure the best N configs again, interleaved, and keep the new timings, so "
                    "that the winner is not a lucky sample; says which cannot be told from the winner (0: off; not "
                    "with replay)")
        ->capture_default_str()
        ->check(wholeNumber(0, kAny));
    cmd->add_option("--confirm-rounds", opt->confirmRounds,
                    "The final round measures the --confirm configs interleaved, this many rounds of 10 samples "
                    "each, and gives each a bootstrap 95 % interval of its median")
        ->capture_default_str()
        ->check(wholeNumber(1, 1000));
    CLI::Option* mpiFlag =
        cmd->add_flag("--mpi", opt->mpi,
                      "One session across the ranks of an MPI job (mpirun --enable-recovery -n N tilescope-cli tune "
                      "... --mpi): rank 0 runs the strategy, compiles and is the only writer of --db; every rank "
                      "measures on its node's GPUs of --backend cuda:DEVICES (ranks that share a node share them out). "
                      "A rank that dies loses only the configs it held")
            ->group("Several GPUs and clusters");
    cmd->add_flag("--mpi-coordinator", opt->mpiCoordinator,
                  "With --mpi: rank 0 only runs the strategy, compiles and writes the database; it measures "
                  "nothing, and the GPUs of its node go to the other ranks there (its compiles never share a node's "
                  "CPU with a measurement of its own)")
        ->needs(mpiFlag)
        ->group("Several GPUs and clusters");
    cmd->add_option("--part", opt->part,
                    "I/N: evaluate part I of N of an exhaustive sweep (the configs whose index is I-1 modulo N), "
                    "for a Slurm job array with one database per task; `import` joins the parts into one session "
                    "(with --array=1-N, I is $SLURM_ARRAY_TASK_ID)")
        ->group("Several GPUs and clusters");
    // Testing aids, hidden from --help: wall time per replayed config (a fixed delay, so that a
    // test can kill a run midway, or a multiple of the recorded benchmark time, for measuring
    // scaling), replay slots per MPI rank, how long a rank may be silent.
    cmd->add_option("--replay-delay-ms", opt->replayDelayMs)->check(wholeNumber(0, 3'600'000))->group("");
    cmd->add_option("--replay-pace", opt->replayPace)->check(CLI::Range(0.0, 1000.0))->group("");
    cmd->add_option("--replay-slots", opt->replaySlots)->check(wholeNumber(1, 1024))->group("");
    cmd->add_option("--mpi-silence", opt->mpiSilence)->check(positiveNumber())->group("");
    cmd->footer("Without --budget, --fraction or --max-time, the problem's T1 Budget applies (none: the whole "
                "space). Ctrl-C stops after the results in hand; --resume continues.\n"
                "Exit status: 0 done, 2 bad input, 130 interrupted (resumable).");
    setAction(cmd, [opt] { return runTune(*opt); });
}

} // namespace tilescope::cli
