#include "measure/cuda/device/workerruntime.h"

#include "base/error.h"
#include "measure/cuda/argumentdata.h"
#include "measure/cuda/device/cudadriver.h"
#include "measure/cuda/device/cuptiprofiler.h"
#include "measure/cuda/launchplan.h"
#include "measure/metricnames.h"
#include "spec/tuningproblem.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <new>
#include <optional>
#include <string>

namespace tilescope::cuda {

namespace {

using Clock = std::chrono::steady_clock;

/// A driver call that failed inside open() or measure(): what was being done, and the status.
/// Caught at the top of each request and turned into its answer (sticky: the context is lost).
struct CudaFailure {
    CUresult rc;
    std::string what;
};

/// The poison written into WriteOnly outputs before the verification launch: every byte 0xFF,
/// a NaN in every floating-point type, so an element the kernel never writes cannot pass.
constexpr unsigned char kPoison = 0xFF;
/// Warm-up launches stop here even when the warm-up time is not reached (tiny kernels).
constexpr int kMaxWarmupLaunches = 10000;
/// Samples are capped here whatever the timing rule asks.
constexpr int kSampleCap = 100000;

std::string bytesText(double bytes) {
    char text[32];
    if (bytes >= 1024.0 * 1024 * 1024)
        std::snprintf(text, sizeof text, "%.2f GiB", bytes / (1024.0 * 1024 * 1024));
    else if (bytes >= 1024.0 * 1024)
        std::snprintf(text, sizeof text, "%.1f MiB", bytes / (1024.0 * 1024));
    else
        std::snprintf(text, sizeof text, "%.0f bytes", bytes);
    return text;
}

std::string uuidText(const CUuuid& uuid) {
    // nvidia-smi's form: GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx
    std::string text = "GPU-";
    for (int i = 0; i < 16; ++i) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            text += '-';
        char hex[3];
        std::snprintf(hex, sizeof hex, "%02x", static_cast<unsigned>(static_cast<unsigned char>(uuid.bytes[i])));
        text += hex;
    }
    return text;
}

struct alignas(8) ScalarSlot {
    unsigned char bytes[8] = {};
};

} // namespace

struct WorkerRuntime::Impl {
    const Driver* cu = nullptr;
    int ordinal = -1;
    CUdevice device = 0;
    CUcontext context = nullptr;
    bool retained = false;
    CUstream stream = nullptr;
    CUevent startEvent = nullptr;
    CUevent endEvent = nullptr;
    bool lost = false; ///< a sticky error happened: the context is unusable
    std::string lostReason;

    // The device's limits, for clear launch errors.
    std::array<int, 3> maxBlock{1024, 1024, 64};
    std::array<int, 3> maxGrid{INT_MAX, 65535, 65535};
    int sharedPerBlock = 48 * 1024;      // without opting in
    int sharedPerBlockOptin = 48 * 1024; // with cuFuncSetAttribute
    std::int64_t l2Bytes = 0;

    std::unique_ptr<CuptiProfiler> profiler;
    std::string cuptiNote;
    bool metricSetChosen = false;
    std::vector<std::string> metricSet;
    std::string metricSetError;

    CUdeviceptr flush = 0;
    std::int64_t flushBytes = 0;
    unsigned flushValue = 0;

    // The open problem.
    std::unique_ptr<TuningProblem> problem;
    std::unique_ptr<LaunchPlanner> planner;
    std::vector<CUdeviceptr> buffers;  // per argument; 0 for scalars
    std::vector<CUdeviceptr> pristine; // per argument: the initial contents of a ReadWrite buffer, else 0
    std::vector<ScalarSlot> scalars;   // per argument
    std::vector<void*> params;         // per argument: what cuLaunchKernel reads
    struct Reference {
        std::size_t argument = 0;
        Validation method = Validation::Normalized;
        double tolerance = 0;
        std::vector<unsigned char> data;
    };
    std::vector<Reference> references;            // from the problem's ReferenceArguments
    std::vector<bool> hasT1Reference;             // per argument
    std::vector<std::vector<unsigned char>> kept; // per argument: the reference config's output
    bool hasKept = false;
    std::vector<std::vector<unsigned char>> host; // per argument: scratch for downloads

    // The config being measured.
    CUmodule module = nullptr;
    CUfunction function = nullptr;
    std::array<unsigned, 3> grid{1, 1, 1};
    std::array<unsigned, 3> block{1, 1, 1};
    unsigned sharedDynamic = 0;

