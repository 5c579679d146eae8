#pragma once

// tilescope-worker started the way the engine starts it (posix_spawn, the request and reply pipes
// on descriptors 3 and 4, its stderr captured), for the worker suites: tests/core/measure/tst_worker.cpp
// (without a device) and tests/gpu/tst_workergpu.cpp (on one).

#include "measure/cuda/workerprotocol.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace {

// The worker as built, unless $TILESCOPE_WORKER names another (as for the engine): the build's
// absolute paths may not exist where the suite runs (a GPU machine).
inline const char* workerPath() {
    const char* env = std::getenv("TILESCOPE_WORKER");
    return env && *env ? env : TILESCOPE_WORKER;
}
const char* const kWorker = workerPath();

// A pipe end moved to a descriptor >= 10 (close-on-exec), so that the spawn's dup2 to 3 and 4
// always copies: dup2(3, 3) would keep close-on-exec and the worker would not see it.
inline int highFd(int fd) {
    const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 10);
    ::close(fd);
    return moved;
}

inline bool driverPresent() {
    static const bool present = [] {
        void* library = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
        return library != nullptr; // left loaded: the answer cannot change
    }();
    return present;
}

/// A worker started as the engine starts it.
struct Worker {
    pid_t pid = -1;
    int requests = -1; // we write
    int replies = -1;  // we read
    int errors = -1;   // its stderr
    std::string stderrText;

    ~Worker() {
        if (pid > 0) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, nullptr, 0);
        }
        closeRequests();
        for (int fd : {replies, errors}) {
            if (fd >= 0)
                ::close(fd);
        }
    }

    /// Starts the worker on `device`, with `environment` ("NAME=value") added to ours.
    bool start(int device, const std::vector<std::string>& environment = {}) {
        int toWorker[2];
        int fromWorker[2];
        int errPipe[2];
        if (::pipe(toWorker) != 0 || ::pipe(fromWorker) != 0 || ::pipe(errPipe) != 0)
            return false;
        const int childIn = highFd(toWorker[0]);
        const int childOut = highFd(fromWorker[1]);
        const int childErr = highFd(errPipe[1]);
        requests = highFd(toWorker[1]);
        replies = highFd(fromWorker[0]);
        errors = highFd(errPipe[0]);

        std::vector<std::string> args = {kWorker, "--device", std::to_string(device), "--in", "3", "--out", "4"};
        std::vector<char*> argv;
        for (std::string& a : args)
            argv.push_back(a.data());
        argv.push_back(nullptr);
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_adddup2(&actions, childIn, 3);
        posix_spawn_file_actions_adddup2(&actions, childOut, 4);
        posix_spawn_file_actions_adddup2(&actions, childErr, 2);
        std::vector<std::string> env;
        for (char** e = environ; *e; ++e) {
            const std::string entry = *e;
            const std::string name = entry.substr(0, entry.find('='));
            const bool replaced = std::any_of(environment.begin(), environment.end(), [&](const std::string& mine) {
                return mine.substr(0, mine.find('=')) == name;
            });
            if (!replaced)
                env.push_back(entry);
        }
        env.insert(env.end(), environment.begin(), environment.end());
        std::vector<char*> envp;
        for (std::string& e : env)
            envp.push_back(e.data());
        envp.push_back(nullptr);
        const int rc = ::posix_spawn(&pid, kWorker, &actions, nullptr, argv.data(), envp.data());
        posix_spawn_file_actions_destroy(&actions);
        ::close(childIn);
        ::close(childOut);
        ::close(childErr);
        if (rc != 0)
            pid = -1;
        return rc == 0;
    }

    void closeRequests() {
        if (requests >= 0)
            ::close(requests);
        requests = -1;
    }

    /// The exit status, or -1 when it did not exit within `ms` (it is then killed).
    int waitExit(int ms) {
        const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
        int status = 0;
        pid_t got = 0;
        while ((got = ::waitpid(pid, &status, WNOHANG)) == 0 && std::chrono::steady_clock::now() < until)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        if (got == 0) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, nullptr, 0);
            pid = -1;
            return -1;
        }
        pid = -1;
        // Its stderr is complete once it has exited.
        char buffer[4096];
        ssize_t n = 0;
        while ((n = ::read(errors, buffer, sizeof buffer)) > 0)
            stderrText.append(buffer, static_cast<std::size_t>(n));
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }

    bool hello(tilescope::worker::Hello& out) {
        tilescope::worker::Frame frame;
        if (tilescope::worker::readFrame(replies, frame, 60000) != tilescope::worker::ReadStatus::Ok)
            return false;
        if (tilescope::worker::frameType(frame) != "hello")
            return false;
        out = tilescope::worker::decodeHello(frame);
        return true;
    }
};

} // namespace
