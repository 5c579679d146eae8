#pragma once
// Worker processes: how the engine starts one (on pipes, or through a launcher on its stdin and
// stdout), and a depot of warm ones for the tunes a script starts.
//
// `tilescope-cli kt` and `tilescope-cli triton` run a Python script whose every tuning call is a
// `tilescope-cli tune` process of its own, and each would start its worker and wait for the
// driver, the context and CUPTI before its first config. The depot starts the worker of each of
// the script's devices beside the script; a tune's CUDA backend adopts it (its pipes passed over
// a Unix socket, whose path the depot's environment variable names) instead of starting its
// own. Once the adopted worker has ended, the depot starts the device's next one, so that a spare
// never starts while a worker of its device measures.

#include <sys/types.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tilescope {

/// Names the depot's socket in the environment of the processes a script starts.
inline constexpr const char* kWorkerDepotVariable = "TILESCOPE_WORKER_DEPOT";

/// A worker process and the engine's ends of its pipes (close-on-exec, numbered 10 or above).
struct WorkerProcess {
    pid_t pid = -1;
    int in = -1;  ///< requests: the engine writes
    int out = -1; ///< replies: the engine reads
    int err = -1; ///< the worker's stderr (and stdout on pipes), non-blocking
};

/// How a worker process starts.
struct WorkerLaunch {
    std::vector<std::string> argv; ///< the program and its arguments
    /// The worker speaks over its stdin and stdout (through ssh or another launcher, argv[0]
    /// searched on PATH); else over descriptors 3 and 4, its stdin /dev/null and its stdout
    /// joined to its stderr (what the driver or CUPTI prints never reaches a reply).
    bool stdio = false;
    bool ownGroup = false;                     ///< a process group of its own (Ctrl-C in the terminal passes it by)
    std::vector<std::string> extraEnvironment; ///< NAME=VALUE entries replacing or adding to this process's
};

/// Starts a worker process; "" and `process`, or why it could not start.
std::string startWorkerProcess(const WorkerLaunch& launch, WorkerProcess& process);

class WorkerDepot {
public:
    /// Starts a worker of `worker` on each of `devices` at once and serves them at a Unix socket in a
    /// new private folder. Throws std::runtime_error when the socket cannot be made.
    WorkerDepot(std::filesystem::path worker, const std::vector<int>& devices);
    /// Ends the workers nobody adopted, waits for every worker it started (killing those still
    /// running after a few seconds), and removes the socket.
    ~WorkerDepot();
    WorkerDepot(const WorkerDepot&) = delete;
    WorkerDepot& operator=(const WorkerDepot&) = delete;

    /// The socket's path, for kWorkerDepotVariable.
    std::string socketPath() const;
    /// Workers handed to a tune so far.
    int adopted() const;

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

/// A warm worker for `device` from the depot at `socketPath` (not a child of this process: its
/// end shows as the end of its stderr, and the depot reaps it); nullopt when none can be had (the
/// depot gone, or it could not start one), and the caller starts its own.
std::optional<WorkerProcess> adoptWorker(const std::string& socketPath, int device);

} // namespace tilescope