    // ---- helpers ----

    void check(CUresult rc, const std::string& what) const {
        if (rc != CUDA_SUCCESS)
            throw CudaFailure{rc, what};
    }

    int attribute(CUdevice_attribute a, int fallback) const {
        int value = 0;
        return cu->cuDeviceGetAttribute(&value, a, device) == CUDA_SUCCESS ? value : fallback;
    }

    const std::vector<ArgumentSpec>& arguments() const { return planner->arguments(); }

    CUresult launch() {
        return cu->cuLaunchKernel(function, grid[0], grid[1], grid[2], block[0], block[1], block[2], sharedDynamic,
                                  stream, params.data(), nullptr);
    }

    /// Queues the copies that give every ReadWrite buffer its initial contents again.
    CUresult restoreReadWrite() {
        const auto& args = arguments();
        for (std::size_t i = 0; i < args.size(); ++i) {
            if (pristine[i] == 0)
                continue;
            const CUresult rc =
                cu->cuMemcpyDtoDAsync(buffers[i], pristine[i], static_cast<std::size_t>(args[i].bytes()), stream);
            if (rc != CUDA_SUCCESS)
                return rc;
        }
        return CUDA_SUCCESS;
    }

    void freeBuffer(CUdeviceptr& ptr) {
        if (ptr != 0 && !lost)
            cu->cuMemFree(ptr);
        ptr = 0;
    }

    void releaseProblem() {
        for (CUdeviceptr& p : buffers)
            freeBuffer(p);
        for (CUdeviceptr& p : pristine)
            freeBuffer(p);
        buffers.clear();
        pristine.clear();
        scalars.clear();
        params.clear();
        references.clear();
        hasT1Reference.clear();
        kept.clear();
        hasKept = false;
        host.clear();
        planner.reset();
        problem.reset();
    }

    void unloadModule() {
        if (module && !lost)
            cu->cuModuleUnload(module);
        module = nullptr;
        function = nullptr;
    }

    /// Allocates `bytes` of device memory, with a message that says how much is free when it cannot.
    CUdeviceptr allocate(std::int64_t bytes, const std::string& what) {
        CUdeviceptr ptr = 0;
        const CUresult rc = cu->cuMemAlloc(&ptr, static_cast<std::size_t>(bytes));
        if (rc == CUDA_ERROR_OUT_OF_MEMORY) {
            std::size_t free = 0;
            std::size_t total = 0;
            cu->cuMemGetInfo(&free, &total);
            throw CudaFailure{rc, "out of device memory for " + what + " (" + bytesText(static_cast<double>(bytes)) +
                                      "; " + bytesText(static_cast<double>(free)) + " free of " +
                                      bytesText(static_cast<double>(total)) + ")"};
        }
        check(rc, "cannot allocate " + bytesText(static_cast<double>(bytes)) + " for " + what);
        return ptr;
    }

    std::string describeFailure(const CudaFailure& f) const { return f.what + ": " + cu->describe(f.rc); }

    void readReferences(const std::filesystem::path& baseDir, const std::string& problemFile) {
        const auto& args = arguments();
        hasT1Reference.assign(args.size(), false);
        for (std::size_t k = 0; k < problem->referenceArguments.size(); ++k) {
            const ReferenceArgument& r = problem->referenceArguments[k];
            const std::string ptr = "/KernelSpecification/ReferenceArguments/" + std::to_string(k);
            const auto target =
                std::find_if(args.begin(), args.end(), [&](const ArgumentSpec& a) { return a.name == r.targetName; });
            if (target == args.end())
                throw InputError(problemFile, ptr + "/TargetName",
                                 "TargetName '" + r.targetName + "' is not the name of an argument");
            if (!target->isVector())
                throw InputError(problemFile, ptr + "/TargetName",
                                 "TargetName '" + r.targetName +
                                     "' is a Scalar argument; only Vector arguments hold output to compare");
            const std::optional<Validation> method = parseValidation(r.validationMethod);
            if (!method)
                throw InputError(problemFile, ptr + "/ValidationMethod",
                                 "unknown ValidationMethod '" + r.validationMethod + "'");
            Reference ref;
            ref.argument = target->index;
            ref.method = *method;
            ref.tolerance = r.validationThreshold.value_or(defaultTolerance(target->element));
            const std::string who = "reference '" + r.name + "' of " + target->label();
            if (r.fillType == "Constant") {
                if (!r.fillValue)
                    throw InputError(problemFile, ptr, who + ": FillType Constant needs a FillValue");
                if (const std::string why = valueFits(target->element, *r.fillValue); !why.empty())
                    throw InputError(problemFile, ptr + "/FillValue", who + ": FillValue is " + why);
                ref.data = constantContents(*target, *r.fillValue);
            } else if (r.fillType == "BinaryRaw") {
                if (r.dataSource.empty())
                    throw InputError(problemFile, ptr, who + ": FillType BinaryRaw needs a DataSource");
                const std::filesystem::path source(r.dataSource);
                const std::filesystem::path file = source.is_absolute() || baseDir.empty() ? source : baseDir / source;
                ref.data = readRawFile(file, target->bytes(), problemFile, ptr + "/DataSource", who);
            } else {
                throw InputError(problemFile, ptr + "/FillType",
                                 who + ": FillType '" + r.fillType +
                                     "' cannot give a reference output (use Constant or BinaryRaw)");
            }
            hasT1Reference[ref.argument] = true;
            references.push_back(std::move(ref));
        }
    }

