#pragma once

// A tuning session: the pipeline strategy -> compile -> prune -> measure -> store -> observe.
//
// The strategy proposes configs; each is compiled on the compile service's pool, running ahead
// of measurement through a bounded queue, so the device never waits for NVRTC; configs that
// cannot launch on the device (threads, shared memory, registers per block over its limits) or
// that a prune rule rejects are recorded `pruned` without running; the rest go to the backend as
// their compiles finish (a backend that takes a feed hands each idle device the next one while
// it measures, so no device waits for another's slow config); every result is appended to the
// store as it arrives (committed within ~100 ms) and observed by the strategy. A session can be resumed: re-running it
// skips every config done.
//
// run() blocks on the calling thread, which must be the thread that opened the store; events are
// called on that thread. cancel() may be called from any thread (a signal handler included:
// it only sets an atomic flag).

#include "analysis/launchcheck.h"
#include "analysis/regime.h"
#include "base/error.h"
#include "compile/compileservice.h"
#include "measure/backend.h"
#include "search/strategy.h"
#include "store/resultstore.h"
#include "tuner/compileahead.h"
#include "tuner/failurewatch.h"
#include "tuner/finalround.h"
#include "tuner/sessionprogress.h"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

namespace tilescope {

class TuningProblem;

struct SessionOptions {
    std::size_t shapeIndex = 0;
    std::string strategy = "exhaustive"; ///< a name makeStrategy() knows
    std::uint64_t seed = 0;
    /// Count, fraction and time limits. The time is wall time of this run, except with a
    /// simulated backend (replay), where it is the recorded compile + benchmark time of the
    /// session's results: a replayed time budget stops where the real session would have.
    Budget budget;
    double perConfigSeconds = 0; ///< cap on measuring one config (0 = none): over it is a Timeout
    /// Configs a backend call starts with; more come from its feed (0: the backend's preference).
    std::size_t batchSize = 0;
    std::size_t compileAhead = 0; ///< configs compiled or compiling ahead of measurement (0: batch + 2 per thread)

    enum class Compile {
        Auto,   ///< when the backend needs cubins
        Never,  ///< no compile, no static info (a replay answers without)
        Always, ///< compile even for a replay: static info and pruning for the recorded device
    };
    Compile compile = Compile::Auto;
    std::string arch; ///< compile for this arch alone ("": every arch of the backend's devices, sessionArchs)
    bool pruneHeavySpills = false; ///< also prune configs that spill heavily (see classifySpill)
    /// The final round: after the search, measure the best this-many configs again, interleaved
    /// (confirmRounds rounds; each round takes confirmSamples samples of every one of them, in an
    /// order that rotates), pool each config's samples into its median with a bootstrap 95 %
    /// interval, keep those as its timing, and say which configs cannot be told apart from the
    /// winner (0: off). Skipped with a simulated backend (a replay would answer the recorded
    /// numbers again) and when the run was cancelled.
    std::size_t confirmTop = 0;
    std::size_t confirmRounds = 5;
    int confirmSamples = 10;
    /// The race: a config stops sampling (after 5 samples) once its median's 95 % interval lies
    /// above the best so far by more than this fraction (above the upper end of the best's
    /// interval): it cannot rank near the best, so its time need not be precise, and the final
    /// round settles the winner among those that stay close. nullopt: every config sampled by
    /// the timing rule alone.
    std::optional<double> raceMargin = 0.05;
    /// Counters (the profiling pass) only for the configs that rank: during the search, those
    /// whose median is at most the profileTop-th best time so far once kProfileAfter times
    /// profileTop configs have a time (none before: in a small session most configs are among the
    /// best so far when they are measured); after the search (and its final round), the best
    /// profileTop that have none get theirs. The configs that were ever among the best so many
    /// keep their counters. nullopt: every config's, during the search.
    std::optional<std::size_t> profileTop = 5;
    static constexpr std::size_t kProfileAfter = 4;
    /// The counters the backend collects (cuptiMetricNames of its metrics): the configs that
    /// ranked are profiled after the search when none of these is among their metrics. Empty: no
    /// profiling after the search (no counters asked for, or a backend that collects none).
    std::vector<std::string> counterNames;
    /// Each result's GPU state (the clocks and temperature its backend read right after its
    /// samples) kept among its metrics (measure/metricnames.h, kGpuStateWord).
    bool gpuStateMetrics = false;

