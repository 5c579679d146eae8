#pragma once

// The tune use case: a problem tuned on a backend into a results database, one session or one per
// shape of a shape set, on this machine's GPUs, another machine's (ssh://), a recording (replay),
// an arch analysed offline, or the ranks of an MPI job; resumed, split into parts of a sweep, or
// limited to the shapes a committed cache holds stale. Backend construction from its spec and the
// session's assembly (its options, the store, the compile service, the shape set) happen here
// once: the CLI's `tune` maps its options onto a TuneRequest and prints the events, the
// workbench's session controller maps the Run panel's choices onto one and shows them.

#include "model/records.h"
#include "tuner/backendspec.h"
#include "tuner/sessionreport.h"
#include "tuner/shapesetrun.h"
#include "tuner/tuningsession.h"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tilescope {

class Backend;
class CompileService;
class WorkerDepot;
class TuningProblem;
struct LaunchWarning;
struct TuneEvents;

/// The CUDA backend's settings (cuda, cuda:DEVICES, ssh://), as `tune`'s options name them.
struct TuneCudaSettings {
    std::optional<std::vector<std::string>> metrics; ///< CUPTI metrics as named; nullopt: the problem's
    bool verify = true;
    bool guard = false;    ///< every config on guarded buffers (else the reference run only)
    bool sanitize = false; ///< the reference config once under compute-sanitizer
    std::string outputs;   ///< a folder for each config's outputs after its first launch ("" none)
    double sampleSeconds = 0.25;
    int minSamples = 10;
    std::string context = "flush"; ///< the L2 before each sample: flush, warm, pollute:SIZE
    std::string launcher;          ///< a command that starts each worker elsewhere ("" the spec's)
    std::string remoteWorker = "tilescope-worker";
    double configTimeout = 0; ///< the watchdog (0: derived from the sampling time)
};

/// A session across the ranks of an MPI job, as the use case needs it (jobs/tunempi.h joins one).
class TuneCluster {
public:
    virtual ~TuneCluster() = default;
    /// Whether this process is rank 0, which runs the session; the other ranks serve().
    virtual bool leads() const = 0;
    /// A rank other than 0: measures and compiles what rank 0 hands it until rank 0 says quit;
    /// the process's exit status.
    virtual int serve() = 0;
    /// Rank 0's backend, which measures on every rank's slots (lives as long as this).
    virtual Backend& backend() = 0;
    /// The compile service of its sessions: the ranks compile.
    virtual CompileService* compiles() = 0;
};

struct TuneRequest;

/// Joins the MPI job this process runs in, on `spec`; made first thing, before anything can fail,
/// so that the other ranks hear from rank 0.
using TuneClusterJoin =
    std::function<std::unique_ptr<TuneCluster>(const TuneRequest&, const BackendSpec&, const TuneEvents&)>;

struct TuneRequest {
    std::string problemPath; ///< read when `problem` is null; named in messages and the summary
    std::shared_ptr<const TuningProblem> problem;
    /// What ranks configs, replacing the problem's: one of time, energy, edp, or two traded off
    /// (the first ranks). Empty: the problem's.
    std::vector<std::string> objectives;

    std::size_t shape = 0;
    /// A shape set as people write it ("all", "0,2,5"), read once the problem is; "" none.
    std::string shapeList;
    /// The shape set (its shapes, when not from `shapeList`: empty is `shape` alone), how each
    /// shape starts from the others, the database as named.
    ShapeSetOptions shapeSet;

    /// A backend spec (tuner/backendspec.h): cuda, cuda:0,1, ssh://..., replay:FILE, analysis:ARCH.
    std::string backend;
    std::string devices;             ///< with cuda: "0,1" (the same as cuda:0,1); "" the spec's
    std::string database;            ///< the results database, made when the run first stores something
    bool makeDatabaseFolder = false; ///< make the database's folder when missing

    std::optional<std::string> strategy; ///< nullopt: the problem's Search.Name, else the default for the budget
    std::optional<Budget> budget;        ///< nullopt: the problem's T1 Budget
    std::uint64_t seed = 0;
    bool resume = false;
    std::string part; ///< "I/N": one part of an exhaustive sweep; "" the whole
    std::size_t confirmTop = 0;
    std::size_t confirmRounds = 5;
    /// The race (SessionOptions::raceMargin): nullopt off. Off whatever it says where an objective
    /// other than time ranks (a slower config may use less energy).
    std::optional<double> raceMargin = 0.05;
    /// Counters for every config, not only for those that rank near the best (--metrics
    /// all-configs; the word is taken out of the metric names).
    bool profileAll = false;
    bool stopEarly = false;
    bool keepGoing = false; ///< tune on when the first configs all fail alike
    /// The front end's way to tune on regardless, named when a session stops so ("--keep-going").
    std::string keepGoingOption;
    StaticRank rankBy = StaticRank::Occupancy;

    TuneCudaSettings cuda;
    unsigned jobs = 0; ///< compile threads (0: one per hardware thread; with an MPI job, the node's shared out)
    std::string cacheDir;
    bool noCache = false;
    std::chrono::milliseconds replayDelay{0}; ///< testing aid: wall time per replayed config
    double replayPace = 0;                    ///< testing aid: wall time per config in recorded times