    // ---- measuring ----

    /// Loads the module and the function, and fills FunctionInfo and the static info.
    void load(const worker::Measure& m, const std::vector<char>& cubin, worker::Result& r) {
        check(cu->cuModuleLoadData(&module, cubin.data()), "cannot load the cubin (cuModuleLoadData)");
        check(cu->cuModuleGetFunction(&function, module, m.kernelName.c_str()),
              "no kernel '" + m.kernelName + "' in the cubin (cuModuleGetFunction)");
        fillConstantMemory();
        worker::FunctionInfo info;
        int value = 0;
        check(cu->cuFuncGetAttribute(&value, CU_FUNC_ATTRIBUTE_NUM_REGS, function), "cuFuncGetAttribute(NUM_REGS)");
        info.registers = value;
        check(cu->cuFuncGetAttribute(&value, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, function),
              "cuFuncGetAttribute(LOCAL_SIZE_BYTES)");
        info.localBytes = value;
        check(cu->cuFuncGetAttribute(&value, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, function),
              "cuFuncGetAttribute(SHARED_SIZE_BYTES)");
        info.sharedStatic = value;
        check(cu->cuFuncGetAttribute(&value, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, function),
              "cuFuncGetAttribute(MAX_THREADS_PER_BLOCK)");
        info.maxThreadsPerBlock = value;
        r.function = info;
        StaticInfo s;
        s.registers = info.registers;
        s.stackFrame = info.localBytes;
        s.sharedStatic = info.sharedStatic;
        r.measurement.staticInfo = s;
    }

    /// Kernel Tuner's constant-memory arguments: each buffer's initial contents go to the
    /// module's __constant__ variable of the argument's name, once per module.
    void fillConstantMemory() {
        const auto& args = arguments();
        for (std::size_t i = 0; i < args.size(); ++i) {
            if (!args[i].constantMemory)
                continue;
            CUdeviceptr symbol = 0;
            std::size_t size = 0;
            check(cu->cuModuleGetGlobal(&symbol, &size, module, args[i].name.c_str()),
                  "no __constant__ variable '" + args[i].name + "' in the kernel for " + args[i].label() +
                      " (MemType Constant; cuModuleGetGlobal)");
            const CUdeviceptr source = pristine[i] != 0 ? pristine[i] : buffers[i];
            check(cu->cuMemcpyDtoD(symbol, source, std::min(size, static_cast<std::size_t>(args[i].bytes()))),
                  "cannot fill the __constant__ variable '" + args[i].name + "' (cuMemcpyDtoD)");
        }
    }

