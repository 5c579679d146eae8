// tilescope-cli tune: its options, their help and the checks CLI11 makes of them.

#include "tuneoptions.h"

#include "base/error.h"

#include <cstdio>
#include <memory>

namespace tilescope::cli {

namespace {

/// What is tuned, on what, with which strategy and budget, into which database.
void addRunOptions(CLI::App* cmd, TuneOptions* opt) {
    readsFile(cmd->add_option("problem", opt->problemPath,
                              "A tuning problem in T1 JSON (for example kernels/sgemm/sgemm.json), or a results "
                              "database: the problem a session stored with its files (whether or not they are still "
                              "where it was tuned), run again on its backend, strategy, seed and shape unless given, "
                              "the results going to that database unless --db says; with --resume, the session goes "
                              "on"))
        ->required();
    cmd->add_option("--session", opt->session,
                    "With a database as PROBLEM: the session to run again or continue (default: the newest that "
                    "stored its problem)")
        ->check(wholeNumber(1, kAny));
    cmd->add_option("--backend", opt->backend,
                    "Where measurements come from: cuda or cuda:DEVICES measures on this machine's GPUs (one "
                    "tilescope-worker process per device); ssh://USER@HOST/DEVICES measures on another machine's GPUs "
                    "through your ssh (keys or an agent; tilescope-worker on its PATH, or --remote-worker); "
                    "replay:FILE answers from a recording (a T4 results file, "
                    "a Kernel Tuner cache or a Tilescope database); analysis:ARCH compiles each config for ARCH "
                    "(e.g. sm_90) and records registers, spills and occupancy, measuring nothing. Required, but with a "
                    "database as PROBLEM: its session's");
    opt->strategyOption =
        cmd->add_option("--strategy", opt->strategy,
                        "exhaustive (every config in order), random (random order without replacement), "
                        "annealing, genetic, bayes (Bayesian optimisation), bayes-prior (with the compiler's static "
                        "features), nsga2 (two objectives at once: time and energy), or auto (the one the strategy "
                        "lab found best); default: the problem's Search.Name, else nsga2 with two objectives and a "
                        "budget, auto with a budget and exhaustive without");
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
    opt->seedOption =
        cmd->add_option("--seed", opt->seed, "Seed of the random strategy (the same seed gives the same run)")
            ->capture_default_str()
            ->check(wholeNumber(0, kAny));
    writesFile(cmd->add_option("--db", opt->db,
                               "The results database (SQLite; created when missing). Required, but with a database "
                               "as PROBLEM: that database"),
               "--db");
    cmd->add_flag("--resume", opt->resume,
                  "Continue the newest session of the same problem, shape, backend, strategy and seed in the "
                  "database, skipping every config it has done");
    addShapeOption(cmd, opt->shape);
    opt->shapeOption = cmd->get_option("--shape");
}

/// Shape sets, a cache kept fresh, and when a session stops.
void addShapeSetOptions(CLI::App* cmd, TuneOptions* opt) {
    cmd->add_option("--shapes", opt->shapes,
                    "Tune a shape set in one database: all, or shape indexes such as 0,2,5 (one session per shape, "
                    "each started from the winners of the shapes tuned before; then `table` makes a dispatch table)")
        ->group("Shape sets");
    cmd->add_option("--seed-top", opt->shapeSet.seedTop,
                    "With --shapes: how many winners of each shape tuned before start a shape's search")
        ->capture_default_str()
        ->check(wholeNumber(0, 1000))
        ->group("Shape sets");
    cmd->add_option("--cross-eval", opt->shapeSet.crossEval,
                    "With --shapes: after the search, measure the best N configs of every shape on every other shape "
                    "(where valid), filling the shape x config matrix a dispatch table is chosen from")
        ->check(wholeNumber(0, 1000))
        ->group("Shape sets");
    readsFile(cmd->add_option(
                  "--only-stale", opt->onlyStale,
                  "A JSON cache (export --format json): tune only the problem's shapes whose entry for this machine "
                  "is stale or missing (as `check` says), then rewrite the cache with their new winners; nothing "
                  "when none is"))
        ->check(CLI::ExistingFile)
        ->group("Shape sets");
    addRankByOption(cmd, opt->rankBy, "the summary's best");
    cmd->add_flag("--stop-early", opt->stopEarly,
                  "Stop the search when the regime says more cannot pay: the best runs at 95 % of the roofline or "
                  "more (Tilescope.Roofline, the device's measured copy), or 24 configs or more are measured and a "
                  "quarter of them are within twice the measurement noise of the best (any of those is as good)");
    cmd->add_flag("--keep-going", opt->keepGoing,
                  "Go on when the first configs all fail with the same error whatever their parameters (a "
                  "kernel that does not compile, a missing entry function); by default the session stops there "
                  "with exit status 2");
}

/// The CUDA backend's settings (and the objective, which may need a GPU's energy counter).
void addCudaOptions(CLI::App* cmd, TuneOptions* opt) {
    cmd->add_option("--devices", opt->devices,
                    "With cuda: the GPUs to use, e.g. 0 or 0,1,2,3 (one worker each; default 0; the same as "
                    "--backend cuda:0,1,2,3)")
        ->group("CUDA backend");
    opt->metricsOption = cmd->add_option("--metrics", opt->metrics,
                                         "With cuda: CUPTI metrics per config in a separate profiling pass: default, "
                                         "bank-conflicts (shared-memory bank conflicts; with default, two passes), "
                                         "none, energy (joules per launch and mean power from NVML's energy "
                                         "counter, each with an interval; a loop of about 1.2 s per config), "
                                         "energy-check (that and NVML's power readings sampled through a second "
                                         "loop of 3 s), gpu-state (each config's SM and memory clocks and "
                                         "temperature, read by NVML right after its samples, kept as metrics), "
                                         "or metric names separated by commas (default: the "
                                         "problem's Tilescope.Metrics). Counters are collected for the best 5 "
                                         "configs after the search (and for the leaders so far once 20 configs "
                                         "have a time); add all-configs for every config's")
                             ->group("CUDA backend");
    cmd->add_option("--objective", opt->objective,
                    "What ranks configs: time (the default, or the problem's Tilescope.Objective), energy (joules "
                    "per launch: the problem's work per joule, e.g. TFLOP/J, or launches/J) or edp (the "
                    "energy-delay product: work per joule-second); two separated by a comma (time,energy) are "
                    "traded off: the first ranks, nsga2 searches for their front and the summary gives it. "
                    "energy and edp measure each config's energy (--metrics energy is added) and need a GPU, or "
                    "a recording with energy");
    cmd->add_option("--jobs", opt->jobs,
                    "With cuda: compile threads (default: one per hardware thread; with --mpi, per rank, by default "
                    "the node's hardware threads shared out among the ranks there that compile)")
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
    cmd->add_option("--outputs", opt->outputs,
                    "With cuda: keep each config's outputs as its first launch leaves them (on the arguments' "
                    "initial contents): the Vector arguments flagged Output (all of them when none is) go to "
                    "DIR/VALUES/INDEX.bin, VALUES being the config's values joined with ',' as Kernel Tuner's cache "
                    "keys are and INDEX the argument's position (for checking outputs outside Tilescope)")
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
}

/// The final round, several GPUs and clusters, and the testing aids.
void addFinalRoundAndClusterOptions(CLI::App* cmd, TuneOptions* opt) {
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
    cmd->add_option("--race", opt->race,
                    "With cuda: a config stops sampling after 5 samples once its median's 95 % interval lies "
                    "more than MARGIN above the best so far's (it cannot rank near the best; the final round "
                    "settles the winner): a percentage (5%), a fraction (0.05), or off to sample every config "
                    "by the timing rule alone. Off where energy or edp ranks")
        ->type_name("MARGIN|off")
        ->capture_default_str();
    CLI::Option* mpiFlag =
        cmd->add_flag("--mpi", opt->mpi,
                      "One session across the ranks of an MPI job (mpirun --enable-recovery -n N tilescope-cli tune "
                      "... --mpi): rank 0 runs the strategy and is the only writer of --db; every rank measures on its "
                      "node's GPUs of --backend cuda:DEVICES (ranks that share a node share them out) and compiles on "
                      "its node's cores the configs rank 0 hands it, through the compile cache (give every rank one "
                      "--cache-dir on a shared file system: a binary one rank compiled is then a hit for the others). "
                      "With --backend analysis:ARCH the ranks only compile. A rank that dies loses only the configs "
                      "and compiles it held")
            ->group("Several GPUs and clusters");
    cmd->add_flag("--mpi-coordinator", opt->mpiCoordinator,
                  "With --mpi: rank 0 only runs the strategy and writes the database; it measures and compiles "
                  "nothing (unless no other rank is left to compile), and the GPUs and cores of its node go to the "
                  "other ranks there")
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
}

} // namespace

void registerTune(CLI::App& app) {
    auto opt = std::make_shared<TuneOptions>();
    CLI::App* cmd = app.add_subcommand("tune", "Tune a problem: evaluate configs chosen by a strategy on a backend, "
                                               "storing every result in a database as it arrives");
    addRunOptions(cmd, opt.get());
    addShapeSetOptions(cmd, opt.get());
    addCudaOptions(cmd, opt.get());
    addFinalRoundAndClusterOptions(cmd, opt.get());
    cmd->footer("Without --budget, --fraction or --max-time, the problem's T1 Budget applies (none: the whole "
                "space). Ctrl-C stops after the results in hand; --resume continues.\n"
                "Exit status: 0 done, 2 bad input, 130 interrupted (resumable).");
    setAction(cmd, [opt] { return runTune(*opt); });
}

TuneOptions resolveTuneOptions(const TuneOptions& given, OpenedProblem& opened) {
    TuneOptions opt = given;
    if (!isResultsDatabase(given.problemPath)) {
        if (given.session > 0)
            throw InputError("", "--session",
                             "--session is for a results database, and " + given.problemPath + " is a problem file");
        for (const auto& [value, name] : {std::pair{&opt.backend, "--backend"}, std::pair{&opt.db, "--db"}})
            if (value->empty())
                throw InputError("", name, std::string(name) + " is required (unless PROBLEM is a results database)");
        return opt;
    }
    opened = openProblem(given.problemPath, given.session > 0 ? std::optional(given.session) : std::nullopt);
    for (const std::string& note : opened.notes())
        std::fprintf(stderr, "note: %s\n", note.c_str());
    const SessionInfo& session = opened.stored->session();
    if (opt.db.empty())
        opt.db = given.problemPath;
    if (opt.backend.empty()) {
        const std::optional<std::string> backend = backendSpecOf(session);
        if (!backend)
            throw InputError("", "--backend",
                             opened.stored->label() + " was tuned on '" + session.backend +
                                 "', which a run cannot name again: give --backend");
        opt.backend = *backend;
    }
    if (opt.strategy.empty())
        opt.strategy = session.strategy;
    if (opt.seedOption->count() == 0)
        opt.seed = session.seed;
    if (opt.shapeOption->count() == 0 && opt.shapes.empty() && session.shapeIndex && *session.shapeIndex >= 0)
        opt.shape = static_cast<std::size_t>(*session.shapeIndex);
    return opt;
}

} // namespace tilescope::cli
