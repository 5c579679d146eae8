#pragma once

// The state of a WorkerRuntime and the pieces of its work, for the files that implement it:
// workerruntime.cpp (start, open, measure, release), launch.cpp (loading a cubin and checking its
// launch), verification.cpp (the reference and the comparison), timing.cpp (the timed launches;
// the arithmetic of the rule is Sampler's, CUDA-free) and counters.cpp (the CUPTI pass).
// Private to measure/cuda/device/.

#include "base/error.h"
#include "measure/cuda/argumentdata.h"
#include "measure/cuda/device/cudadriver.h"
#include "measure/cuda/device/cuptiprofiler.h"
#include "measure/cuda/device/nvmlprobe.h"
#include "measure/cuda/device/workerruntime.h"
#include "measure/cuda/outputcheck.h"
#include "spec/launchplan.h"
#include "spec/tuningproblem.h"

#include <array>
#include <chrono>
#include <climits>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tilescope::cuda {

using Clock = std::chrono::steady_clock;

/// A driver call that failed inside open() or measure(): what was being done, and the status.
/// Caught at the top of each request and turned into its answer (sticky: the context is lost).
struct CudaFailure {
    CUresult rc;
    std::string what;
};

/// "1.50 GiB", "12.0 MiB", "512 bytes".
std::string bytesText(double bytes);

