// tilescope-cli kt: runs a Python script written for Kernel Tuner with Tilescope's stand-in for
// the kernel_tuner package (app/cli/kt/kernel_tuner), so that its tune_kernel and run_kernel
// calls tune and run through this program, and every session lands in one database.

#include "cli.h"
#include "scriptrun.h"

#include "base/error.h"
#include "jobs/tune.h"

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>

namespace tilescope::cli {

namespace {

namespace fs = std::filesystem;

struct KtOptions {
    std::string backend = "cuda";
    std::string db;
    bool open = false;
    std::string python = "python3";
    int jobs = 0;
    double sampleSeconds = 0;
    bool omitFailed = false;
    std::vector<std::string> tuneArgs;
};

int runKt(const KtOptions& opt, const std::vector<std::string>& rest) {
    if (rest.empty())
        throw InputError("", "SCRIPT", "give the Python script to run (tilescope-cli kt SCRIPT.py [ARGS...])");
    const fs::path script = rest.front();
    std::error_code ec;
    if (!fs::is_regular_file(script, ec))
        throw InputError(script.string(), {}, "no such script");
    checkBackendSpec(opt.backend); // a bad spec is refused here, before the script runs
    const std::string db = opt.db.empty() ? scriptDatabase(script).string() : absolutePath(opt.db);
    const fs::path shim = findPythonPackage("kernel_tuner", "TILESCOPE_KT_SHIM", "app/cli/kt");

    std::vector<std::string> tuneArgs = opt.tuneArgs;
    if (opt.jobs > 0)
        tuneArgs.insert(tuneArgs.end(), {"--jobs", std::to_string(opt.jobs)});
    if (opt.sampleSeconds > 0)
        tuneArgs.insert(tuneArgs.end(), {"--sample-time", formatDouble("%g", opt.sampleSeconds)});

    std::string pythonPath = shim.string();
    if (const char* old = std::getenv("PYTHONPATH"); old && *old)
        pythonPath += std::string(":") + old;
    std::vector<std::string> argv{opt.python};
    argv.insert(argv.end(), rest.begin(), rest.end());
    std::vector<std::pair<std::string, std::string>> env{{"PYTHONPATH", pythonPath},
                                                         {"TILESCOPE_CLI", thisProgram().string()},
                                                         {"TILESCOPE_KT_BACKEND", opt.backend},
                                                         {"TILESCOPE_KT_DB", db},
                                                         {"TILESCOPE_KT_TUNE_ARGS", nlohmann::json(tuneArgs).dump()},
                                                         {"TILESCOPE_KT_OMIT_FAILED", opt.omitFailed ? "1" : ""}};
    int status = 0;
    {
        const ScriptWorkers workers(opt.backend);
        if (const auto entry = workers.environment())
            env.push_back(*entry);
        status = runChild(argv, env, "give the Python interpreter with --python");
    }
    if (!opt.open)
        return status;
    if (!fs::exists(db, ec)) {
        std::cerr << "kt: the script tuned nothing, so there is no " << db << " to open\n";
        return status;
    }
    openWorkbench(db, "kt");
}

} // namespace

void registerKt(CLI::App& app) {
    auto opt = std::make_shared<KtOptions>();
    CLI::App* cmd = app.add_subcommand(
        "kt", "Run a Python script written for Kernel Tuner, unchanged: Tilescope stands in for the kernel_tuner "
              "package, so each tune_kernel call tunes through `tune` (the script's data, restrictions, answer, "
              "metrics, cache and strategy carried over) and each run_kernel call runs once on the GPU");
    cmd->add_option("--backend", opt->backend,
                    "Where the script's tune_kernel calls measure: the specs of `tune --backend` (cuda, cuda:1, "
                    "ssh://..., replay:FILE, analysis:sm_90)")
        ->capture_default_str();
    cmd->add_option("--db", opt->db,
                    "The results database every session lands in (default: the script's name with .db in the "
                    "current folder); the problems the script made, as T1 files with their data, are kept beside "
                    "it in DB.kt/");
    cmd->add_flag("--open", opt->open, "Open the workbench on the database when the script is done");
    cmd->add_option("--python", opt->python, "The Python interpreter (it needs NumPy)")->capture_default_str();
    cmd->add_option("--jobs", opt->jobs, "Compile threads for each tune (default: one per hardware thread)")
        ->check(wholeNumber(1, kMaxJobs));
    cmd->add_option("--sample-time", opt->sampleSeconds,
                    "Kernel time to spend sampling each config, in seconds (default: tune's)")
        ->check(positiveNumber());
    cmd->add_flag("--omit-failed", opt->omitFailed,
                  "Leave the configs that did not compile or run out of the results tune_kernel returns, as Kernel "
                  "Tuner's early releases did (1.5 returns them with '__error__' and no 'time'; scripts "
                  "written then, such as its expdist.py, take min(results, key=lambda r: r['time']))");
    cmd->add_option("--tune-arg", opt->tuneArgs,
                    "An argument for every tune the script starts (repeat it; e.g. --tune-arg=--guard)")
        ->allow_extra_args(false);
    cmd->prefix_command(); // SCRIPT and everything after it go to the script
    cmd->footer("Usage: tilescope-cli kt [OPTIONS] SCRIPT.py [ARGS...]. What differs from Kernel Tuner and what is "
                "refused: Help > Kernel Tuner scripts.\nExit status: the script's.");
    setAction(cmd, [opt, cmd] { return runKt(*opt, cmd->remaining()); });
}

} // namespace tilescope::cli
