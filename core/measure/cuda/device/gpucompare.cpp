// The comparison of outputs with their reference on the GPU: a config whose outputs agree is
// settled there, without copying them to the host (a 64 MB output costs a read of both buffers
// at the device's bandwidth instead of a download and a pass of the CPU). Any element that does
// not agree sends the output to the host's comparison (measure/cuda/argumentdata.cpp), which
// finds and names it, so a wrong result reads the same either way.

#include "measure/cuda/device/runtimeimpl.h"

#include "measure/cuda/chunks.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

namespace tilescope::cuda {

#if TILESCOPE_HAVE_COMPARE_PTX
extern const char kOutputComparePtx[];
#endif

namespace {

/// The comparison kernel of a type; nullptr for the types compared on the host only (FP8).
const char* kernelFor(ElementType type) {
    switch (type) {
    case ElementType::Double:
        return "tilescope_compare_f64";
    case ElementType::Float:
        return "tilescope_compare_f32";
    case ElementType::Half:
        return "tilescope_compare_f16";
    case ElementType::BFloat16:
        return "tilescope_compare_bf16";
    case ElementType::Bool:
    case ElementType::Int8:
    case ElementType::UInt8:
        return "tilescope_compare_b8";
    case ElementType::Int16:
    case ElementType::UInt16:
        return "tilescope_compare_b16";
    case ElementType::Int32:
    case ElementType::UInt32:
        return "tilescope_compare_b32";
    case ElementType::Int64:
    case ElementType::UInt64:
        return "tilescope_compare_b64";
    case ElementType::Float8E4M3:
    case ElementType::Float8E5M2:
        return nullptr;
    }
    return nullptr;
}

/// Whether any element of `values` has every byte equal to `canary`.
bool holdsCanary(std::span<const unsigned char> values, std::size_t size, unsigned char canary) {
    for (std::size_t at = 0; at + size <= values.size(); at += size)
        if (std::all_of(values.begin() + static_cast<std::ptrdiff_t>(at),
                        values.begin() + static_cast<std::ptrdiff_t>(at + size),
                        [&](unsigned char b) { return b == canary; }))
            return true;
    return false;
}

} // namespace

void WorkerRuntime::Impl::releaseCopy(DeviceCopy& copy) {
    if (copy.data)
        keptOnDeviceBytes -= copy.bytes;
    freeBuffer(copy.data);
    copy.bytes = 0;
}

void WorkerRuntime::Impl::forgetReferences() {
    for (auto& [group, k] : kept)
        for (DeviceCopy& c : k.onDevice)
            releaseCopy(c);
    kept.clear();
}

WorkerRuntime::Impl::DeviceCopy WorkerRuntime::Impl::keepOnDevice(std::size_t i,
                                                                  const std::vector<unsigned char>& values,
                                                                  const ElementMask& written,
                                                                  const ElementMask& finite) {
    DeviceCopy copy;
#if TILESCOPE_HAVE_COMPARE_PTX
    const ArgumentSpec& a = arguments()[i];
    const std::int64_t n = a.values();
    if (compareOff || n == 0 || values.size() != static_cast<std::size_t>(a.bytes()) || finite.count() != n)
        return copy;
    if (a.access == Access::ReadWrite) {
        copy.bitwise = true;
    } else if (a.access != Access::WriteOnly || a.partial || !kernelFor(a.element) || written.count() != n ||
               holdsCanary(values, elementSize(a.element), kCanary)) {
        return copy;
    }
    // At most kMaxCopyBytes an output (larger ones compared on the host, where the comparison's
    // threads keep pace with the download), and a quarter of the free memory for all the groups'
    // copies together.
    constexpr std::int64_t kMaxCopyBytes = std::int64_t{512} << 20;
    std::size_t free = 0, total = 0;
    if (static_cast<std::int64_t>(values.size()) > kMaxCopyBytes || cu->cuMemGetInfo(&free, &total) != CUDA_SUCCESS ||
        static_cast<std::int64_t>(values.size()) + keptOnDeviceBytes > static_cast<std::int64_t>(free / 4))
        return copy;
    if (cu->cuMemAlloc(&copy.data, values.size()) != CUDA_SUCCESS) {
        copy.data = 0;
        return copy;
    }
    // Copied from the output's buffer, which holds the values just downloaded: a copy on the
    // device (as the guarded buffers are moved), with no upload from the host.
    // On the worker's stream, waited for there. On an H100 with CUDA 13, the same copy on the
    // legacy stream (cuMemcpyDtoD, or cuMemcpyHtoD from the host's copy) followed by
    // cuCtxSynchronize lost the context at the synchronisation (CUDA_ERROR_CONTEXT_IS_DESTROYED)
    // for every reference of sgemm, hgemm and copy; this way all of them compare on the GPU.
    check(cu->cuMemcpyDtoDAsync(copy.data, buffers[i], values.size(), stream),
          "cannot copy a reference output on the device (cuMemcpyDtoDAsync)");
    check(cu->cuStreamSynchronize(stream), "cannot copy a reference output on the device");
    copy.bytes = static_cast<std::int64_t>(values.size());
    keptOnDeviceBytes += copy.bytes;
    if (!copy.bitwise && isFloatingPoint(a.element)) {
        const std::size_t size = elementSize(a.element);
        std::vector<double> scales(chunks::count(n), 0.0);
        chunks::forEach(n, [&](std::size_t c, std::int64_t begin, std::int64_t end) {
            double m = 0;
            for (std::int64_t k = begin; k < end; ++k) // all finite: the caller checked
                m = std::max(m, std::fabs(decodeValue(a.element, values.data() + static_cast<std::size_t>(k) * size)));
            scales[c] = m;
        });
        const double scale = *std::max_element(scales.begin(), scales.end());
        copy.scale = scale > 0 ? scale : 1;
    }
#else
    (void)i;
    (void)values;
    (void)written;
    (void)finite;
#endif
    return copy;
}

CUfunction WorkerRuntime::Impl::compareKernel(const char* name) {
#if TILESCOPE_HAVE_COMPARE_PTX
    if (!compareTried) {
        compareTried = true;
        if (cu->cuModuleLoadData(&compareModule, kOutputComparePtx) != CUDA_SUCCESS) {
            compareModule = nullptr;
            return nullptr;
        }
        compareResult = allocate(2 * sizeof(unsigned long long), "the output comparison's result");
    }
    CUfunction kernel = nullptr;
    if (!compareModule || !name || cu->cuModuleGetFunction(&kernel, compareModule, name) != CUDA_SUCCESS)
        return nullptr;
    return kernel;
#else
    (void)name;
    return nullptr;
#endif
}

std::array<unsigned long long, 2> WorkerRuntime::Impl::runCompare(CUfunction kernel, CUdeviceptr out, CUdeviceptr ref,
                                                                  unsigned long long n, double scale,
                                                                  double tolerance) {
    CUdeviceptr result = compareResult;
    void* kernelArgs[] = {&out, &ref, &n, &scale, &tolerance, &result};
    const int sms = std::max(1, attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 1));
    constexpr unsigned kThreads = 256;
    const auto blocks = static_cast<unsigned>(
        std::clamp<unsigned long long>((n + kThreads - 1) / kThreads, 1, static_cast<unsigned long long>(sms) * 8));
    check(cu->cuMemsetD8Async(result, 0, 2 * sizeof(unsigned long long), stream),
          "cannot clear the output comparison's result (cuMemsetD8Async)");
    check(cu->cuLaunchKernel(kernel, blocks, 1, 1, kThreads, 1, 1, 0, stream, kernelArgs, nullptr),
          "cannot launch the output comparison");
    // The worker's stream does not wait for the legacy stream's copies, nor they for it: wait for
    // the comparison before reading what it found.
    check(cu->cuStreamSynchronize(stream), "the output comparison failed");
    std::array<unsigned long long, 2> counts{0, 0};
    check(cu->cuMemcpyDtoH(counts.data(), result, sizeof(counts)), "cannot read the output comparison's result");
    return counts;
}