    /// The geometry of the config, checked against the function's and the device's limits.
    /// "" when it can be launched; otherwise why not.
    std::string prepare(const worker::Measure& m, worker::Result& r) {
        worker::FunctionInfo& info = *r.function;
        const LaunchPlan plan = planner->plan(m.config);
        if (!plan.ok())
            return plan.error;
        for (std::size_t i = 0; i < 3; ++i) {
            info.grid[i] = plan.grid[i];
            info.block[i] = plan.block[i];
        }
        info.sharedDynamic = plan.sharedDynamic;

        static const char* const kAxes[] = {"X", "Y", "Z"};
        const std::int64_t threads = plan.threadsPerBlock();
        if (threads > info.maxThreadsPerBlock)
            return "the block of " + std::to_string(threads) + " threads (" + std::to_string(plan.block[0]) + " x " +
                   std::to_string(plan.block[1]) + " x " + std::to_string(plan.block[2]) +
                   ") exceeds this kernel's limit of " + std::to_string(info.maxThreadsPerBlock) +
                   " threads per block (set by its " + std::to_string(info.registers) +
                   " registers per thread, __launch_bounds__ or the device)";
        for (std::size_t i = 0; i < 3; ++i) {
            if (plan.block[i] > maxBlock[i])
                return std::string("the block's ") + kAxes[i] + " size " + std::to_string(plan.block[i]) +
                       " exceeds the device's limit of " + std::to_string(maxBlock[i]);
            if (plan.grid[i] > maxGrid[i])
                return std::string("the grid's ") + kAxes[i] + " size " + std::to_string(plan.grid[i]) +
                       " blocks exceeds the device's limit of " + std::to_string(maxGrid[i]);
        }
        const std::int64_t shared = info.sharedStatic + plan.sharedDynamic;
        if (shared > sharedPerBlockOptin)
            return "the block needs " + std::to_string(info.sharedStatic) + " bytes of static and " +
                   std::to_string(plan.sharedDynamic) + " bytes of dynamic shared memory, more than the " +
                   std::to_string(sharedPerBlockOptin) + " bytes a block can have on this device";
        if (plan.sharedDynamic > 0 && shared > sharedPerBlock) {
            // Past 48 KB a kernel must opt in to dynamic shared memory.
            check(cu->cuFuncSetAttribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                         static_cast<int>(plan.sharedDynamic)),
                  "cannot allow " + std::to_string(plan.sharedDynamic) +
                      " bytes of dynamic shared memory (cuFuncSetAttribute)");
        }
        for (std::size_t i = 0; i < 3; ++i) {
            grid[i] = static_cast<unsigned>(plan.grid[i]);
            block[i] = static_cast<unsigned>(plan.block[i]);
        }
        sharedDynamic = static_cast<unsigned>(plan.sharedDynamic);
        int blocks = -1;
        if (cu->cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, function, static_cast<int>(threads),
                                                            static_cast<std::size_t>(plan.sharedDynamic)) !=
            CUDA_SUCCESS)
            blocks = -1;
        info.blocksPerSm = blocks;
        return {};
    }

    /// Launches once and checks the launch; the message of a launch that does not start says
    /// whether a block fits on an SM at all.
    void launchChecked(const worker::Result& r, const std::string& what) {
        const CUresult rc = launch();
        if (rc == CUDA_SUCCESS)
            return;
        std::string why = what;
        if (r.function && r.function->blocksPerSm == 0)
            why += " (not one block fits on an SM: " +
                   std::to_string(r.function->block[0] * r.function->block[1] * r.function->block[2]) + " threads of " +
                   std::to_string(r.function->registers) + " registers, " +
                   std::to_string(r.function->sharedStatic + r.function->sharedDynamic) + " bytes of shared memory)";
        throw CudaFailure{rc, why};
    }

    /// Runs the config once on poisoned outputs and compares them with the reference.
    void verify(const worker::Measure& m, worker::Result& r) {
        Measurement& out = r.measurement;
        const auto& args = arguments();
        check(restoreReadWrite(), "cannot restore the ReadWrite arguments (cuMemcpyDtoDAsync)");
        for (std::size_t i = 0; i < args.size(); ++i) {
            // A ReadWrite buffer is also an input: it keeps its initial contents.
            if (args[i].isVector() && args[i].access == Access::WriteOnly)
                check(cu->cuMemsetD8Async(buffers[i], kPoison, static_cast<std::size_t>(args[i].bytes()), stream),
                      "cannot poison " + args[i].label() + " (cuMemsetD8Async)");
        }
        launchChecked(r, "the launch failed");
        check(cu->cuStreamSynchronize(stream), "the kernel failed");

        std::vector<bool> download(args.size(), false);
        for (std::size_t i = 0; i < args.size(); ++i)
            download[i] = args[i].verify || hasT1Reference[i];
        for (std::size_t i = 0; i < args.size(); ++i) {
            if (!download[i])
                continue;
            host[i].resize(static_cast<std::size_t>(args[i].bytes()));
            check(cu->cuMemcpyDtoH(host[i].data(), buffers[i], host[i].size()),
                  "cannot copy " + args[i].label() + " to the host (cuMemcpyDtoH)");
        }

        bool failed = false;
        bool compared = false;
        bool unverified = false;
        double worst = 0;
        std::string message;
        auto take = [&](const Verdict& v) {
            compared = true;
            worst = std::max(worst, v.error);
            if (!v.ok && !failed) {
                failed = true;
                message = v.message;
            }
        };
        for (const Reference& ref : references)
            take(compareValues(args[ref.argument], host[ref.argument], ref.data, ref.method, ref.tolerance));
        for (std::size_t i = 0; i < args.size(); ++i) {
            if (!args[i].verify || hasT1Reference[i])
                continue;
            if (m.makeReference) {
                // A reference with holes would fail every later config: the candidate must write everything.
                if (const std::int64_t at = firstPoisoned(args[i], host[i]); at >= 0) {
                    Verdict v;
                    v.ok = false;
                    v.error = std::numeric_limits<double>::infinity();
                    v.message = args[i].label() + ": element " + std::to_string(at) +
                                " was never written (still the NaN poison), so this output cannot be the reference";
                    take(v);
                }
            } else if (hasKept) {
                take(compareValues(args[i], host[i], kept[i], Validation::Normalized,
                                   defaultTolerance(args[i].element)));
            } else {
                unverified = true;
            }
        }

        if (failed) {
            out.status = ResultStatus::WrongResult;
            out.message = message;
            out.verificationError = worst;
            return;
        }
        if (m.makeReference) {
            for (std::size_t i = 0; i < args.size(); ++i) {
                if (args[i].verify && !hasT1Reference[i])
                    kept[i] = std::move(host[i]);
            }
            hasKept = true;
            out.verificationError = worst;
            return;
        }
        if (compared)
            out.verificationError = worst;
        if (unverified)
            out.message = compared ? "partly verified: outputs without a ReferenceArguments entry have no reference yet"
                                   : "not verified: no reference yet";
        else if (!compared)
            out.message = "not verified: the kernel has no output arguments";
    }

    /// One launch between a pair of events, after the L2 flush and the restore of ReadWrite
    /// buffers (both queued before the start event, so neither is timed). Milliseconds.
    double timedLaunch(const worker::Result& r, bool flushL2) {
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

    TimingStats time(const worker::TimingRule& rule, const worker::Result& r) {
        const int minSamples = std::clamp(rule.minSamples, 1, kSampleCap);
        const int maxSamples = std::clamp(rule.maxSamples, minSamples, kSampleCap);
        const double warmup = std::isfinite(rule.warmupSeconds) ? std::max(0.0, rule.warmupSeconds) : 0.0;
        const double maxSeconds = std::isfinite(rule.maxSeconds) ? std::max(0.0, rule.maxSeconds) : 0.0;
        const double target = std::isfinite(rule.targetRelStdev) ? rule.targetRelStdev : 0.0;

        // Warm-up: clocks up, caches and TLBs warm, lazy driver work done; at least one launch.
        const auto warmStart = Clock::now();
        double warmed = 0;
        for (int launches = 0; launches < kMaxWarmupLaunches; ++launches) {
            warmed += timedLaunch(r, false) / 1000.0;
            if (warmed >= warmup)
                break;
            // Launch overheads count too, for kernels much shorter than a launch.
            if (std::chrono::duration<double>(Clock::now() - warmStart).count() >= warmup + 1.0)
                break;
        }

        std::vector<double> samples;
        double total = 0;
        double mean = 0;
        double m2 = 0; // Welford's running sum of squared deviations
        for (;;) {
            const double ms = timedLaunch(r, rule.flushL2);
            samples.push_back(ms);
            total += ms / 1000.0;
            const double n = static_cast<double>(samples.size());
            const double delta = ms - mean;
            mean += delta / n;
            m2 += delta * (ms - mean);
            const int count = static_cast<int>(samples.size());
            if (count >= maxSamples)
                break;
            if (count >= 3 && total >= maxSeconds)
                break;
            if (count >= minSamples) {
                const double stdev = count > 1 ? std::sqrt(m2 / (n - 1)) : 0.0;
                if (mean > 0 && stdev / mean <= target)
                    break;
            }
        }

        TimingStats t;
        t.samples = static_cast<int>(samples.size());
        std::vector<double> sorted = samples;
        std::sort(sorted.begin(), sorted.end());
        const std::size_t n = sorted.size();
        t.medianMs = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
        t.minMs = sorted.front();
        t.maxMs = sorted.back();
        t.stdevMs = n > 1 ? std::sqrt(m2 / static_cast<double>(n - 1)) : 0.0;
        return t;
    }

    /// The CUPTI pass: its problems are notes, except a sticky error, which loses the context.
    void profile(const worker::Measure& m, worker::Result& r) {
        const std::vector<std::string> names = expandMetricNames(m.metrics);
        if (names.empty())
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
        r.measurement.metrics = std::move(*values);
    }

    void run(const worker::Measure& m, const std::vector<char>& cubin, worker::Result& r,
             std::optional<Clock::time_point>& benchStart) {
        Measurement& out = r.measurement;
        if (cubin.empty()) {
            out.status = ResultStatus::LaunchError;
            out.message = "no cubin came with the config";
            return;
        }
        load(m, cubin, r);
        if (const std::string why = prepare(m, r); !why.empty()) {
            out.status = ResultStatus::LaunchError;
            out.message = why;
            return;
        }
        benchStart = Clock::now();
        out.status = ResultStatus::Ok;
        if (m.verify)
            verify(m, r);
        else
            out.message = "not verified: verification is off";
        out.time = time(m.timing, r);
        profile(m, r);
    }
};

