// The timed launches: the L2 context (a flush, a smaller polluter, or nothing: warm) and the
// restore of ReadWrite buffers outside the events, one launch between them, or in the warm context
// a batch of launches of a kernel shorter than a launch takes to queue. When to stop and the
// statistics are Sampler's (measure/cuda/sampling.h), tested without a GPU.

#include "measure/cuda/device/runtimeimpl.h"
#include "measure/cuda/sampling.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace tilescope::cuda {

double WorkerRuntime::Impl::elapsedMs(const char* failure) {
    check(cu->cuEventSynchronize(endEvent), failure);
    float ms = 0;
    check(cu->cuEventElapsedTime(&ms, startEvent, endEvent), "cuEventElapsedTime");
    return ms;
}

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
    return elapsedMs("the kernel failed while it was timed");
}

double WorkerRuntime::Impl::timedBatch(const worker::Result& r, int count) {
    check(cu->cuEventRecord(startEvent, stream), "cuEventRecord");
    for (int i = 0; i < count; ++i) {
        check(restoreReadWrite(), "cannot restore the ReadWrite arguments (cuMemcpyDtoDAsync)");
        launchChecked(r, "a warm-up launch failed");
    }
    check(cu->cuEventRecord(endEvent, stream), "cuEventRecord");
    return elapsedMs("the kernel failed while it was warmed up");
}

bool WorkerRuntime::Impl::makeHold() {
    if (holdTried)
        return holdWord != nullptr;
    holdTried = true;
    constexpr std::size_t kPage = 4096;
    void* page = std::aligned_alloc(kPage, kPage);
    if (!page)
        return false;
    std::memset(page, 0, kPage);
    CUdeviceptr mapped = 0;
    if (cu->cuMemHostRegister(page, kPage, CU_MEMHOSTREGISTER_DEVICEMAP) != CUDA_SUCCESS) {
        std::free(page);
        return false;
    }
    if (cu->cuMemHostGetDevicePointer(&mapped, page, 0) != CUDA_SUCCESS) {
        cu->cuMemHostUnregister(page);
        std::free(page);
        return false;
    }
    holdWord = static_cast<std::uint32_t*>(page);
    holdDevice = mapped;
    holdValue = 0;
    return true;
}

void WorkerRuntime::Impl::releaseHold() {
    // A lost context keeps its registration: the page is left to the process's exit.
    if (holdWord && !lost) {
        cu->cuMemHostUnregister(holdWord);
        std::free(holdWord);
    }
    holdWord = nullptr;
    holdDevice = 0;
    holdTried = false;
}

std::optional<double> WorkerRuntime::Impl::heldBatch(const worker::Result& r, int count) {
    if (!makeHold())
        return std::nullopt;
    // The stream waits until the word reaches the value (a cyclic comparison: it may wrap).
    const std::uint32_t value = ++holdValue;
    if (cu->cuStreamWaitValue32(stream, holdDevice, value, CU_STREAM_WAIT_VALUE_GEQ) != CUDA_SUCCESS) {
        releaseHold();
        holdTried = true; // not again
        return std::nullopt;
    }
    {
        // From here the stream is held: the word is set however this block ends, a launch that
        // fails included, so that nothing queued waits for ever.
        struct Release {
            std::uint32_t* word;
            std::uint32_t value;
            ~Release() { std::atomic_ref<std::uint32_t>(*word).store(value, std::memory_order_release); }
        } release{holdWord, value};
        check(restoreReadWrite(), "cannot restore the ReadWrite arguments (cuMemcpyDtoDAsync)");
        check(cu->cuEventRecord(startEvent, stream), "cuEventRecord");
        for (int i = 0; i < count; ++i)
            launchChecked(r, "a timed launch failed");
        check(cu->cuEventRecord(endEvent, stream), "cuEventRecord");
    }
    return elapsedMs("the kernel failed while it was timed");
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
    // Warm-up: clocks up, caches and TLBs warm, lazy driver work done; at least one launch, and
    // short where this worker timed samples a moment ago (Sampler::warmupFor). The first launch
    // alone tells how long one takes; the launches still wanted then go in batches with one
    // synchronisation each (Sampler::warmupBatch).
    worker::TimingRule warm = rule;
    const auto warmStart = Clock::now();
    warm.warmupSeconds = worker::Sampler::warmupFor(
        rule.warmupSeconds, lastSampled ? std::chrono::duration<double>(warmStart - *lastSampled).count()
                                        : std::numeric_limits<double>::infinity());
    worker::Sampler sampler(warm);
    double warmed = timedLaunch(r, 0) / 1000.0;
    int launches = 1;
    while (!sampler.warmedUp(launches, warmed, std::chrono::duration<double>(Clock::now() - warmStart).count())) {
        const int batch = sampler.warmupBatch(launches, warmed);
        warmed += timedBatch(r, batch) / 1000.0;
        launches += batch;
    }
    r.measurement.parts.warmup = std::chrono::duration<double>(Clock::now() - warmStart).count();

    // The samples. In the warm context nothing is queued before a sample's start event that would
    // keep the GPU busy while the CPU queues the launch, so the launch's queueing would be timed:
    // the sample's work is queued behind the stream's hold and released at once. A kernel shorter
    // than kBatchBelowSeconds is timed in batches of launches there (with no buffer to restore
    // between them), a sample the mean of a batch (Sampler's rule).
    bool restores = false;
    for (std::size_t i = 0; i < pristine.size(); ++i)
        restores = restores || (pristine[i] != 0 && !(i < untouched.size() && untouched[i]));
    bool hold = writeBytes == 0;
    int batch = worker::Sampler::launchesPerSample(warmed / launches, hold && !restores);
    for (;;) {
        const std::optional<double> held = hold ? heldBatch(r, batch) : std::nullopt;
        if (hold && !held) {
            hold = false; // the stream cannot be held: one launch a sample, as before
            batch = 1;
        }
        if (held ? sampler.add(*held / batch, batch) : sampler.add(timedLaunch(r, writeBytes)))
            break;
    }
    lastSampled = Clock::now();
    r.measurement.time = sampler.stats();
    r.measurement.parts.samples = sampler.count();
    r.measurement.parts.raced = sampler.raced() ? 1 : 0;
    r.measurement.parts.batched = batch > 1 ? 1 : 0;
    r.measurement.parts.batchLaunches = batch > 1 ? batch : 0;
    if (rule.keepSamples)
        r.measurement.samplesMs = sampler.samples();
}

} // namespace tilescope::cuda