    /// Stop with SystematicFailure when the first configs of the run all fail with the same
    /// error that no tuning parameter explains (see SystematicFailure), instead of spending the
    /// budget on it.
    bool stopOnSystematicFailure = true;
    /// Before measuring, compile a config and its neighbours in each parameter and warn
    /// (SessionEvents::warning) of parameters that do not change the compiled kernel
    /// (analysis/inertcheck.h). Only when configs are compiled.
    bool checkInertParameters = true;

    /// Continue the newest session of the same problem, shape, backend, strategy and seed in the
    /// store (a new one when there is none, told to SessionEvents::note): configs already done are
    /// skipped.
    bool resume = false;
    /// The session's backend as recorded ("replay:/path/rec.json", "cuda"); resume matches on it.
    std::string backendLabel;
    /// Configs to evaluate first, before the strategy's own (those not in the space are left
    /// out); the strategy learns from their results. For a shape set: the winners of the shapes
    /// tuned before.
    std::vector<ConfigValues> firstConfigs;
    /// One part of an exhaustive sweep split across tasks (a Slurm job array): this session
    /// evaluates the configs whose space index i has i % partCount == partIndex (0-based), and
    /// records the part in its provenance ("part": {"index": 1-based, "count"}); `import` joins
    /// the parts into one session. partCount 1: the whole space. Only the exhaustive strategy
    /// splits (InputError otherwise): the others choose from what they measured.
    std::uint64_t partIndex = 0;
    std::uint64_t partCount = 1;
    /// Stop proposing when the regime says further search cannot pay (the best near the
    /// roofline, or the measured configs flat against their noise; analysis/regime.h). Off
    /// when unset.
    std::optional<EarlyStop> earlyStop;
    /// How results analysed, not timed (the analysis backend's) rank: which is the session's best.
    StaticRank rankBy = StaticRank::Occupancy;
};

/// How busy a session kept its compile pool and its GPUs (from its start to the end of its
/// search; the final round left out).
struct SessionPipeline {
    std::uint64_t configs = 0; ///< configs measured or recorded from their compile
    /// Distinct binaries (compile keys) of those configs that NVRTC compiled during the session:
    /// cache hits and binaries shared with another config not counted.
    std::uint64_t binaries = 0;
    /// Distinct binaries compiled for configs the session only inspected, not evaluated: the
    /// check for parameters that do not change the code, a strategy's static features.
    std::uint64_t otherBinaries = 0;
    /// NVRTC compiles run: binaries + otherBinaries, more when a binary was compiled twice (no
    /// cache to keep it between two requests for it).
    std::uint64_t compiles = 0;
    /// The compiles by where they ran, when the compile service names places (the ranks of an
    /// MPI job: "rank 1"); empty otherwise.
    std::map<std::string, std::uint64_t> compiledOn;
    double compileSeconds = 0;   ///< their NVRTC time
    double benchmarkSeconds = 0; ///< GPU time spent measuring (the backend's benchmark seconds)
    std::set<int> devices;       ///< the devices that measured
    double wallSeconds = 0;
    BenchmarkParts parts;              ///< the benchmark time's parts, added up over the configs measured
    std::uint64_t measuredConfigs = 0; ///< configs with a benchmark time