void WorkerRuntime::Impl::findUntouchedReadWrite() {
    const auto& args = arguments();
    untouched.assign(pristine.size(), false);
    for (std::size_t i = 0; i < pristine.size() && i < args.size(); ++i) {
        if (pristine[i] == 0 || args[i].bytes() <= 0)
            continue;
        // Bytes compared as 32-bit words where they divide, else one by one: equal bits, whatever the type.
        const auto bytes = static_cast<unsigned long long>(args[i].bytes());
        const bool words = bytes % 4 == 0;
        const CUfunction kernel = compareKernel(words ? "tilescope_compare_b32" : "tilescope_compare_b8");
        if (!kernel)
            return;
        untouched[i] = runCompare(kernel, buffers[i], pristine[i], words ? bytes / 4 : bytes, 0, 0)[0] == 0;
    }
}

std::optional<Verdict> WorkerRuntime::Impl::compareOnDevice(std::size_t i, const DeviceCopy& copy) {
#if TILESCOPE_HAVE_COMPARE_PTX
    if (copy.data == 0 || compareOff)
        return std::nullopt;
    const ArgumentSpec& a = arguments()[i];
    if (copy.bitwise) {
        const auto bytes = static_cast<unsigned long long>(copy.bytes);
        const bool words = bytes % 4 == 0;
        const CUfunction bits = compareKernel(words ? "tilescope_compare_b32" : "tilescope_compare_b8");
        if (!bits || runCompare(bits, buffers[i], copy.data, words ? bytes / 4 : bytes, 0, 0)[0] != 0)
            return std::nullopt;
        Verdict same;
        same.ok = true;
        return same;
    }
    const CUfunction kernel = compareKernel(kernelFor(a.element));
    if (!kernel)
        return std::nullopt;
    const double tolerance = defaultTolerance(a.element);
    const std::array<unsigned long long, 2> counts =
        runCompare(kernel, buffers[i], copy.data, static_cast<unsigned long long>(a.values()), copy.scale, tolerance);
    if (counts[0] != 0)
        return std::nullopt;
    Verdict v;
    double worst = 0;
    std::memcpy(&worst, &counts[1], sizeof(worst));
    v.error = worst;
    v.ok = worst <= tolerance;
    return v.ok ? std::optional<Verdict>(v) : std::nullopt;
#else
    (void)i;
    (void)copy;
    return std::nullopt;
#endif
}

} // namespace tilescope::cuda
