// The timed launches: the L2 context (a flush, a smaller polluter, or nothing: warm) and the
// restore of ReadWrite buffers outside the events, one launch between them. When to stop and the
// statistics are Sampler's (measure/cuda/sampling.h), tested without a GPU.

#include "measure/cuda/device/runtimeimpl.h"
#include "measure/cuda/sampling.h"

#include <algorithm>

namespace tilescope::cuda {

double WorkerRuntime::Impl::timedLaunch(const worker::Result& r, std::int64_t writeBytes) {
    // The restore first, then the flush: the restored buffers start the sample as cold as the rest.
    check(restoreReadWrite(), "cannot restore the ReadWrite arguments (cuMemcpyDtoDAsync)");
    if (writeBytes > 0 && flush != 0)
        check(cu->cuMemsetD32Async(flush, ++flushValue, static_cast<std::size_t>(std::min(writeBytes, flushBytes) / 4),
                                   stream),
              "cannot write over the L2 cache (cuMemsetD32Async)");
    check(cu->cuEventRecord(startEvent, stream), "cuEventRecord");
    launchChecked(r, "a timed launch failed");
    check(cu->cuEventRecord(endEvent, stream), "cuEventRecord");
    check(cu->cuEventSynchronize(endEvent), "the kernel failed while it was timed");
    float ms = 0;
    check(cu->cuEventElapsedTime(&ms, startEvent, endEvent), "cuEventElapsedTime");
    return ms;
}

double WorkerRuntime::Impl::timedBatch(const worker::Result& r, int count) {
    check(cu->cuEventRecord(startEvent, stream), "cuEventRecord");
    for (int i = 0; i < count; ++i) {
        check(restoreReadWrite(), "cannot restore the ReadWrite arguments (cuMemcpyDtoDAsync)");
        launchChecked(r, "a warm-up launch failed");
    }
    check(cu->cuEventRecord(endEvent, stream), "cuEventRecord");
    check(cu->cuEventSynchronize(endEvent), "the kernel failed while it was warmed up");
    float ms = 0;
    check(cu->cuEventElapsedTime(&ms, startEvent, endEvent), "cuEventElapsedTime");
    return ms;
}

void WorkerRuntime::Impl::time(const worker::TimingRule& rule, worker::Result& r) {
    // The bytes written before each sample: the whole flush buffer (twice the L2), or the rule's
    // polluter size, for which the buffer grows once when it is larger.
    std::int64_t writeBytes = 0;
    if (rule.flushL2) {
        writeBytes = rule.l2WriteBytes > 0 ? (rule.l2WriteBytes + 3) / 4 * 4 : flushBytes;
        if (writeBytes > flushBytes) {
            freeBuffer(flush);
            flushBytes = 0;
            flush = allocate(writeBytes, "the L2 polluter of " + std::to_string(writeBytes) + " bytes");
            flushBytes = writeBytes;
        }
    }
    worker::Sampler sampler(rule);
    // Warm-up: clocks up, caches and TLBs warm, lazy driver work done; at least one launch. The
    // first launch alone tells how long one takes; the launches still wanted then go in batches
    // with one synchronisation each (Sampler::warmupBatch).
    const auto warmStart = Clock::now();
    double warmed = timedLaunch(r, 0) / 1000.0;
    int launches = 1;
    while (!sampler.warmedUp(launches, warmed, std::chrono::duration<double>(Clock::now() - warmStart).count())) {
        const int batch = sampler.warmupBatch(launches, warmed);
        warmed += timedBatch(r, batch) / 1000.0;
        launches += batch;
    }

    while (!sampler.add(timedLaunch(r, writeBytes))) {
    }
    r.measurement.time = sampler.stats();
    r.measurement.parts.raced = sampler.raced() ? 1 : 0;
    if (rule.keepSamples)
        r.measurement.samplesMs = sampler.samples();
}

} // namespace tilescope::cuda
