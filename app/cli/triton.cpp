// tilescope-cli triton: runs a Python script that uses @triton.autotune, unchanged, with
// Tilescope's autotuner (app/cli/triton/tilescope_triton) in place of Triton's benchmarking:
// each autotuned kernel's first call for a new key is written as a T1 problem and tuned by
// `tune`, and the script goes on with the winner.

#include "cli.h"
#include "scriptrun.h"

#include "base/error.h"
#include "jobs/tune.h"
#include "search/strategy.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>

namespace tilescope::cli {

namespace {

namespace fs = std::filesystem;

struct TritonOptions {
    std::string backend = "cuda";
    std::string db;
    std::string strategy = "exhaustive";
    std::uint64_t budget = 0;
    std::string space = "configs";
    bool retune = false;
    bool open = false;
    std::string python; ///< "" = $TILESCOPE_PYTHON, else python3
    std::vector<std::string> tuneArgs;
};

/// The interpreter: --python, else $TILESCOPE_PYTHON (the Python with Triton that Tilescope's
/// Triton compiles use), else python3.
std::string pythonOf(const TritonOptions& opt) {
    if (!opt.python.empty())
        return opt.python;
    if (const char* env = std::getenv("TILESCOPE_PYTHON"); env && *env)
        return env;
    return "python3";
}

int runTriton(const TritonOptions& opt, const std::vector<std::string>& rest) {
    if (rest.empty())
        throw InputError("", "SCRIPT", "give the Python script to run (tilescope-cli triton SCRIPT.py [ARGS...])");
    const fs::path script = rest.front();
    std::error_code ec;
    if (!fs::is_regular_file(script, ec)) {
        if (rest.front().starts_with("-"))
            throw InputError("", rest.front(),
                             "no such option of triton (its options come before SCRIPT.py; --help lists them)");
        throw InputError(script.string(), {}, "no such script");
    }
    checkBackendSpec(opt.backend); // a bad spec is refused here, before the script runs
    const std::string db = opt.db.empty() ? scriptDatabase(script).string() : absolutePath(opt.db);
    const fs::path shim = findPythonPackage("tilescope_triton", "TILESCOPE_TRITON_SHIM", "app/cli/triton");

    const nlohmann::json settings = {{"backend", opt.backend},   {"db", db},           {"strategy", opt.strategy},
                                     {"budget", opt.budget},     {"space", opt.space}, {"retune", opt.retune},
                                     {"tune_args", opt.tuneArgs}};
    std::string pythonPath = shim.string();
    if (const char* old = std::getenv("PYTHONPATH"); old && *old)
        pythonPath += std::string(":") + old;
    std::vector<std::string> argv{pythonOf(opt), "-m", "tilescope_triton"};
    argv.insert(argv.end(), rest.begin(), rest.end());
    std::vector<std::pair<std::string, std::string>> env{
        {"PYTHONPATH", pythonPath}, {"TILESCOPE_CLI", thisProgram().string()}, {"TILESCOPE_TRITON", settings.dump()}};
    int status = 0;
    {
        const ScriptWorkers workers(opt.backend);
        if (const auto entry = workers.environment())
            env.push_back(*entry);
        status = runChild(argv, env,
                          "install Python 3 with Triton (python3 -m pip install triton), or give the "
                          "interpreter that has it with --python or TILESCOPE_PYTHON");
    }
    if (!opt.open)
        return status;
    if (!fs::exists(db, ec)) {
        std::cerr << "triton: the script tuned nothing, so there is no " << db << " to open\n";
        return status;
    }
    openWorkbench(db, "triton");
}

} // namespace

void registerTriton(CLI::App& app) {
    auto opt = std::make_shared<TritonOptions>();
    CLI::App* cmd = app.add_subcommand(
        "triton", "Run a Python script that uses @triton.autotune, unchanged: Tilescope stands in for the "
                  "autotuner's benchmarking, so each autotuned kernel's first call for a new key is tuned through "
                  "`tune` (the call's real arguments, the decorator's configs, the grid) and the script goes on with "
                  "the winner");
    cmd->add_option("--backend", opt->backend,
                    "Where the configs are measured: the specs of `tune --backend` (cuda, cuda:1, ssh://..., "
                    "replay:FILE, analysis:sm_90)")
        ->capture_default_str();
    cmd->add_option("--db", opt->db,
                    "The results database every session lands in (default: the script's name with .db in the "
                    "current folder); the problems the script made, as T1 files with their data, and the winners "
                    "a second run reuses are kept beside it in DB.triton/");
    cmd->add_option("--strategy", opt->strategy,
                    "The search over each kernel's configs, a strategy of `tune`: exhaustive (every config, as "
                    "Triton's autotuner measures them), random, annealing, genetic, bayes, bayes-prior or auto")
        ->capture_default_str()
        ->check(CLI::Validator(
            [](const std::string& name) {
                if (!canonicalStrategyName(name).empty())
                    return std::string();
                std::string known;
                for (const std::string& n : strategyNames())
                    known += n + ", ";
                return "unknown strategy '" + name + "' (known: " + known + "auto)";
            },
            "STRATEGY"));
    cmd->add_option("--budget", opt->budget, "Evaluate at most N configs of each kernel and key")
        ->check(wholeNumber(1, kAny));
    cmd->add_option("--space", opt->space,
                    "Which configs: configs (the decorator's, after its prune_configs_by) or expand (also every "
                    "combination of the neighbouring values of each parameter the configs set: the powers of two "
                    "either side, one stage either side of num_stages)")
        ->capture_default_str()
        ->check(CLI::IsMember({"configs", "expand"}));
    cmd->add_flag("--retune", opt->retune,
                  "Tune every key again, even where an earlier run of the script stored its winner");
    cmd->add_flag("--open", opt->open, "Open the workbench on the database when the script is done");
    cmd->add_option("--python", opt->python,
                    "The Python interpreter, which needs Triton (default: $TILESCOPE_PYTHON, else python3)");
    cmd->add_option("--tune-arg", opt->tuneArgs,
                    "An argument for every tune the script starts (repeat it; e.g. --tune-arg=--sample-time=0.1)")
        ->allow_extra_args(false);
    cmd->prefix_command(); // SCRIPT and everything after it go to the script
    cmd->footer("Usage: tilescope-cli triton [OPTIONS] SCRIPT.py [ARGS...]. What carries over from "
                "@triton.autotune and what is refused: Help > Triton scripts.\nExit status: the script's; 2 when "
                "its Python has no triton module or Tilescope refuses what the script asks (the message names it).");
    setAction(cmd, [opt, cmd] { return runTriton(*opt, cmd->remaining()); });
}

} // namespace tilescope::cli
