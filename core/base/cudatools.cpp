#include "base/cudatools.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string_view>

extern char** environ;

namespace tilescope {

namespace fs = std::filesystem;

namespace {

bool executable(const fs::path& path) {
    std::error_code ec;
    return !path.empty() && fs::is_regular_file(path, ec) && ::access(path.c_str(), X_OK) == 0;
}

std::vector<fs::path> pathDirs() {
    std::vector<fs::path> dirs;
    const char* path = std::getenv("PATH");
    if (!path)
        return dirs;
    std::string_view rest = path;
    while (true) {
        const std::size_t colon = rest.find(':');
        const std::string_view dir = rest.substr(0, colon);
        dirs.emplace_back(dir.empty() ? std::string_view(".") : dir);
        if (colon == std::string_view::npos)
            break;
        rest.remove_prefix(colon + 1);
    }
    return dirs;
}

} // namespace

std::vector<fs::path> standardCudaDirs() {
    return {"/usr/local/cuda", "/opt/nvidia/cuda", "/usr/lib/cuda"};
}

std::vector<fs::path> cudaToolkitRoots(const std::vector<fs::path>& cudaDirs) {
    std::vector<fs::path> roots;
    for (const fs::path& dir : pathDirs()) {
        if (executable(dir / "nvcc"))
            roots.push_back(dir.parent_path());
    }
    for (const char* var : {"CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"}) {
        if (const char* root = std::getenv(var); root && *root)
            roots.emplace_back(root);
    }
    roots.insert(roots.end(), cudaDirs.begin(), cudaDirs.end());
    return roots;
}

fs::path findCudaTool(const std::string& name, const char* envVar, std::string* error,
                      const std::vector<fs::path>& cudaDirs, const std::vector<std::string>& subdirs) {
    if (const char* explicitPath = std::getenv(envVar); explicitPath && *explicitPath) {
        if (executable(explicitPath))
            return explicitPath;
        if (error)
            *error = std::string(envVar) + " names " + explicitPath +
                     ", which is not an executable file: point it at " + name + " or unset it";
        return {};
    }
    std::vector<fs::path> candidates;
    const std::vector<fs::path> path = pathDirs();
    for (const fs::path& dir : path)
        candidates.push_back(dir / name);
    for (const fs::path& root : cudaToolkitRoots(cudaDirs)) {
        candidates.push_back(root / "bin" / name);
        for (const std::string& sub : subdirs)
            candidates.push_back(root / sub / name);
    }
    for (const fs::path& candidate : candidates) {
        if (executable(candidate))
            return candidate;
    }
    if (error) {
        std::string dirs;
        for (const fs::path& root : cudaDirs)
            dirs += (dirs.empty() ? "" : ", ") + (root / "bin").string();
        *error = name + " is not on PATH, beside nvcc, in $CUDA_HOME/bin" + (dirs.empty() ? "" : " or in " + dirs);
    }
    return {};
}

ProcessOutput runTool(const std::vector<std::string>& argv, int timeoutMs) {
    ProcessOutput result;
    if (argv.empty()) {
        result.error = "no program";
        return result;
    }
    int outPipe[2] = {-1, -1};
    int errPipe[2] = {-1, -1};
    if (::pipe2(outPipe, O_CLOEXEC) != 0 || ::pipe2(errPipe, O_CLOEXEC) != 0) {
        result.error = std::string("cannot make a pipe: ") + std::strerror(errno);
        for (int fd : {outPipe[0], outPipe[1], errPipe[0], errPipe[1]})
            if (fd >= 0)
                ::close(fd);
        return result;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1);
    posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2);
    std::vector<char*> args;
    for (const std::string& a : argv)
        args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid = -1;
    const int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(outPipe[1]);
    ::close(errPipe[1]);
    if (rc != 0) {
        ::close(outPipe[0]);
        ::close(errPipe[0]);
        result.error = "cannot start " + argv[0] + ": " + std::strerror(rc);
        return result;
    }
    result.started = true;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
    pollfd fds[2] = {{outPipe[0], POLLIN, 0}, {errPipe[0], POLLIN, 0}};
    std::string* sinks[2] = {&result.out, &result.err};
    int open = 2;
    char buffer[65536];
    while (open > 0) {
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            result.timedOut = true;
            ::kill(pid, SIGKILL);
            break;
        }
        const int n = ::poll(fds, 2, static_cast<int>(left.count()));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            continue;
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            const ssize_t got = ::read(fds[i].fd, buffer, sizeof buffer);
            if (got > 0) {
                sinks[i]->append(buffer, static_cast<std::size_t>(got));
            } else if (got == 0 || errno != EINTR) {
                ::close(fds[i].fd);
                fds[i].fd = -1;
                --open;
            }
        }
    }
    for (pollfd& f : fds)
        if (f.fd >= 0)
            ::close(f.fd);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (result.timedOut)
        result.status = -1;
    else if (WIFEXITED(status))
        result.status = WEXITSTATUS(status);
    else if (WIFSIGNALED(status))
        result.status = 128 + WTERMSIG(status);
    return result;
}

} // namespace tilescope
