// tilescope-cli kt: runs a Python script written for Kernel Tuner with Tilescope's stand-in for
// the kernel_tuner package (app/cli/kt/kernel_tuner), so that its tune_kernel and run_kernel
// calls tune and run through this program, and every session lands in one database.

#include "cli.h"

#include "base/error.h"
#include "tuner/backendspec.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>

extern char** environ;

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
    std::vector<std::string> tuneArgs;
};

fs::path thisProgram() {
    std::error_code ec;
    fs::path self = fs::read_symlink("/proc/self/exe", ec);
    return ec ? fs::path() : self;
}

bool hasShim(const fs::path& dir) {
    std::error_code ec;
    return !dir.empty() && fs::exists(dir / "kernel_tuner" / "__init__.py", ec);
}

/// The folder holding the kernel_tuner stand-in: $TILESCOPE_KT_SHIM, else beside this program
/// (python/, as the build leaves it), else share/tilescope/python of the installation, else the
/// source tree this program was built from.
fs::path shimDirectory() {
    if (const char* env = std::getenv("TILESCOPE_KT_SHIM"); env && *env) {
        if (!hasShim(env))
            throw InputError("", "TILESCOPE_KT_SHIM",
                             std::string("TILESCOPE_KT_SHIM is ") + env + ", which holds no kernel_tuner package");
        return env;
    }
    const fs::path self = thisProgram();
    for (const fs::path& dir :
         {self.parent_path() / "python", self.parent_path().parent_path() / "share" / "tilescope" / "python",
          fs::path(TILESCOPE_SOURCE_DIR) / "app" / "cli" / "kt"}) {
        if (hasShim(dir))
            return dir;
    }
    throw InputError("", {},
                     "cannot find Tilescope's kernel_tuner package (looked beside " + self.string() +
                         ", in ../share/tilescope/python and in the source tree); set TILESCOPE_KT_SHIM to its folder");
}

/// The default database: the script's name with .db, in the current folder ("conv.py" -> "conv.db").
fs::path defaultDatabase(const fs::path& script) {
    return fs::current_path() / (script.stem().string() + ".db");
}

std::string absolute(const fs::path& p) {
    std::error_code ec;
    const fs::path a = fs::absolute(p, ec);
    return (ec ? p : a).lexically_normal().string();
}

/// Runs `argv` with `env` added to this process's environment; its exit status (128 + signal
/// when a signal ended it). Throws InputError when it cannot start.
int runChild(const std::vector<std::string>& argv, const std::vector<std::pair<std::string, std::string>>& env) {
    std::vector<std::string> environment;
    for (char** e = environ; e && *e; ++e) {
        const std::string entry(*e);
        const std::string name = entry.substr(0, entry.find('='));
        bool replaced = false;
        for (const auto& [k, v] : env)
            replaced = replaced || k == name;
        if (!replaced)
            environment.push_back(entry);
    }
    for (const auto& [k, v] : env)
        environment.push_back(k + "=" + v);
    std::vector<char*> args, envp;
    for (const std::string& a : argv)
        args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    for (const std::string& e : environment)
        envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);

    // Ctrl-C reaches the script (the same process group); this process waits for it to finish.
    struct sigaction ignore {};
    struct sigaction oldInt {};
    ignore.sa_handler = SIG_IGN;
    sigaction(SIGINT, &ignore, &oldInt);
    pid_t pid = -1;
    const int rc = posix_spawnp(&pid, args[0], nullptr, nullptr, args.data(), envp.data());
    if (rc != 0) {
        sigaction(SIGINT, &oldInt, nullptr);
        throw InputError("", "--python",
                         "cannot start " + argv[0] + ": " + std::strerror(rc) +
                             " (give the Python interpreter with --python)");
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    sigaction(SIGINT, &oldInt, nullptr);
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return kInternalError;
}

int runKt(const KtOptions& opt, const std::vector<std::string>& rest) {
    if (rest.empty())
        throw InputError("", "SCRIPT", "give the Python script to run (tilescope-cli kt SCRIPT.py [ARGS...])");
    const fs::path script = rest.front();
    std::error_code ec;
    if (!fs::is_regular_file(script, ec))
        throw InputError(script.string(), {}, "no such script");
    parseBackendSpec(opt.backend); // a bad spec is refused here, before the script runs
    const std::string db = opt.db.empty() ? defaultDatabase(script).string() : absolute(opt.db);
    const fs::path shim = shimDirectory();

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
    const int status = runChild(argv, {{"PYTHONPATH", pythonPath},
                                       {"TILESCOPE_CLI", thisProgram().string()},
                                       {"TILESCOPE_KT_BACKEND", opt.backend},
                                       {"TILESCOPE_KT_DB", db},
                                       {"TILESCOPE_KT_TUNE_ARGS", nlohmann::json(tuneArgs).dump()}});
    if (!opt.open)
        return status;
    if (!fs::exists(db, ec)) {
        std::cerr << "kt: the script tuned nothing, so there is no " << db << " to open\n";
        return status;
    }
    const fs::path gui = thisProgram().parent_path() / "tilescope";
    std::cerr << "kt: opening " << db << " in the workbench\n";
    std::vector<char*> args{const_cast<char*>(gui.c_str()), const_cast<char*>(db.c_str()), nullptr};
    execv(gui.c_str(), args.data());
    throw InputError("", "--open", "cannot start the workbench " + gui.string() + ": " + std::strerror(errno));
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
    cmd->add_option("--tune-arg", opt->tuneArgs,
                    "An argument for every tune the script starts (repeat it; e.g. --tune-arg=--guard)")
        ->allow_extra_args(false);
    cmd->prefix_command(); // SCRIPT and everything after it go to the script
    cmd->footer("Usage: tilescope-cli kt [OPTIONS] SCRIPT.py [ARGS...]. What differs from Kernel Tuner and what is "
                "refused: Help > Kernel Tuner scripts.\nExit status: the script's.");
    setAction(cmd, [opt, cmd] { return runKt(*opt, cmd->remaining()); });
}

} // namespace tilescope::cli
