// The CUPTI passes after timing: hardware counters of one more launch, and how often each machine
// instruction ran in another (SASS metrics), or a note saying why not.

#include "measure/cuda/device/runtimeimpl.h"
#include "measure/metricnames.h"

namespace tilescope::cuda {

void WorkerRuntime::Impl::profile(const worker::Measure& m, worker::Result& r) {
    const std::vector<std::string> names = cuptiMetricNames(m.metrics);
    if (names.empty())
        return;
    // Counters are for the configs that rank near the best so far (TimingRule::profileUnderMs):
    // one clearly slower keeps its time and its static information, not a profiling pass; none
    // while a search has too few times to tell (a negative bound).
    if (m.timing.profileUnderMs < 0 ||
        (m.timing.profileUnderMs > 0 && r.measurement.time.medianMs > m.timing.profileUnderMs))
        return;
    if (!profiler) {
        r.metricsNote = cuptiNote.empty() ? "CUPTI counters are not available on this device" : cuptiNote;
        return;
    }
    if (!metricSetChosen || names != metricSet) {
        metricSet = names;
        metricSetChosen = true;
        try {
            metricSetError = profiler->setMetrics(names);
        } catch (const std::exception& e) {
            metricSetError = e.what();
        }
    }
    if (!metricSetError.empty()) {
        r.metricsNote = "metrics not collected: " + metricSetError;
        return;
    }
    std::string error;
    CUresult launchError = CUDA_SUCCESS;
    std::optional<std::vector<Metric>> values;
    try {
        // No exception may cross the profiler: the launch reports failure by its status.
        values = profiler->profile(
            [this]() noexcept {
                const CUresult rc = restoreReadWrite();
                return rc != CUDA_SUCCESS ? rc : launch();
            },
            &error, &launchError);
    } catch (const std::exception& e) {
        error = e.what();
    }
    if (launchError != CUDA_SUCCESS && isStickyError(launchError))
        throw CudaFailure{launchError, "the kernel failed under the profiler"};
    const CUresult after = cu->cuStreamSynchronize(stream);
    if (after != CUDA_SUCCESS && isStickyError(after))
        throw CudaFailure{after, "the kernel failed under the profiler"};
    if (!values) {
        r.metricsNote = "metrics not collected: " + (error.empty() ? std::string("the profiler failed") : error);
        return;
    }
    // After the energy pass's metrics, when it ran.
    r.measurement.metrics.insert(r.measurement.metrics.end(), values->begin(), values->end());
    r.measurement.parts.profiled = 1;
}

void WorkerRuntime::Impl::countExecuted(const worker::Measure& m, worker::Result& r) {
    if (!m.executedCounts || r.measurement.status != ResultStatus::Ok)
        return;
    if (!profiler) {
        r.executedNote = cuptiNote.empty() ? "CUPTI is not available on this device" : cuptiNote;
        return;
    }
    std::string error;
    CUresult launchError = CUDA_SUCCESS;
    std::optional<std::vector<InstructionCount>> counts;
    try {
        counts = profiler->countInstructions(
            [this]() noexcept {
                const CUresult rc = restoreReadWrite();
                return rc != CUDA_SUCCESS ? rc : launch();
            },
            m.kernelName, &error, &launchError);
    } catch (const std::exception& e) {
        error = e.what();
    }
    if (launchError != CUDA_SUCCESS && isStickyError(launchError))
        throw CudaFailure{launchError, "the kernel failed under CUPTI's SASS metrics"};
    if (!counts) {
        r.executedNote = "executed instructions not counted: " + error;
        return;
    }
    r.measurement.executed = std::move(*counts);
}

} // namespace tilescope::cuda
