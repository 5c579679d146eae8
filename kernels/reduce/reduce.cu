// Row sums of a row-major fp32 matrix: out[r] = sum over c of in[r][c], for ROWS rows of COLS
// floats. Memory-bound: the floor is one read of the matrix (the output is ROWS floats).
//
// A row is cut into SPLIT segments of about COLS / SPLIT floats, and TPR threads (a multiple of
// 32) sum one segment; a block of BLOCK threads holds BLOCK / TPR such row groups (consecutive
// rows), and the SPLIT blocks of a row are neighbours in the grid. A thread owns the VEC-wide
// vectors t, t + TPR, t + 2 * TPR, ... of its segment (t: its index in the group), so each load
// step of the group is one coalesced access; it issues UNROLL of them before adding any, into
// UNROLL independent accumulators, which keeps UNROLL * VEC * 4 bytes per thread in flight.
// The group's partial sum goes through a warp-shuffle tree, then (TPR > 32) through shared memory
// to the group's first warp. With SPLIT = 1 that warp stores the row sum; with SPLIT > 1 each
// segment's sum is added to the row's output with one atomicAdd (one-pass, no second kernel):
// more blocks in flight for short grids, at the price of atomics and of a load imbalance.
// LOAD picks the load instruction: 0 plain loads, 1 __ldg (read-only data cache), 2 __ldcs
// (streaming: evict first).
//
// Verification. `out` is ReadWrite and starts as zeros: the atomics need a zeroed output, and
// Tilescope restores every ReadWrite buffer to its initial contents before each launch (the
// verification launch, the warm-up and every timed sample), so each launch starts from zeros.
// (A tool that launches repeatedly without restoring would see the sums of several launches
// with SPLIT > 1.) Configs add the same numbers in different orders, and SPLIT > 1 adds its
// segment sums in whatever order the atomics land, so results differ in fp32 rounding only.
// That stays far below the engine's tolerance, 1e-4 of the largest row sum: inputs are uniform
// in [-1, 1), so a row sum is a random walk of about 0.58 * sqrt(COLS) (148 for COLS = 65536,
// the largest of 2048 rows near 4 times that), while the rounding error of any summation order
// here is bounded by a few ulps of the partial sums it adds (each of the order of that same
// magnitude or smaller): relative errors of about 1e-7 of the scale, three orders of magnitude
// inside the tolerance. The output is compared relative to its largest value, not per element,
// so a row whose sum happens to be near 0 is no problem.
//
// Tuning parameters are injected as #defines (Kernel Tuner's convention); the defaults below let
// the file compile alone. The problem's conditions (reduce.json) guarantee BLOCK % TPR == 0 and
// COLS % VEC == 0 (every row starts on a VEC-float boundary, so vector loads are aligned, as the
// buffer is 256-byte aligned). Any ROWS and any COLS (a multiple of VEC) are handled: the grid
// of ceil(ROWS / (BLOCK / TPR)) * SPLIT blocks may end in a partial row group (rows past ROWS load
// nothing and store nothing), segments are cut in whole vectors with the last one shorter, and
// every load checks the segment's end.

#ifndef BLOCK
#define BLOCK 256 // threads per block
#endif
#ifndef TPR
#define TPR 256 // threads per row segment: a multiple of 32 that divides BLOCK
#endif
#ifndef SPLIT
#define SPLIT 1 // segments per row; > 1: segment sums are added to the output with atomicAdd
#endif
#ifndef VEC
#define VEC 4 // floats per load: 1 (float), 2 (float2) or 4 (float4)
#endif
#ifndef UNROLL
#define UNROLL 4 // vectors a thread loads per step, each into its own accumulator
#endif
#ifndef LOAD
#define LOAD 1 // 0: plain loads, 1: __ldg, 2: __ldcs
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

constexpr int kRowsPerBlock = BLOCK / TPR;
constexpr int kWarpsPerRow = TPR / 32;
constexpr unsigned kFullMask = 0xffffffffu;

static_assert(BLOCK >= 32 && BLOCK <= 1024 && BLOCK % 32 == 0, "BLOCK: whole warps, at most 1024 threads");
static_assert(TPR >= 32 && TPR % 32 == 0 && BLOCK % TPR == 0, "TPR: whole warps that divide the block");
static_assert(VEC == 1 || VEC == 2 || VEC == 4, "VEC must be 1, 2 or 4");
static_assert(SPLIT >= 1 && UNROLL >= 1, "SPLIT and UNROLL must be positive");
static_assert(LOAD >= 0 && LOAD <= 2, "LOAD is 0, 1 or 2");

__device__ __forceinline__ Vec loadVec(const Vec* p) {
#if LOAD == 1
    return __ldg(p);
#elif LOAD == 2
    return __ldcs(p);
#else
    return *p;
#endif
}

// A template so that only the branch of the config's vector type is instantiated.
template <typename V>
__device__ __forceinline__ float lanesSum(V v) {
    if constexpr (VEC == 4)
        return (v.x + v.y) + (v.z + v.w);
    else if constexpr (VEC == 2)
        return v.x + v.y;
    else
        return v;
}

__device__ __forceinline__ float warpSum(float s) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1)
        s += __shfl_xor_sync(kFullMask, s, offset);
    return s;
}

} // namespace

extern "C" __global__ void __launch_bounds__(BLOCK) reduce(int rows, int cols, const float* in, float* out) {
    const int tid = static_cast<int>(threadIdx.x);
    const int slot = tid / TPR; // row group inside the block
    const int t = tid % TPR;    // thread inside the row group
    const int segment = static_cast<int>(blockIdx.x) % SPLIT;
    const int row = (static_cast<int>(blockIdx.x) / SPLIT) * kRowsPerBlock + slot;

    const int colsVec = cols / VEC;
    const int segVec = (colsVec + SPLIT - 1) / SPLIT;
    const int begin = segment * segVec;
    const int end = min(colsVec, begin + segVec);

    float acc[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
        acc[u] = 0.0f;

    if (row < rows) {
        const Vec* const src = reinterpret_cast<const Vec*>(in + static_cast<long long>(row) * cols);
        int v = begin + t;
        // Whole steps: UNROLL loads in flight, no checks.
        for (; v + (UNROLL - 1) * TPR < end; v += UNROLL * TPR) {
            Vec x[UNROLL];
#pragma unroll
            for (int u = 0; u < UNROLL; ++u)
                x[u] = loadVec(src + v + u * TPR);
#pragma unroll
            for (int u = 0; u < UNROLL; ++u)
                acc[u] += lanesSum(x[u]);
        }
        // The segment's last, partial step.
#pragma unroll
        for (int u = 0; u < UNROLL - 1; ++u)
            if (v + u * TPR < end)
                acc[u] += lanesSum(loadVec(src + v + u * TPR));
    }

    float s = acc[0];
#pragma unroll
    for (int u = 1; u < UNROLL; ++u)
        s += acc[u];
    // Every thread of the block gets here (rows past the end carry zeros), so the shuffles and
    // the barrier below see whole warps and the whole block.
    s = warpSum(s);

    if constexpr (kWarpsPerRow > 1) {
        __shared__ float partial[BLOCK / 32];
        const int warp = tid / 32;
        const int lane = tid % 32;
        if (lane == 0)
            partial[warp] = s;
        __syncthreads();
        if (t < 32) // the group's first warp, whole
            s = warpSum(lane < kWarpsPerRow ? partial[slot * kWarpsPerRow + lane] : 0.0f);
    }

    if (t == 0 && row < rows) {
        if constexpr (SPLIT == 1)
            out[row] = s;
        else
            atomicAdd(out + row, s);
    }
}
