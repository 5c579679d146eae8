// The timed launches: L2 flush and restore outside the events, one launch between them. When to
// stop and the statistics are Sampler's (measure/cuda/sampling.h), tested without a GPU.

#include "measure/cuda/device/runtimeimpl.h"
#include "measure/cuda/sampling.h"

namespace tilescope::cuda {

double WorkerRuntime::Impl::timedLaunch(const worker::Result& r, bool flushL2) {
    if (flushL2 && flush != 0)
        check(cu->cuMemsetD32Async(flush, ++flushValue, static_cast<std::size_t>(flushBytes / 4), stream),
              "cannot flush the L2 cache (cuMemsetD32Async)");
    check(restoreReadWrite(), "cannot restore the ReadWrite arguments (cuMemcpyDtoDAsync)");
    check(cu->cuEventRecord(startEvent, stream), "cuEventRecord");
    launchChecked(r, "a timed launch failed");
    check(cu->cuEventRecord(endEvent, stream), "cuEventRecord");
    check(cu->cuEventSynchronize(endEvent), "the kernel failed while it was timed");
    float ms = 0;
    check(cu->cuEventElapsedTime(&ms, startEvent, endEvent), "cuEventElapsedTime");
    return ms;
}

TimingStats WorkerRuntime::Impl::time(const worker::TimingRule& rule, const worker::Result& r) {
    worker::Sampler sampler(rule);
    // Warm-up: clocks up, caches and TLBs warm, lazy driver work done; at least one launch.
    const auto warmStart = Clock::now();
    double warmed = 0;
    int launches = 0;
    do {
        warmed += timedLaunch(r, false) / 1000.0;
        ++launches;
    } while (!sampler.warmedUp(launches, warmed, std::chrono::duration<double>(Clock::now() - warmStart).count()));

    while (!sampler.add(timedLaunch(r, rule.flushL2))) {
    }
    return sampler.stats();
}

} // namespace tilescope::cuda
