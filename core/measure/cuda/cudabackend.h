#pragma once

// Measuring on real GPUs. The engine never creates a CUDA context: it starts one
// tilescope-worker process per device, talks to it over pipes (workerprotocol.h), dispatches a
// batch's configs to idle workers, and supervises them. A config that faults (the context is
// then lost) or hangs takes down only its worker: the result is `crashed` or `timeout` with the
// reason, a fresh worker is started with its buffers rebuilt, and the run goes on.
//
// Verification: the first config that runs correctly on a worker becomes that worker's
// reference (unless the problem's ReferenceArguments give one); a fresh worker first re-runs
// the reference config, so every config is compared with the same output.

#include "measure/backend.h"
#include "measure/cuda/workerprotocol.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace tilescope {

/// Which runs use guarded buffers: each argument buffer then ends exactly at an unmapped page,
/// so that a kernel that reads or writes past a buffer's end faults every time, and the fault's
/// message names the arguments and their sizes (worker::Guard).
enum class GuardPolicy {
    Off,       ///< ordinary allocations only
    Reference, ///< the run that makes or repeats the reference (without verification: each worker's first config)
    Every,     ///< every launch of every config (`tune --guard`)
};

struct CudaBackendOptions {
    std::vector<int> devices{0};      ///< device ordinals, one worker each
    std::filesystem::path workerPath; ///< "" = $TILESCOPE_WORKER, else tilescope-worker beside this program
    /// A command that starts the worker elsewhere, before the worker's own arguments: ssh to a
    /// host (BackendSpec::launcher), or another launcher (`srun`, a container). The worker then
    /// speaks over its stdin and stdout (--stdio); configs are still compiled here, so the far
    /// side needs the NVIDIA driver and tilescope-worker, not the CUDA toolkit. Empty: a local
    /// worker on pipes.
    std::vector<std::string> launcher;
    std::string remoteWorker = "tilescope-worker"; ///< with a launcher: the worker's path on the far side
    std::vector<std::string> metrics;              ///< CUPTI metric names (expanded; see metricnames.h); empty = none
    worker::TimingRule timing;                     ///< how long to sample each config
    bool verify = true;                            ///< compare outputs with the reference
    std::uint64_t seed = 0;                        ///< for the problem's Random fills
    /// The watchdog: a config whose result takes longer than this is a Timeout and its worker is
    /// killed. 0 = MeasureControl::perConfigSeconds when set, else derived from the timing rule.
    double watchdogSeconds = 0;
    double startSeconds = 120; ///< how long a worker may take to start and open the problem
    GuardPolicy guard = GuardPolicy::Reference;
    /// Run the first config once in a worker under compute-sanitizer's memcheck (found by
    /// findComputeSanitizer, measure/cuda/memorycheck.h), compiled with line information, before
    /// it is measured: a memcheck report becomes its result (crashed, the message giving the
    /// kernel's line and the argument buffer the address is in or next to); without one it is
    /// measured as usual. On this machine's GPUs only (no launcher).
    bool sanitize = false;
    /// When set: each config's Vector arguments flagged Output (all of them when none is flagged),
    /// as its first launch left them, go to `outputsDir/<key>/<argument index>.bin`, the key being
    /// the config's values joined with "," as Kernel Tuner's cache keys are ("128,2,1"). For callers
    /// that check outputs themselves (tilescope-cli kt: Kernel Tuner's run_kernel and verify).
    std::filesystem::path outputsDir;
    /// After each config's measurement, one more launch with CUPTI's SASS metrics: how often each
    /// machine instruction ran (Measurement::executed), to be counted by source line
    /// (analysis/sourcelines.h). `analyze --lines --executed`.
    bool executedCounts = false;
    /// Notes for people, each said once: counters not permitted, a worker restarted, ...
    std::function<void(const std::string&)> note;
};

class CudaBackend : public Backend {
public:
    explicit CudaBackend(CudaBackendOptions options = {});
    ~CudaBackend() override;
    CudaBackend(const CudaBackend&) = delete;
    CudaBackend& operator=(const CudaBackend&) = delete;

    /// Starts the workers and opens the problem on each. Throws InputError when no worker can
    /// run: no NVIDIA driver (the message suggests replay or analysis), no such device, a
    /// problem whose buffers cannot be built. Devices that fail while others work are dropped
    /// with a note.
    BackendInfo open(const TuningProblem& problem, std::size_t shapeIndex, const ConfigSpace& space) override;
    void measure(std::span<const MeasureItem> items, const MeasureControl& control, const MeasureSink& sink) override;
    void close() override;
    /// Fills the workers' Random inputs again from `seed`; each reference config is run again on
    /// them before the configs compared with it. False when the problem has no Random fill (or
    /// the seed is the one they hold).
    bool reseed(std::uint64_t seed) override;

    /// What the workers reported at start, one per device in use (after open).
    std::vector<worker::DeviceInfo> devices() const;
    /// Workers started again after a crash or a timeout, over the backend's life.
    int restarts() const;

    /// The tilescope-worker this backend would start (for messages and --help).
    std::filesystem::path resolvedWorkerPath() const;

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

} // namespace tilescope
