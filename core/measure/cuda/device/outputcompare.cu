// The comparison of a config's output with its reference on the GPU (measure/cuda/device/
// gpucompare.cpp): compiled to PTX when Tilescope is built, loaded by the worker. Each kernel
// counts the elements that fail and the largest error; the host's comparison
// (measure/cuda/argumentdata.cpp, compareValues) runs only when one fails, for its message.
//
// result[0]: elements whose bits differ beyond what the comparison allows (for floating-point
// outputs: not finite, or |out - ref| / scale > tolerance); result[1]: the largest error, the
// bits of a non-negative double (ordered as unsigned integers, so atomicMax keeps the largest).

namespace {

__device__ __forceinline__ float halfToFloat(unsigned short bits) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(bits));
    return f;
}

__device__ __forceinline__ float bfloat16ToFloat(unsigned short bits) {
    return __uint_as_float(static_cast<unsigned>(bits) << 16);
}

__device__ __forceinline__ void finish(unsigned long long bad, double worst, unsigned long long* result) {
    for (int offset = 16; offset > 0; offset /= 2) {
        bad += __shfl_down_sync(0xffffffffu, bad, offset);
        worst = fmax(worst, __shfl_down_sync(0xffffffffu, worst, offset));
    }
    if ((threadIdx.x & 31) == 0) {
        if (bad)
            atomicAdd(result, bad);
        if (worst > 0)
            atomicMax(result + 1, static_cast<unsigned long long>(__double_as_longlong(worst)));
    }
}

template <typename Bits, typename Decode>
__device__ void compareFloating(const Bits* out, const Bits* ref, unsigned long long n, double scale, double tolerance,
                                unsigned long long* result, Decode decode) {
    unsigned long long bad = 0;
    double worst = 0;
    const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
    for (unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += stride) {
        const Bits o = out[i];
        const Bits r = ref[i];
        if (o == r)
            continue;
        const double ov = decode(o);
        const double rv = decode(r);
        if (!isfinite(ov)) { // the reference is finite: the worker checked it
            ++bad;
            continue;
        }
        const double e = fabs(ov - rv) / scale;
        if (e > tolerance)
            ++bad;
        worst = fmax(worst, e);
    }
    finish(bad, worst, result);
}

template <typename Bits>
__device__ void compareBits(const Bits* out, const Bits* ref, unsigned long long n, unsigned long long* result) {
    unsigned long long bad = 0;
    const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
    for (unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += stride)
        bad += out[i] != ref[i];
    finish(bad, 0.0, result);
}

} // namespace

extern "C" __global__ void tilescope_compare_f64(const unsigned long long* out, const unsigned long long* ref,
                                                 unsigned long long n, double scale, double tolerance,
                                                 unsigned long long* result) {
    compareFloating(out, ref, n, scale, tolerance, result,
                    [](unsigned long long b) { return __longlong_as_double(static_cast<long long>(b)); });
}

extern "C" __global__ void tilescope_compare_f32(const unsigned* out, const unsigned* ref, unsigned long long n,
                                                 double scale, double tolerance, unsigned long long* result) {
    compareFloating(out, ref, n, scale, tolerance, result,
                    [](unsigned b) { return static_cast<double>(__uint_as_float(b)); });
}

extern "C" __global__ void tilescope_compare_f16(const unsigned short* out, const unsigned short* ref,
                                                 unsigned long long n, double scale, double tolerance,
                                                 unsigned long long* result) {
    compareFloating(out, ref, n, scale, tolerance, result,
                    [](unsigned short b) { return static_cast<double>(halfToFloat(b)); });
}

extern "C" __global__ void tilescope_compare_bf16(const unsigned short* out, const unsigned short* ref,
                                                  unsigned long long n, double scale, double tolerance,
                                                  unsigned long long* result) {
    compareFloating(out, ref, n, scale, tolerance, result,
                    [](unsigned short b) { return static_cast<double>(bfloat16ToFloat(b)); });
}

extern "C" __global__ void tilescope_compare_b8(const unsigned char* out, const unsigned char* ref,
                                                unsigned long long n, double, double, unsigned long long* result) {
    compareBits(out, ref, n, result);
}

extern "C" __global__ void tilescope_compare_b16(const unsigned short* out, const unsigned short* ref,
                                                 unsigned long long n, double, double, unsigned long long* result) {
    compareBits(out, ref, n, result);
}

extern "C" __global__ void tilescope_compare_b32(const unsigned* out, const unsigned* ref, unsigned long long n, double,
                                                 double, unsigned long long* result) {
    compareBits(out, ref, n, result);
}

extern "C" __global__ void tilescope_compare_b64(const unsigned long long* out, const unsigned long long* ref,
                                                 unsigned long long n, double, double, unsigned long long* result) {
    compareBits(out, ref, n, result);
}