    void compiled(const PendingConfig&) { ++configs; }
    void measured(const Measurement& m) {
        benchmarkSeconds += std::max(0.0, m.benchmarkSeconds);
        if (m.benchmarkSeconds > 0)
            ++measuredConfigs;
        parts.check += m.parts.check;
        parts.timing += m.parts.timing;
        parts.warmup += m.parts.warmup;
        parts.samples += m.parts.samples;
        parts.counters += m.parts.counters;
        parts.energy += m.parts.energy;
        parts.comparedOnDevice += m.parts.comparedOnDevice;
        parts.downloaded += m.parts.downloaded;
        parts.raced += m.parts.raced;
        parts.profiled += m.parts.profiled;
        parts.unrestored += m.parts.unrestored;
        parts.batched += m.parts.batched;
        parts.batchLaunches = std::max(parts.batchLaunches, m.parts.batchLaunches);
        if (m.device >= 0)
            devices.insert(m.device);
    }
};

struct SessionSummary {
    SessionInfo session; ///< as stored, with its final state
    bool resumed = false;
    std::uint64_t priorResults = 0; ///< results the resumed session had
    SessionProgress progress;       ///< at the end
    std::string stopReason;         ///< for people: "every config of the space is done", "cancelled", ...
    /// The best configs measured again, best first after it (empty when confirmTop is 0 or skipped).
    std::vector<Remeasurement> remeasured;
    std::string confirmation; ///< for people: whether the winner held when measured again ("" none)
    /// For people: how the GPU's clocks moved while this run measured ("" they held, or unknown);
    /// the whole range is in the session's provenance ("measured_state").
    std::string clocksMoved;
    /// For people: the session's implausible configs, how many and the fastest one's reason (they
    /// ran faster than their outputs take to write, analysis/plausibility.h); "" none.
    std::string implausible;
    /// For people: the verdict on the session's wrong results (analysis/verificationsplit.h): what
    /// is wrong with them, or the parameter whose values split them from the configs that match
    /// the reference and what verifying within its groups found; "" none. Also in the session's
    /// provenance ("verification").
    std::string verification;
    /// What the final round found when it verified the best configs on a second input set
    /// (Backend::reseed); "" when it did not (no final round, no Random fill, a recording).
    std::string secondInputs;
    /// The compile pool and the GPUs (not for a replay).
    std::optional<SessionPipeline> pipeline;
    unsigned compileThreads = 0; ///< of the compile pool, when the session compiled
};

/// Callbacks, each optional, called on the thread that runs the session.
struct SessionEvents {
    std::function<void(const SessionInfo&, const SessionProgress&)> started;
    std::function<void(const ResultRecord&)> result;
    std::function<void(const ResultRecord&)> newBest;
    /// A stored result changed: its config was measured again (same id, new timing).
    std::function<void(const ResultRecord&)> updated;
    std::function<void(const SessionProgress&)> progress;
    std::function<void(const SessionSummary&)> finished;
    std::function<void(const std::string&)> error;
    /// Something about the problem found before any GPU time that the user should know (a
    /// tuning parameter that does not change the compiled kernel); the session goes on.
    std::function<void(const LaunchWarning&)> warning;
    /// Something about the run the user should know before its results: a run asked to resume
    /// that found no session to continue, and starts a new one (noSessionToResume); it goes on.
    std::function<void(const std::string&)> note;
};

class TuningSession {
public:
    /// Everything passed must outlive the session. `compiler` may be null when nothing compiles
    /// (SessionOptions::Compile::Never, or Auto with a backend that needs no cubins).
    TuningSession(const TuningProblem& problem, Backend& backend, ResultStore& store, SessionOptions options,
                  SessionEvents events = {}, CompileService* compiler = nullptr);
    ~TuningSession();
    TuningSession(const TuningSession&) = delete;
    TuningSession& operator=(const TuningSession&) = delete;

    /// Runs to the end: the strategy is done, the budget spent, or cancel() called. Throws
    /// InputError for a setup the user got wrong (a shape out of range, a recording of another
    /// problem) before anything is stored. Any later error marks the session failed, is reported
    /// to the error event, and is rethrown; the results stored so far stay.
    SessionSummary run();
    /// Asks run() to stop after the results in hand: configs not measured yet are left for a resume.
    void cancel();
    bool cancelled() const;

private:
    struct Run;
    const TuningProblem& m_problem;
    Backend& m_backend;
    ResultStore& m_store;
    SessionOptions m_options;
    SessionEvents m_events;
    CompileService* m_compiler;
    std::atomic<bool> m_cancel{false};
};

} // namespace tilescope
