#pragma once

// tilescope-cli tune's command line as read (tuneoptions.cpp declares the options and their
// help; tune.cpp wires a run from them).

#include "cli.h"

#include "jobs/tune.h"
#include "tuner/storedproblem.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace tilescope::cli {

/// The options of `tune`, as CLI11 fills them.
struct TuneOptions {
    std::string problemPath;  ///< a T1 file, or a results database (its session's problem)
    std::int64_t session = 0; ///< with a database: the session to repeat or continue (0 = the newest with a problem)
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
    std::string objective; ///< --objective: time, energy or edp ("" = the problem's)
    unsigned jobs = 0;
    std::string cacheDir;
    bool noCache = false;
    bool noVerify = false;
    bool guard = false;    ///< every config on guarded buffers
    bool sanitize = false; ///< the first config once under compute-sanitizer
    std::string outputs;   ///< a folder for each config's outputs after its first launch ("" = none)
    bool keepGoing = false;
    double configTimeout = 0;
    double sampleSeconds = 0.25;
    int minSamples = 10;
    std::size_t confirm = 3;
    std::size_t confirmRounds = 5;
    std::string race = "5%";                       ///< the race's margin, or "off"
    std::string context = "flush";                 ///< the L2 before each sample: flush, warm, pollute:SIZE
    std::string launcher;                          ///< a command that starts the worker elsewhere
    std::string remoteWorker = "tilescope-worker"; ///< the worker's path there
    // shape sets
    ShapeSetOptions shapeSet;                  ///< --seed-top, --cross-eval; the shapes from --shapes
    std::string shapes;                        ///< "all" or "0,2,5"; "" = --shape alone
    bool stopEarly = false;                    ///< stop a search when the regime says more cannot pay
    std::string onlyStale;                     ///< a JSON cache: tune only its stale or missing shapes, then rewrite it
    StaticRank rankBy = StaticRank::Occupancy; ///< how analysed, untimed results rank (the analysis backend)
    CLI::Option* shapeOption = nullptr;
    CLI::Option* seedOption = nullptr;
    CLI::Option* metricsOption = nullptr;
    CLI::Option* strategyOption = nullptr;
    CLI::Option* budgetOption = nullptr;
    CLI::Option* fractionOption = nullptr;
    CLI::Option* maxTimeOption = nullptr;
};

/// The options a run takes: `given`, and where PROBLEM is a results database, its session's
/// problem opened into `opened` and what the options leave out taken from the session (the
/// database as --db, the backend, strategy, seed and shape it was tuned with). Throws InputError
/// for --backend or --db missing where no database gives them.
TuneOptions resolveTuneOptions(const TuneOptions& given, OpenedProblem& opened);

/// Runs `tune` with these options; returns the exit status (InputError for bad input).
int runTune(const TuneOptions& opt);

} // namespace tilescope::cli