WorkerRuntime::WorkerRuntime()
    : m_impl(std::make_unique<Impl>()) {}

WorkerRuntime::~WorkerRuntime() {
    release();
}

worker::Hello WorkerRuntime::start(int deviceOrdinal) {
    Impl& d = *m_impl;
    worker::Hello hello;
    hello.device.ordinal = deviceOrdinal;
    d.ordinal = deviceOrdinal;
    std::string error;
    d.cu = Driver::load(&error);
    if (!d.cu) {
        hello.error = error.empty() ? "no NVIDIA driver" : error;
        return hello;
    }
    const Driver& cu = *d.cu;
    auto failed = [&](const std::string& what, CUresult rc) {
        hello.ok = false;
        hello.error = what + ": " + cu.describe(rc);
        release();
        return hello;
    };

    if (const CUresult rc = cu.cuInit(0); rc != CUDA_SUCCESS)
        return failed("the NVIDIA driver cannot start (cuInit)", rc);
    int count = 0;
    if (const CUresult rc = cu.cuDeviceGetCount(&count); rc != CUDA_SUCCESS)
        return failed("cannot count the devices (cuDeviceGetCount)", rc);
    if (deviceOrdinal < 0 || deviceOrdinal >= count) {
        hello.error = "no device " + std::to_string(deviceOrdinal) + " (the driver sees " + std::to_string(count) +
                      (count == 1 ? " device)" : " devices)");
        return hello;
    }
    if (const CUresult rc = cu.cuDeviceGet(&d.device, deviceOrdinal); rc != CUDA_SUCCESS)
        return failed("cannot open device " + std::to_string(deviceOrdinal) + " (cuDeviceGet)", rc);

    worker::DeviceInfo& info = hello.device;
    char name[256] = {};
    if (cu.cuDeviceGetName(name, static_cast<int>(sizeof name - 1), d.device) == CUDA_SUCCESS)
        info.name = name;
    CUuuid uuid{};
    if (cu.cuDeviceGetUuid(&uuid, d.device) == CUDA_SUCCESS)
        info.uuid = uuidText(uuid);
    const int major = d.attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 0);
    const int minor = d.attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 0);
    info.arch = "sm_" + std::to_string(major * 10 + minor);
    info.smCount = d.attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0);
    info.l2Bytes = d.attribute(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, 0);
    info.smClockKHz = d.attribute(CU_DEVICE_ATTRIBUTE_CLOCK_RATE, 0);
    info.memoryClockKHz = d.attribute(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, 0);
    std::size_t memory = 0;
    if (cu.cuDeviceTotalMem(&memory, d.device) == CUDA_SUCCESS)
        info.globalMemoryBytes = static_cast<std::int64_t>(memory);
    int driver = 0;
    if (cu.cuDriverGetVersion(&driver) == CUDA_SUCCESS)
        info.driverVersion = driver;
    d.l2Bytes = info.l2Bytes;
    d.maxBlock = {d.attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, 1024),
                  d.attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, 1024),
                  d.attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, 64)};
    d.maxGrid = {d.attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, INT_MAX),
                 d.attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, 65535),
                 d.attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, 65535)};
    d.sharedPerBlock = d.attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, 48 * 1024);
    d.sharedPerBlockOptin =
        std::max(d.sharedPerBlock, d.attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, 0));

    if (const CUresult rc = cu.cuDevicePrimaryCtxRetain(&d.context, d.device); rc != CUDA_SUCCESS)
        return failed("cannot create a context on device " + std::to_string(deviceOrdinal), rc);
    d.retained = true;
    if (const CUresult rc = cu.cuCtxSetCurrent(d.context); rc != CUDA_SUCCESS)
        return failed("cannot make the context current (cuCtxSetCurrent)", rc);
    // Non-blocking: nothing on the legacy default stream (which CUPTI or the driver may use)
    // serialises with the timed launches.
    if (const CUresult rc = cu.cuStreamCreate(&d.stream, CU_STREAM_NON_BLOCKING); rc != CUDA_SUCCESS)
        return failed("cannot create a stream (cuStreamCreate)", rc);
    if (const CUresult rc = cu.cuEventCreate(&d.startEvent, CU_EVENT_DEFAULT); rc != CUDA_SUCCESS)
        return failed("cannot create an event (cuEventCreate)", rc);
    if (const CUresult rc = cu.cuEventCreate(&d.endEvent, CU_EVENT_DEFAULT); rc != CUDA_SUCCESS)
        return failed("cannot create an event (cuEventCreate)", rc);

    std::string note;
    if (const char* off = std::getenv("TILESCOPE_WORKER_NO_CUPTI"); off && *off && std::string(off) != "0") {
        // A way around a CUPTI that misbehaves on some driver: timing and verification go on.
        note = "CUPTI is turned off (TILESCOPE_WORKER_NO_CUPTI is set)";
    } else {
        try {
            d.profiler = CuptiProfiler::create(d.context, deviceOrdinal, &note);
        } catch (const std::exception& e) {
            d.profiler.reset();
            note = std::string("CUPTI could not be set up: ") + e.what();
        }
    }
    if (!d.profiler)
        d.cuptiNote = note.empty() ? "CUPTI could not be set up for this device" : note;
    info.cuptiNote = d.cuptiNote;
    hello.ok = true;
    return hello;
}