    bool mpi = false;            ///< one session across the ranks of an MPI job (needs `joinCluster`)
    bool mpiCoordinator = false; ///< rank 0 measures and compiles nothing
    double mpiSilence = 30;      ///< a rank silent this long is lost
    std::size_t replaySlots = 1; ///< testing aid: replay slots per rank
    TuneClusterJoin joinCluster; ///< null: this program was built without MPI

    std::string onlyStale; ///< a JSON cache: tune only its stale or missing shapes, then rewrite it
    /// With a shape set: the outcome carries its sessions as stored.
    bool loadShapeSet = false;
    /// Checked once the backend is made: true ends the run before its session starts.
    const std::atomic<bool>* cancel = nullptr;
};

/// The race's margin as people write it: a percentage ("5%"), a fraction ("0.05"), or "off"
/// (nullopt). InputError (--race) for anything else, a negative margin or one over 10 (1000 %).
std::optional<double> parseRaceMargin(const std::string& text);

/// The warm GPU workers of the tunes a script starts (`kt`, `triton`; measure/cuda/workerdepot.h):
/// for a backend naming this machine's GPUs, one worker per device, started now, beside the script,
/// so that its first tune finds the driver, the context and CUPTI ready. None for other backends,
/// without the worker program, where the depot's socket cannot be made, or when the environment
/// already says TILESCOPE_WORKER_DEPOT=off; each tune then starts its own worker.
class ScriptWorkers {
public:
    explicit ScriptWorkers(const std::string& backend);
    ~ScriptWorkers(); ///< ends the workers no tune took and waits for them all
    ScriptWorkers(const ScriptWorkers&) = delete;
    ScriptWorkers& operator=(const ScriptWorkers&) = delete;
    /// The environment entry (name, value) that hands the workers to the script's tunes; nullopt
    /// when there are none.
    std::optional<std::pair<std::string, std::string>> environment() const;

private:
    std::unique_ptr<WorkerDepot> m_depot;
};

/// A session's end, with its summary in words (sessionReport, and with two objectives the
/// front they make).
struct TuneSessionEnd {
    const SessionSummary& summary;
    SessionReport report;
};

/// Reports as the run goes, on the caller's thread. Each may be left empty.
struct TuneEvents {
    /// Each session's own events as TuningSession reports them.
    SessionEvents session;
    /// A session started, with the results a resumed one holds from before.
    std::function<void(const SessionInfo&, const SessionProgress&, std::vector<ResultRecord> prior)> started;
    /// Notes for people: the strategy chosen, a backend's (a worker restarted), an MPI job's;
    /// `from` is the rank that says it ("rank 2: "), "" this process.
    std::function<void(const std::string& from, const std::string& text)> note;
    /// Lines of the run's record: each shape of a set as it starts and what the set found, what a
    /// cache refresh tunes and rewrites.
    std::function<void(const std::string& line)> line;
    /// A launch that cannot be right, found before any GPU time (not for a replay, which launches nothing).
    std::function<void(std::size_t shape, const LaunchWarning&)> launchWarning;
    /// The session now running (to cancel it from elsewhere), then null when it returns.
    std::function<void(TuningSession*)> running;
    /// A session ended (finished, cancelled, out of budget).
    std::function<void(const TuneSessionEnd&)> ended;
};

struct TuneOutcome {
    bool cancelled = false;             ///< a session was cancelled: the run stopped there
    std::optional<int> served;          ///< an MPI rank other than 0: it served rank 0 and exits with this
    std::vector<std::int64_t> sessions; ///< the sessions this run stored, in the order they ran
    std::optional<SessionSummary> last; ///< the last session's summary
    std::vector<SessionData> shapeSet;  ///< with loadShapeSet and two sessions or more: each as stored
};

/// Runs the request. Throws InputError before any work for a problem that cannot be read, a bad
/// backend spec, options that do not go with the backend, a shape the problem does not have, an
/// objective whose energy the backend cannot give, a database that cannot be opened; during the
/// run what TuningSession::run throws (a session that stops on a systematic failure as an
/// InputError naming `keepGoingOption`).
TuneOutcome runTune(const TuneRequest& request, const TuneEvents& events = {});

/// Refuses a backend spec no backend takes (InputError at `field`) before a front end starts
/// other work on it, e.g. a script whose calls will tune on it (`kt`, `triton`).
void checkBackendSpec(std::string_view spec, const std::string& field = "--backend");

/// The backends' settings for `spec` from the request (the CUDA backend's notes to
/// TuneEvents::note, from `from`). Throws InputError for a context or launcher that cannot be.
BackendOptions tuneBackendOptions(const TuneRequest& request, const BackendSpec& spec, const TuningProblem& problem,
                                  const TuneEvents& events, const std::string& from = {});

/// The session's options from the request (the shape is the shape set's to set): strategy, budget,
/// final round, race and profiling, a sweep's part. Throws InputError for a part that cannot be.
SessionOptions tuneSessionOptions(const TuneRequest& request, const BackendSpec& spec, const TuningProblem& problem,
                                  const TuneEvents& events);

} // namespace tilescope
