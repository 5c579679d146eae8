#pragma once

// Hardware counters for one kernel launch through CUPTI's Range Profiler and Profiler Host API
// (CUDA 13.0; the legacy Profiling API is deprecated there). AutoRange + KernelReplay: CUPTI
// replays the launch once per pass and restores device memory between passes itself. Never used
// while timing: the worker runs it as a separate pass after the timed samples.

#include "model/measurement.h"

#include <cuda.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tilescope::cuda {

class CuptiProfiler {
public:
    /// Sets CUPTI up for `context` (current on the calling thread) on device `deviceIndex`.
    /// Returns null and says why in `note` when counters cannot be read: not permitted to this
    /// user (CUPTI_ERROR_INSUFFICIENT_PRIVILEGES: "GPU performance counters are restricted to
    /// administrators ..."), CUPTI missing, an unsupported chip.
    static std::unique_ptr<CuptiProfiler> create(CUcontext context, int deviceIndex, std::string* note);
    ~CuptiProfiler();
    CuptiProfiler(const CuptiProfiler&) = delete;
    CuptiProfiler& operator=(const CuptiProfiler&) = delete;

    /// "GH100".
    const std::string& chipName() const;
    /// Chooses the metrics of the following profile() calls (the config image is built once per
    /// set). Returns "" or why not: "unknown metric 'foo__bar.sum'".
    std::string setMetrics(const std::vector<std::string>& names);
    /// Passes the current metric set needs (1 for the default set on GH100).
    int passes() const;
    /// Runs `launch` (which enqueues the kernel once and returns its launch status) under the
    /// profiler as many times as the passes need and returns one value per metric, in the order
    /// of setMetrics. nullopt with `error` set when the launch or CUPTI failed; `launchError`
    /// then holds the launch's own status when that was the cause.
    std::optional<std::vector<Metric>> profile(const std::function<CUresult()>& launch, std::string* error,
                                               CUresult* launchError = nullptr);

    /// One launch of `launch` (which enqueues the kernel once and returns its launch status) with
    /// CUPTI's SASS metrics (cupti_sass_metrics.h): how many times warps executed each machine
    /// instruction of the function `functionName` (the cubin's name), by offset in the function.
    /// The kernel runs patched, slower: never while timing. nullopt with `error` set when CUPTI or
    /// the launch failed (`launchError` then holds the launch's status when that was the cause).
    std::optional<std::vector<InstructionCount>> countInstructions(const std::function<CUresult()>& launch,
                                                                   const std::string& functionName,
                                                                   std::string* error,
                                                                   CUresult* launchError = nullptr);

private:
    CuptiProfiler();
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

} // namespace tilescope::cuda
