#include "measure/cuda/device/workerruntime.h"

#include "measure/cuda/device/runtimeimpl.h"
#include "measure/cuda/memorycheck.h"
#include "measure/metricnames.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <string_view>

namespace tilescope::cuda {

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

namespace {

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

CUtensorMapDataType tensorMapType(ElementType e) {
    switch (e) {
    case ElementType::Int8:
    case ElementType::UInt8:
    case ElementType::Float8E4M3:
    case ElementType::Float8E5M2:
        return CU_TENSOR_MAP_DATA_TYPE_UINT8; // the bytes move as they are
    case ElementType::Int16:
    case ElementType::UInt16:
        return CU_TENSOR_MAP_DATA_TYPE_UINT16;
    case ElementType::Int32:
        return CU_TENSOR_MAP_DATA_TYPE_INT32;
    case ElementType::UInt32:
        return CU_TENSOR_MAP_DATA_TYPE_UINT32;
    case ElementType::Int64:
        return CU_TENSOR_MAP_DATA_TYPE_INT64;
    case ElementType::UInt64:
        return CU_TENSOR_MAP_DATA_TYPE_UINT64;
    case ElementType::Half:
        return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    case ElementType::BFloat16:
        return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    case ElementType::Float:
        return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    case ElementType::Double:
        return CU_TENSOR_MAP_DATA_TYPE_FLOAT64;
    case ElementType::Bool:
        break; // LaunchPlanner refuses it
    }
    return CU_TENSOR_MAP_DATA_TYPE_UINT8;
}

/// Builds a TensorMap argument's map of `buffer` (a dense row-major tensor, innermost extent
/// first). The planner checked the driver's rules; a refusal still says which argument.
void encodeTensorMap(const Driver& cu, const ArgumentSpec& a, CUdeviceptr buffer, CUtensorMap& map,
                     const std::string& problemFile) {
    const auto rank = static_cast<cuuint32_t>(a.tensorDims.size());
    std::array<cuuint64_t, 5> dims{};
    std::array<cuuint64_t, 5> strides{}; // bytes, of dimensions 1 and up
    std::array<cuuint32_t, 5> box{};
    std::array<cuuint32_t, 5> elementStrides{1, 1, 1, 1, 1};
    cuuint64_t stride = a.elementBytes();
    for (cuuint32_t i = 0; i < rank; ++i) {
        dims[i] = static_cast<cuuint64_t>(a.tensorDims[i]);
        box[i] = static_cast<cuuint32_t>(a.tensorBox[i]);
        stride *= dims[i];
        if (i + 1 < rank)
            strides[i] = stride;
    }
    const CUtensorMapSwizzle swizzle = a.tensorSwizzle == 128  ? CU_TENSOR_MAP_SWIZZLE_128B
                                       : a.tensorSwizzle == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                                       : a.tensorSwizzle == 32 ? CU_TENSOR_MAP_SWIZZLE_32B
                                                               : CU_TENSOR_MAP_SWIZZLE_NONE;
    const CUresult rc =
        cu.cuTensorMapEncodeTiled(&map, tensorMapType(a.element), rank, reinterpret_cast<void*>(buffer), dims.data(),
                                  strides.data(), box.data(), elementStrides.data(), CU_TENSOR_MAP_INTERLEAVE_NONE,
                                  swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (rc != CUDA_SUCCESS)
        throw InputError(problemFile, "/KernelSpecification/Arguments/" + std::to_string(a.index) + "/TensorMap",
                         a.label() + ": the driver refuses the tensor map (cuTensorMapEncodeTiled: " + cu.describe(rc) +
                             ")");
}

} // namespace

void WorkerRuntime::Impl::run(const worker::Measure& m, const std::vector<char>& cubin, worker::Result& r,
                              std::optional<Clock::time_point>& benchStart) {
    Measurement& out = r.measurement;
    untouched.clear(); // every ReadWrite buffer restored until this config's first launch shows otherwise
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
    // A guarded launch first (the guard's purpose: a run past a buffer's end faults here), then,
    // unless every launch is to be guarded, the timed ones on ordinary buffers as users have them.
    // A kernel that calls printf (its cubin names vprintf) keeps its buffers where they are: on
    // an H100 with CUDA 13, moving them into guarded memory after such a module is loaded loses
    // the context (CUDA_ERROR_CONTEXT_IS_DESTROYED at the copy). --guard places them guarded at
    // open, before any module, and works.
    static constexpr std::string_view kPrintf = "vprintf";
    const bool callsPrintf = std::search(cubin.begin(), cubin.end(), kPrintf.begin(), kPrintf.end()) != cubin.end();
    const bool moveGuarded = m.guard != worker::Guard::Off && !(callsPrintf && m.guard == worker::Guard::Check);
    if (moveGuarded)
        placeBuffers(true);
    BenchmarkParts& parts = out.parts;
    auto since = [](Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); };
    Clock::time_point t = Clock::now();
    const bool launchesFirst =
        m.verify || m.checkWrites || m.guard == worker::Guard::Check || !m.returnArguments.empty();
    if (m.verify || m.checkWrites) {
        verify(m, r);
    } else {
        out.message = "not verified: verification is off";
        if (launchesFirst) {
            check(restoreReadWrite(), "cannot restore the ReadWrite arguments (cuMemcpyDtoDAsync)");
            launchChecked(r, "the launch failed");
            check(cu->cuStreamSynchronize(stream), "the kernel failed");
        }
    }
    // The ReadWrite buffers the first launch did not change need no restore before the others.
    if (launchesFirst) {
        findUntouchedReadWrite();
        parts.unrestored = static_cast<int>(std::count(untouched.begin(), untouched.end(), true));
    }
    if (out.status == ResultStatus::Ok)
        returnContents(m, r);
    if (m.guard != worker::Guard::Always && moveGuarded)
        placeBuffers(false);
    parts.check = since(t);
    t = Clock::now();
    time(m.timing, r);
    parts.timing = since(t);
    out.deviceState = nvml ? nvml->sample() : std::nullopt; // right after the samples, before profiling
    t = Clock::now();
    measureEnergy(m, r);
    parts.energy = since(t);
    t = Clock::now();
    profile(m, r);
    countExecuted(m, r);
    parts.counters = since(t);
}

WorkerRuntime::WorkerRuntime()
    : m_impl(std::make_unique<Impl>()) {}

WorkerRuntime::~WorkerRuntime() {
    release();
}

namespace {

/// The device's copy bandwidth, the memory roof of the roofline: the median of 9 device-to-device
/// copies (cuMemcpyDtoDAsync, timed with events, after one warm-up) of a buffer 8 times the L2
/// (at least 64 MiB, at most 512 MiB, and at most an eighth of the free memory), as read plus
/// written bytes per second in GB/s. 0 where it cannot be measured (nothing fails for that).
double copyBandwidth(const Driver& cu, CUstream stream, CUevent start, CUevent end, std::int64_t l2Bytes) {
    std::size_t free = 0, total = 0;
    if (cu.cuMemGetInfo(&free, &total) != CUDA_SUCCESS)
        return 0;
    std::int64_t bytes = std::clamp<std::int64_t>(8 * l2Bytes, 64ll << 20, 512ll << 20);
    bytes = std::min<std::int64_t>(bytes, static_cast<std::int64_t>(free / 8)) / 256 * 256;
    if (bytes < (16ll << 20))
        return 0;
    CUdeviceptr from = 0, to = 0;
    double gbps = 0;
    if (cu.cuMemAlloc(&from, static_cast<std::size_t>(bytes)) == CUDA_SUCCESS &&
        cu.cuMemAlloc(&to, static_cast<std::size_t>(bytes)) == CUDA_SUCCESS &&
        cu.cuMemsetD32Async(from, 0x3f800000u, static_cast<std::size_t>(bytes / 4), stream) == CUDA_SUCCESS) {
        std::vector<float> ms;
        bool ok = cu.cuMemcpyDtoDAsync(to, from, static_cast<std::size_t>(bytes), stream) == CUDA_SUCCESS;
        for (int i = 0; ok && i < 9; ++i) {
            float t = 0;
            ok = cu.cuEventRecord(start, stream) == CUDA_SUCCESS &&
                 cu.cuMemcpyDtoDAsync(to, from, static_cast<std::size_t>(bytes), stream) == CUDA_SUCCESS &&
                 cu.cuEventRecord(end, stream) == CUDA_SUCCESS && cu.cuEventSynchronize(end) == CUDA_SUCCESS &&
                 cu.cuEventElapsedTime(&t, start, end) == CUDA_SUCCESS && t > 0;
            if (ok)
                ms.push_back(t);
        }
        if (ok && !ms.empty()) {
            std::nth_element(ms.begin(), ms.begin() + static_cast<std::ptrdiff_t>(ms.size() / 2), ms.end());
            gbps = 2.0 * static_cast<double>(bytes) / (ms[ms.size() / 2] * 1e-3) / 1e9;
        }
    }
    if (from)
        cu.cuMemFree(from);
    if (to)
        cu.cuMemFree(to);
    return gbps;
}

} // namespace

worker::Hello WorkerRuntime::start(int deviceOrdinal) {
    Impl& d = *m_impl;
    worker::Hello hello;
    hello.device.ordinal = deviceOrdinal;
    d.ordinal = deviceOrdinal;
    // Outputs compared on the host only (to compare the two ways, or where the GPU's comparison
    // is in doubt): TILESCOPE_COMPARE_ON_HOST=1.
    const char* onHost = std::getenv("TILESCOPE_COMPARE_ON_HOST");
    d.compareOff = onHost && *onHost && std::string_view(onHost) != "0";
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
    d.nvml = std::make_unique<NvmlProbe>(info.uuid);
    info.stateNote = d.nvml->note();
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
    d.probeVirtualMemory();

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
    info.copyGBps = copyBandwidth(cu, d.stream, d.startEvent, d.endEvent, info.l2Bytes);
    hello.ok = true;
    return hello;
}

void WorkerRuntime::Impl::encodeTensorMaps() {
    const auto& args = arguments();
    for (std::size_t i = 0; i < args.size(); ++i) {
        if (args[i].isTensorMap()) {
            encodeTensorMap(*cu, args[i], buffers[args[i].tensorArgument], tensorMaps[i], problem->fileName);
            params[i] = &tensorMaps[i];
        }
    }
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
        d.reservations.assign(args.size(), Impl::Reservation{});
        d.pristine.assign(args.size(), 0);
        d.scalars.assign(args.size(), ScalarSlot{});
        d.params.assign(args.size(), nullptr);
        d.forgetReferences();
        d.initial.assign(args.size(), {});
        d.host.assign(args.size(), {});
        d.tensorMaps.assign(args.size(), CUtensorMap{});
        for (std::size_t i = 0; i < args.size(); ++i) {
            const ArgumentSpec& a = args[i];
            if (a.isTensorMap())
                continue; // once its buffer exists, below
            if (!a.isVector()) {
                std::copy(a.scalarBytes.begin(), a.scalarBytes.end(), d.scalars[i].bytes);
                d.params[i] = d.scalars[i].bytes;
                continue;
            }
            std::vector<unsigned char> contents = initialContents(a, request.seed, baseDir, problemFile);
            if (request.guard)
                d.buffers[i] = d.allocateGuarded(a.bytes(), d.reservations[i]);
            if (d.buffers[i] == 0)
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
            if (a.verify && a.access == Access::ReadWrite)
                d.initial[i] = std::move(contents); // what the checked launches changed
        }
        d.encodeTensorMaps();
        opened.buffers = d.extents();
        if (request.guard)
            opened.note = d.guardNote;
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
            // On guarded buffers an illegal address is, most likely, a run past a buffer's end.
            if (f.rc == CUDA_ERROR_ILLEGAL_ADDRESS && d.anyGuarded())
                out.message = guardedFaultMessage(d.extents()) + "; " + out.message;
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
    d.releaseHold();
    d.freeBuffer(d.compareResult);
    if (d.compareModule && !d.lost)
        d.cu->cuModuleUnload(d.compareModule);
    d.compareModule = nullptr;
    d.compareTried = false;
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