worker::Opened WorkerRuntime::open(const worker::Open& request) {
    Impl& d = *m_impl;
    worker::Opened opened;
    if (!d.cu || !d.context) {
        opened.error = "the device is not started";
        return opened;
    }
    if (d.lost) {
        opened.error = "the context was lost earlier: " + d.lostReason;
        return opened;
    }
    d.releaseProblem();
    const std::filesystem::path baseDir(request.baseDir);
    const std::string problemFile = request.problemName;
    try {
        // No base folder: the kernel file is not needed here (cubins come with each config).
        d.problem = std::make_unique<TuningProblem>(TuningProblem::parse(request.problemText, problemFile, {}));
        d.planner = std::make_unique<LaunchPlanner>(*d.problem, static_cast<std::size_t>(request.shape));
        const auto& args = d.arguments();
        d.readReferences(baseDir, problemFile);

        // Everything at once or a clear message, before the first allocation.
        std::int64_t needed = 0;
        for (const ArgumentSpec& a : args) {
            if (a.isVector())
                needed += a.bytes() * (a.access == Access::ReadWrite ? 2 : 1);
        }
        const std::int64_t flushWanted =
            d.flush != 0 ? 0 : std::max<std::int64_t>(d.l2Bytes > 0 ? 2 * d.l2Bytes : 256ll << 20, 8ll << 20);
        std::size_t free = 0;
        std::size_t total = 0;
        if (d.cu->cuMemGetInfo(&free, &total) == CUDA_SUCCESS && needed + flushWanted > static_cast<std::int64_t>(free))
            throw InputError(
                problemFile, {},
                "the problem's buffers need " + bytesText(static_cast<double>(needed)) +
                    (flushWanted ? " (and " + bytesText(static_cast<double>(flushWanted)) + " to flush the L2 cache)"
                                 : std::string()) +
                    ", but the device has " + bytesText(static_cast<double>(free)) + " free of " +
                    bytesText(static_cast<double>(total)));

        if (d.flush == 0) {
            // At least twice the L2, rounded to whole 32-bit words for cuMemsetD32.
            d.flushBytes = (flushWanted + 3) / 4 * 4;
            d.flush = d.allocate(d.flushBytes, "the L2 flush buffer");
        }

        d.buffers.assign(args.size(), 0);
        d.pristine.assign(args.size(), 0);
        d.scalars.assign(args.size(), ScalarSlot{});
        d.params.assign(args.size(), nullptr);
        d.kept.assign(args.size(), {});
        d.host.assign(args.size(), {});
        for (std::size_t i = 0; i < args.size(); ++i) {
            const ArgumentSpec& a = args[i];
            if (!a.isVector()) {
                std::copy(a.scalarBytes.begin(), a.scalarBytes.end(), d.scalars[i].bytes);
                d.params[i] = d.scalars[i].bytes;
                continue;
            }
            const std::vector<unsigned char> contents = initialContents(a, request.seed, baseDir, problemFile);
            d.buffers[i] = d.allocate(a.bytes(), a.label());
            d.check(d.cu->cuMemcpyHtoD(d.buffers[i], contents.data(), contents.size()),
                    "cannot copy " + a.label() + " to the device (cuMemcpyHtoD)");
            opened.bufferBytes += a.bytes();
            if (a.access == Access::ReadWrite) {
                d.pristine[i] = d.allocate(a.bytes(), "the initial contents of " + a.label());
                d.check(d.cu->cuMemcpyDtoD(d.pristine[i], d.buffers[i], static_cast<std::size_t>(a.bytes())),
                        "cannot copy " + a.label() + " on the device (cuMemcpyDtoD)");
                opened.bufferBytes += a.bytes();
            }
            d.params[i] = &d.buffers[i];
        }
        opened.ok = true;
        return opened;
    } catch (const InputError& e) {
        opened.error = e.what();
    } catch (const CudaFailure& f) {
        opened.error = d.describeFailure(f);
        if (isStickyError(f.rc)) {
            d.lost = true;
            d.lostReason = opened.error;
        }
    } catch (const std::bad_alloc&) {
        opened.error = "out of host memory while building the problem's buffers";
    } catch (const std::exception& e) {
        opened.error = std::string("cannot open the problem: ") + e.what();
    }
    d.releaseProblem();
    return opened;
}

