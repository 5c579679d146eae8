// Device-memory copy, out[i] = in[i] over N floats: the bandwidth roofline every memory-bound
// kernel is compared with (a device-to-device cudaMemcpy of 1 GiB moves about 4250 GB/s, read +
// write, on an H200).
//
// A block copies one tile of BLOCK * ITEMS vectors of VEC floats. Thread t of the block moves the
// vectors t, t + BLOCK, t + 2 * BLOCK, ... of its tile, so each of its ITEMS loads is one
// coalesced access of the whole block (a warp reads 32 * VEC * 4 contiguous bytes). All ITEMS
// loads are issued before the first store, so a thread keeps ITEMS * VEC * 4 bytes in flight:
// that, times the threads an SM holds, is what hides DRAM latency.
//
// Tuning parameters are injected as #defines (Kernel Tuner's convention); the defaults below
// let the file compile alone. The problem's conditions (copy.json) guarantee
//   N % (BLOCK * VEC * ITEMS) == 0 (no tail: the grid of N / (BLOCK * VEC * ITEMS) blocks covers
//   N exactly, and every vector access is aligned, as cudaMalloc'd buffers are 256-byte aligned).
//
// Seen on the H200 (CUDA 13.0, NVRTC, sm_90), N = 2^28: a device-to-device memcpy moves 4253 GB/s;
// the best configs move 16 bytes per thread (VEC * ITEMS = 4) in blocks of 128 to 512 threads,
// at 4255-4278 GB/s (13 configs within 1 % of memcpy); 128 bytes per thread (VEC 4, ITEMS 8)
// gives 4034-4089, and one float per thread 851 GB/s (BLOCK 64: 4 M blocks) to 2797 (BLOCK 256).

#ifndef BLOCK
#define BLOCK 256 // threads per block
#endif
#ifndef VEC
#define VEC 4 // floats per access: 1 (float), 2 (float2) or 4 (float4)
#endif
#ifndef ITEMS
#define ITEMS 4 // vectors per thread, all loaded before any is stored
#endif

namespace {

template <int W>
struct VecOf;
template <>
struct VecOf<1> {
    using Type = float;
};
template <>
struct VecOf<2> {
    using Type = float2;
};
template <>
struct VecOf<4> {
    using Type = float4;
};
using Vec = VecOf<VEC>::Type;

constexpr long long kTileVecs = static_cast<long long>(BLOCK) * ITEMS; // vectors per block

static_assert(VEC == 1 || VEC == 2 || VEC == 4, "VEC must be 1, 2 or 4");
static_assert(BLOCK >= 32 && BLOCK <= 1024 && BLOCK % 32 == 0, "BLOCK: whole warps, at most 1024 threads");
static_assert(ITEMS >= 1, "ITEMS must be positive");

} // namespace

extern "C" __global__ void __launch_bounds__(BLOCK) copy(int n, const float* __restrict__ in, float* __restrict__ out) {
    (void)n; // the grid covers n exactly
    // 64-bit tile offset: N reaches 2^28 floats, and a larger N would overflow an int first here.
    const long long first = static_cast<long long>(blockIdx.x) * kTileVecs + threadIdx.x;
    const Vec* const src = reinterpret_cast<const Vec*>(in) + first;
    Vec* const dst = reinterpret_cast<Vec*>(out) + first;

    Vec v[ITEMS];
#pragma unroll
    for (int i = 0; i < ITEMS; ++i)
        v[i] = src[i * BLOCK];
#pragma unroll
    for (int i = 0; i < ITEMS; ++i)
        dst[i * BLOCK] = v[i];
}
