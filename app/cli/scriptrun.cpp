// Running a Python script with a stand-in package of Tilescope's (scriptrun.h).

#include "scriptrun.h"

#include "base/error.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>

extern char** environ;

namespace tilescope::cli {

namespace fs = std::filesystem;

fs::path thisProgram() {
    std::error_code ec;
    fs::path self = fs::read_symlink("/proc/self/exe", ec);
    return ec ? fs::path() : self;
}

std::string absolutePath(const fs::path& p) {
    std::error_code ec;
    const fs::path a = fs::absolute(p, ec);
    return (ec ? p : a).lexically_normal().string();
}

fs::path scriptDatabase(const fs::path& script) {
    return fs::current_path() / (script.stem().string() + ".db");
}

fs::path findPythonPackage(const std::string& package, const std::string& envVar, const std::string& sourceFolder) {
    const auto holds = [&](const fs::path& dir) {
        std::error_code ec;
        return !dir.empty() && fs::exists(dir / package / "__init__.py", ec);
    };
    if (const char* env = std::getenv(envVar.c_str()); env && *env) {
        if (!holds(env))
            throw InputError("", envVar, envVar + " is " + env + ", which holds no " + package + " package");
        return env;
    }
    const fs::path self = thisProgram();
    for (const fs::path& dir :
         {self.parent_path() / "python", self.parent_path().parent_path() / "share" / "tilescope" / "python",
          fs::path(TILESCOPE_SOURCE_DIR) / sourceFolder}) {
        if (holds(dir))
            return dir;
    }
    throw InputError("", {},
                     "cannot find Tilescope's " + package + " package (looked beside " + self.string() +
                         ", in ../share/tilescope/python and in the source tree); set " + envVar + " to its folder");
}

int runChild(const std::vector<std::string>& argv, const std::vector<std::pair<std::string, std::string>>& env,
             const std::string& hint) {
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
        throw InputError("", "--python", "cannot start " + argv[0] + ": " + std::strerror(rc) + " (" + hint + ")");
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    sigaction(SIGINT, &oldInt, nullptr);
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return 1;
}

void openWorkbench(const std::string& db, const std::string& who) {
    const fs::path gui = thisProgram().parent_path() / "tilescope";
    std::cerr << who << ": opening " << db << " in the workbench\n";
    std::cerr.flush();
    std::vector<char*> args{const_cast<char*>(gui.c_str()), const_cast<char*>(db.c_str()), nullptr};
    execv(gui.c_str(), args.data());
    throw InputError("", "--open", "cannot start the workbench " + gui.string() + ": " + std::strerror(errno));
}

} // namespace tilescope::cli