struct alignas(8) ScalarSlot {
    unsigned char bytes[8] = {};
};

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
    std::unique_ptr<NvmlProbe> nvml; // clocks and temperature per config
    std::string cuptiNote;
    bool metricSetChosen = false;
    std::vector<std::string> metricSet;
    std::string metricSetError;

    // Guarded buffers need CUDA's virtual memory management (cuMemCreate, cuMemMap, ...).
    bool vmm = false;
    std::size_t granularity = 0; // cuMemGetAllocationGranularity, the minimum
    std::string guardNote;       // why buffers could not be guarded; said once, in the answer to open

    CUdeviceptr flush = 0;
    std::int64_t flushBytes = 0;
    unsigned flushValue = 0;

    // The stream's hold (timing.cpp): a word of page-locked host memory that the stream waits on
    // before a sample's work, set once all of it is queued, so that no timed launch waits for the
    // CPU to queue it. Made at its first use; null where the stream cannot wait on memory.
    std::uint32_t* holdWord = nullptr;
    CUdeviceptr holdDevice = 0;
    std::uint32_t holdValue = 0;
    bool holdTried = false;

    // When this worker's last timed sample ended: the next config's warm-up is short shortly after.
    std::optional<Clock::time_point> lastSampled;

    // The open problem.
    std::unique_ptr<TuningProblem> problem;
    std::unique_ptr<LaunchPlanner> planner;
    std::vector<CUdeviceptr> buffers; // per argument; 0 for scalars
    // Per argument: the address space of a guarded buffer (guardedbuffers.cpp); base 0 for an
    // ordinary allocation.
    struct Reservation {
        CUdeviceptr base = 0;
        std::size_t reserved = 0;
        std::size_t mapped = 0;
    };
    std::vector<Reservation> reservations;
    std::vector<CUdeviceptr> pristine; // per argument: the initial contents of a ReadWrite buffer, else 0
    // Per argument, for the config being measured: a ReadWrite buffer that its first launch left
    // as it was (compared with its initial contents on the GPU), which the restores before its
    // later launches skip. Cleared, every buffer restored, as each config starts.
    std::vector<bool> untouched;
    std::vector<ScalarSlot> scalars;     // per argument
    std::vector<void*> params;           // per argument: what cuLaunchKernel reads
    std::vector<CUtensorMap> tensorMaps; // per argument: a TensorMap argument's map
    struct Reference {
        std::size_t argument = 0;
        Validation method = Validation::Normalized;
        double tolerance = 0;
        std::vector<unsigned char> data;
    };
    std::vector<Reference> references; // from the problem's ReferenceArguments
    std::vector<bool> hasT1Reference;  // per argument
    /// What a reference config left in the outputs, for the configs of its group to be checked against.
    /// A reference output kept on the device too, for the comparison there (gpucompare.cpp).
    struct DeviceCopy {
        CUdeviceptr data = 0; ///< 0: compared on the host
        std::int64_t bytes = 0;
        double scale = 1; ///< the Normalized comparison's scale: the largest finite magnitude (1 if all 0)
        /// A ReadWrite output: agrees only when its bits are the reference's (the elements the
        /// reference changed from the initial contents are then the ones the config changed).
        bool bitwise = false;
    };
    struct KeptReference {
        std::vector<std::vector<unsigned char>> values; ///< per argument: its output (when verifying)
        std::vector<DeviceCopy> onDevice;               ///< per argument (empty: none)
        bool hasValues = false;
        std::vector<ElementMask> written; ///< per checked argument: the elements it wrote
        std::vector<ElementMask> finite;  ///< per checked argument: the elements it left finite
    };
    std::map<std::string, KeptReference> kept; ///< by reference group (worker::Measure::referenceGroup)
    std::int64_t keptOnDeviceBytes = 0;        ///< the device memory of the kept references' copies

    // Comparing outputs on the GPU (gpucompare.cpp): the module of the comparison kernels, loaded
    // at the first comparison (null when it cannot be: the host compares), and its result slot.
    CUmodule compareModule = nullptr;
    bool compareTried = false;
    bool compareOff = false; ///< TILESCOPE_COMPARE_ON_HOST=1: every comparison on the host
    CUdeviceptr compareResult = 0;
    /// Per argument: the initial contents of a checked ReadWrite output, which show what a launch changed.
    std::vector<std::vector<unsigned char>> initial;
    std::vector<std::vector<unsigned char>> host; // per argument: scratch for downloads
    std::vector<void*> pinned;                    // host scratch page-locked for fast downloads (cuMemHostRegister)

    // The config being measured.
    CUmodule module = nullptr;
    CUfunction function = nullptr;
    std::array<unsigned, 3> grid{1, 1, 1};
    std::array<unsigned, 3> block{1, 1, 1};
    unsigned sharedDynamic = 0;
    unsigned clusterSize = 1; ///< blocks per cluster along x (a compiler's launch, LaunchMetadata)
    // A compiler's trailing pointer parameters (Triton's scratch buffers): their buffers, kept and
    // grown across configs, the values this config passes, and what a launch reads: params, then
    // the addresses of those values.
    std::vector<CUdeviceptr> scratch;
    std::vector<std::size_t> scratchBytes;
    std::vector<CUdeviceptr> trailing;
    std::vector<ScalarSlot> converted; ///< per argument: a value in the width the compiler typed it
    std::vector<void*> launchParams;

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
        void** args = launchParams.empty() ? params.data() : launchParams.data();
        if (clusterSize <= 1)
            return cu->cuLaunchKernel(function, grid[0], grid[1], grid[2], block[0], block[1], block[2], sharedDynamic,
                                      stream, args, nullptr);
        CUlaunchAttribute cluster{};
        cluster.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        cluster.value.clusterDim.x = clusterSize;
        cluster.value.clusterDim.y = 1;
        cluster.value.clusterDim.z = 1;
        CUlaunchConfig config{};
        config.gridDimX = grid[0];
        config.gridDimY = grid[1];
        config.gridDimZ = grid[2];
        config.blockDimX = block[0];
        config.blockDimY = block[1];
        config.blockDimZ = block[2];
        config.sharedMemBytes = sharedDynamic;
        config.hStream = stream;
        config.attrs = &cluster;
        config.numAttrs = 1;
        return cu->cuLaunchKernelEx(&config, function, args, nullptr);
    }

    /// Queues the copies that give every ReadWrite buffer its initial contents again.
    CUresult restoreReadWrite() {
        const auto& args = arguments();
        for (std::size_t i = 0; i < args.size(); ++i) {
            if (pristine[i] == 0 || (i < untouched.size() && untouched[i]))
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
        for (std::size_t i = 0; i < buffers.size(); ++i)
            freeArgument(i);
        reservations.clear();
        for (CUdeviceptr& p : pristine)
            freeBuffer(p);
        for (CUdeviceptr& p : scratch)
            freeBuffer(p);
        scratch.clear();
        scratchBytes.clear();
        trailing.clear();
        launchParams.clear();
        buffers.clear();
        pristine.clear();
        scalars.clear();
        params.clear();
        references.clear();
        hasT1Reference.clear();
        forgetReferences();
        initial.clear();
        for (void* p : pinned)
            if (!lost)
                cu->cuMemHostUnregister(p);
        pinned.clear();
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

    // ---- guarded buffers (guardedbuffers.cpp) ----
    /// Reads the device's virtual memory management support and granularity (at start).
    void probeVirtualMemory();
    /// A buffer of `bytes` that ends where an unmapped guard begins (measure/cuda/memorycheck.h's
    /// guardedLayout), its address space in `reservation`. 0 when the device cannot make one
    /// (no virtual memory management, out of memory): `guardNote` then says why, and the caller
    /// allocates an ordinary buffer instead. Throws CudaFailure for a sticky error.
    CUdeviceptr allocateGuarded(std::int64_t bytes, Reservation& reservation);
    /// Frees argument `i`'s buffer, guarded or not.
    void freeArgument(std::size_t i);
    /// Moves every Vector argument's buffer into guarded memory (`guarded`) or ordinary memory,
    /// contents and all, and encodes the tensor maps of the moved buffers again. A buffer that
    /// cannot move stays where it is.
    void placeBuffers(bool guarded);
    /// Whether a buffer of the problem is guarded now.
    bool anyGuarded() const;
    /// The Vector arguments' buffers: where they are and how large.
    std::vector<worker::BufferExtent> extents() const;
    /// Encodes every TensorMap argument's map of its buffer (workerruntime.cpp).
    void encodeTensorMaps();

    // ---- measuring (launch.cpp) ----
    /// Loads the module and the function, and fills FunctionInfo and the static info.
    void load(const worker::Measure& m, const std::vector<char>& cubin, worker::Result& r);
    /// Kernel Tuner's constant-memory arguments: each buffer's initial contents go to the
    /// module's __constant__ variable of the argument's name, once per module.
    void fillConstantMemory();
    /// The geometry of the config, checked against the function's and the device's limits.
    /// "" when it can be launched; otherwise why not.
    std::string prepare(const worker::Measure& m, worker::Result& r);
    /// The trailing pointer parameters of a compiler's launch (Triton's scratch buffers) for this
    /// config's grid: allocated or grown, and appended to what a launch passes.
    void placeTrailing(const worker::Measure& m, const LaunchGeometry& plan);
    /// Launches once and checks the launch; the message of a launch that does not start says
    /// whether a block fits on an SM at all.
    void launchChecked(const worker::Result& r, const std::string& what);

    // ---- gpucompare.cpp ----
    /// Frees the kept references (and their device copies).
    void forgetReferences();
    /// Frees a reference's device copy.
    void releaseCopy(DeviceCopy& copy);
    /// Keeps a copy of reference output `i` (its values `values`) on the device when the GPU can
    /// compare it there and memory is to spare: a WriteOnly output checked in full, every element
    /// written and finite, none equal to the canary, of a type the kernels know (compared within
    /// the Normalized tolerance); or a ReadWrite output, every element finite (compared bit for bit).
    DeviceCopy keepOnDevice(std::size_t i, const std::vector<unsigned char>& values, const ElementMask& written,
                            const ElementMask& finite);
    /// Compares output `i` (in its buffer) with `copy` on the GPU: the verdict when every element
    /// agrees (written, finite, within the Normalized tolerance; a bitwise copy: the same bits);
    /// nullopt when one does not, or the GPU cannot compare, for the host to find and name it.
    std::optional<Verdict> compareOnDevice(std::size_t i, const DeviceCopy& copy);
    /// After a config's first launch: marks `untouched` the ReadWrite buffers whose bytes equal
    /// their initial contents (one comparison on the GPU each), so that later launches of the
    /// config need not restore them. Nothing is marked where the GPU cannot compare.
    void findUntouchedReadWrite();
    /// The comparison kernel `name`, its module loaded at the first call; null when it cannot be.
    CUfunction compareKernel(const char* name);
    /// Runs comparison kernel `kernel` over `n` elements of `out` and `ref` and returns what it
    /// found: the elements that differ and the bits of the largest error.
    std::array<unsigned long long, 2> runCompare(CUfunction kernel, CUdeviceptr out, CUdeviceptr ref,
                                                 unsigned long long n, double scale, double tolerance);

    // ---- verification.cpp ----
    void readReferences(const std::filesystem::path& baseDir, const std::string& problemFile);
    /// Runs the config once on canaried outputs, checks which elements it wrote and whether they are
    /// finite against its group's reference, and with m.verify compares the values too.
    void verify(const worker::Measure& m, worker::Result& r);
    /// Launches the config once more on outputs filled with kSecondCanary (ReadWrite ones in
    /// `which` start from their initial contents with each element's lowest bit flipped) and adds
    /// the elements it wrote to `written` (per argument, those in `which`): an element that held
    /// the first fill after the first launch and the second after this one was never written.
    void confirmUnwritten(const std::vector<std::size_t>& which, const worker::Result& r,
                          std::vector<ElementMask>& written);
    /// Copies the Measure's returnArguments (Vector arguments) to the result, as the first launch left them.
    void returnContents(const worker::Measure& m, worker::Result& r);

    // ---- timing.cpp ----
    /// Waits for the end event and returns the milliseconds since the start event; `failure` says
    /// what failed when the wait reports an error.
    double elapsedMs(const char* failure);
    /// One launch between a pair of events, after the restore of the ReadWrite buffers it changes
    /// and the L2 flush (both queued before the start event, so neither is timed). Milliseconds.
    /// `writeBytes` > 0: write that many bytes over the L2 first (the flush, or a smaller
    /// polluter); 0: nothing (warm).
    double timedLaunch(const worker::Result& r, std::int64_t writeBytes);
    // `count` launches (each after the ReadWrite restore) queued between one pair of events, one
    // synchronisation at the end: the warm-up's. Their time in ms.
    double timedBatch(const worker::Result& r, int count);
    /// The warm context's sample: the ReadWrite restore, then `count` launches between one pair of
    /// events (more than one only where nothing is restored), all queued behind the stream's hold
    /// before it is released: their time in ms. Null where the stream cannot be held.
    std::optional<double> heldBatch(const worker::Result& r, int count);
    /// Makes the hold's word (once): false where the stream cannot wait on memory.
    bool makeHold();
    /// Frees the hold's word.
    void releaseHold();
    /// Samples the config by the rule: the statistics, and every sample when the rule keeps them.
    void time(const worker::TimingRule& rule, worker::Result& r);

    // ---- counters.cpp ----
    /// The CUPTI pass: its problems are notes, except a sticky error, which loses the context.
    void profile(const worker::Measure& m, worker::Result& r);
    /// The SASS metrics pass (Measure::executedCounts): per instruction, its executions in one launch.
    void countExecuted(const worker::Measure& m, worker::Result& r);

    // ---- energy.cpp ----
    class BackToBack;
    /// The NVML pass (`--metrics energy`): joules per launch and mean power with intervals, and
    /// with "energy-check" the sampled-power cross-check; its problems are notes.
    void measureEnergy(const worker::Measure& m, worker::Result& r);

    // ---- workerruntime.cpp ----

    /// Measures one config: load, check the launch, verify, time, profile.
    void run(const worker::Measure& m, const std::vector<char>& cubin, worker::Result& r,
             std::optional<Clock::time_point>& benchStart);
};

} // namespace tilescope::cuda