worker::Result WorkerRuntime::measure(const worker::Measure& request, const std::vector<char>& cubin) {
    Impl& d = *m_impl;
    worker::Result r;
    r.id = request.id;
    Measurement& out = r.measurement;
    out.device = d.ordinal;
    out.status = ResultStatus::LaunchError;
    if (d.lost) {
        out.status = ResultStatus::Crashed;
        out.message = "the context was lost earlier: " + d.lostReason;
        r.fatal = true;
        return r;
    }
    if (!d.cu || !d.context) {
        out.message = "the device is not started";
        return r;
    }
    if (!d.planner) {
        out.message = "no problem is open";
        return r;
    }
    std::optional<Clock::time_point> benchStart;
    try {
        d.run(request, cubin, r, benchStart);
    } catch (const CudaFailure& f) {
        out.time = {};
        out.metrics.clear();
        out.message = d.describeFailure(f);
        if (isStickyError(f.rc)) {
            out.status = ResultStatus::Crashed;
            out.message += " (the CUDA context is lost; the worker exits)";
            r.fatal = true;
            d.lost = true;
            d.lostReason = out.message;
        } else {
            out.status = ResultStatus::LaunchError;
        }
    } catch (const std::bad_alloc&) {
        out.status = ResultStatus::LaunchError;
        out.time = {};
        out.message = "out of host memory while measuring";
    } catch (const std::exception& e) {
        out.status = ResultStatus::LaunchError;
        out.time = {};
        out.message = e.what();
    }
    if (benchStart)
        out.benchmarkSeconds = std::chrono::duration<double>(Clock::now() - *benchStart).count();
    d.unloadModule();
    return r;
}

void WorkerRuntime::release() {
    Impl& d = *m_impl;
    if (!d.cu)
        return;
    d.releaseProblem();
    d.unloadModule();
    d.profiler.reset();
    d.freeBuffer(d.flush);
    d.flushBytes = 0;
    if (!d.lost) {
        if (d.startEvent)
            d.cu->cuEventDestroy(d.startEvent);
        if (d.endEvent)
            d.cu->cuEventDestroy(d.endEvent);
        if (d.stream)
            d.cu->cuStreamDestroy(d.stream);
    }
    d.startEvent = nullptr;
    d.endEvent = nullptr;
    d.stream = nullptr;
    if (d.retained && !d.lost)
        d.cu->cuDevicePrimaryCtxRelease(d.device);
    d.retained = false;
    d.context = nullptr;
}

} // namespace tilescope::cuda
