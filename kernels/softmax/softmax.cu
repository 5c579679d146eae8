// Row-wise softmax of a row-major fp32 matrix, out[r][c] = exp(x[r][c] - max_r) / sum_r, where
// max_r and sum_r = sum_c exp(x[r][c] - max_r) are taken over row r. Memory-bound: the floor is
// one read and one write of the matrix.
//
// TPR threads work on one row (TPR = 32: a warp per row; more: several warps, whose partial
// results meet in shared memory); a block holds RPB such rows. A thread owns the VEC-wide
// vectors t, t + TPR, t + 2 * TPR, ... of its row (t: its index in the row), so each step of the
// row group is one coalesced access.
//
// CACHE_ROW = 1: the thread loads its vectors once into registers (at most CACHE_FLOATS floats),
// reduces the max, turns its values into exp(x - max) in place, reduces their sum and writes
// them scaled: one read and one write of the matrix.
// CACHE_ROW = 0: the row is read twice: a first pass keeps a running (max, sum) pair per thread
// (the sum rescaled whenever the max grows, the "online softmax"), the pairs are reduced over
// the row, and a second pass reads the row again and writes exp(x - max) / sum. The second
// read mostly hits L2 (the rows in flight are far smaller than L2), at the cost of L2 traffic
// and a second exp per element.
// Both compute the same function; they differ only in the order of the fp32 sums, so every
// config agrees with every other within fp32 rounding.
//
// SOFTMAX_BF16 = 1 (softmax_bf16.json): the matrix is bfloat16 in memory, the arithmetic fp32,
// the output rounded to nearest; VEC counts bf16 values (8: one 16-byte access).
//
// Tuning parameters are injected as #defines (Kernel Tuner's convention); the defaults below
// let the file compile alone. The problem's conditions (softmax.json) guarantee:
//   TPR * RPB <= 1024, ROWS % RPB == 0 (the grid of ROWS / RPB blocks covers the rows exactly),
//   COLS % VEC == 0 (every row starts on a VEC-float boundary, so vector accesses are aligned),
//   and with CACHE_ROW = 1, COLS <= CACHE_FLOATS * TPR (a row fits in its threads' registers).
// Columns need not be a multiple of TPR * VEC: the loops check the column.
//
// Seen on the H200 (CUDA 13.0, NVRTC, sm_90, inputs uniform in [-4, 4), every valid config within
// 1e-6 relative of a double-precision reference): the best configs cache the row, at 4012 GB/s
// for 8192x8192 (TPR 256, VEC 4), 3987 for 32768x1024 (TPR 32, VEC 4) and 4061 for 4096x32768
// (TPR 1024, VEC 4), level with Triton's fused softmax (4030 / 3933 / 4069); the best re-reading
// configs reach 3603 / 3671 / 2855, and the worst configs 1757 / 494 / 1389 GB/s.

#ifndef TPR
#define TPR 256 // threads per row: a multiple of 32, at most 1024
#endif
#ifndef RPB
#define RPB 1 // rows per block
#endif
#ifndef VEC
#define VEC 4 // floats per access: 1 (float), 2 (float2) or 4 (float4)
#endif
#ifndef CACHE_ROW
#define CACHE_ROW 1 // 1: the row stays in registers between the passes; 0: it is read again
#endif
#ifndef SOFTMAX_BF16
#define SOFTMAX_BF16 0 // 1: the matrix is bfloat16 (softmax_bf16.json)
#endif
#ifndef FAST_EXP
// 1: exp(x) as 2^(x log2 e) by the hardware's ex2.approx (as Triton's tl.exp), a few ulp from
// expf in fp32, far below a bfloat16's rounding; 0: expf.
#define FAST_EXP 0
#endif
#ifndef CACHE_FLOATS
// Floats of its row a thread can hold with CACHE_ROW = 1; softmax.json's condition spells the
// same number. 32 keeps a 1024-thread block within the 64 registers a thread may then have.
#define CACHE_FLOATS 32
#endif

namespace {

constexpr int kThreads = TPR * RPB;
constexpr int kWarpsPerRow = TPR / 32;
constexpr int kCacheVecs = CACHE_FLOATS / VEC; // vectors a thread can hold with CACHE_ROW = 1
constexpr unsigned kFullMask = 0xffffffffu;

static_assert(TPR % 32 == 0 && TPR >= 32 && TPR <= 1024, "TPR: whole warps, at most 1024 threads");
static_assert(RPB >= 1 && kThreads <= 1024, "TPR * RPB is the block: at most 1024 threads");
#if SOFTMAX_BF16
typedef unsigned short elem_t; // the bits of a bfloat16
static_assert(VEC == 1 || VEC == 2 || VEC == 4 || VEC == 8, "VEC must be 1, 2, 4 or 8");
#else
typedef float elem_t;
static_assert(VEC == 1 || VEC == 2 || VEC == 4, "VEC must be 1, 2 or 4");
#endif
static_assert(CACHE_ROW == 0 || CACHE_ROW == 1, "CACHE_ROW must be 0 or 1");
static_assert(CACHE_FLOATS % VEC == 0 && kCacheVecs >= 1, "CACHE_FLOATS must hold whole vectors");

// INFINITY needs <math.h>, which NVRTC does not provide.
__device__ __forceinline__ float negInf() {
    return __int_as_float(static_cast<int>(0xff800000u));
}

__device__ __forceinline__ float expOf(float x) {
#if FAST_EXP
    float r;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(r) : "f"(x * 1.4426950408889634f));
    return r;
#else
    return expf(x);
#endif
}

template <int W>
struct Vec {
    float v[W];
};

#if SOFTMAX_BF16
__device__ __forceinline__ float widen(unsigned bits16) {
    return __uint_as_float(bits16 << 16);
}
// Two floats as two bfloat16 in one word (lo in the low half), rounded to nearest even.
__device__ __forceinline__ unsigned narrow2(float lo, float hi) {
    unsigned r;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}

__device__ __forceinline__ Vec<VEC> loadVec(const elem_t* p) {
    Vec<VEC> r;
    if constexpr (VEC == 1) {
        r.v[0] = widen(*p);
    } else {
        constexpr int kWords = VEC > 1 ? VEC / 2 : 1; // VEC 1 takes the other branch
        unsigned w[kWords];
        if constexpr (VEC == 8) {
            const uint4 q = *reinterpret_cast<const uint4*>(p);
            w[0] = q.x;
            w[1] = q.y;
            w[2] = q.z;
            w[3] = q.w;
        } else if constexpr (VEC == 4) {
            const uint2 q = *reinterpret_cast<const uint2*>(p);
            w[0] = q.x;
            w[1] = q.y;
        } else {
            w[0] = *reinterpret_cast<const unsigned*>(p);
        }
#pragma unroll
        for (int i = 0; i < kWords; ++i) {
            r.v[2 * i] = widen(w[i] & 0xffffu);
            r.v[2 * i + 1] = widen(w[i] >> 16);
        }
    }
    return r;
}

__device__ __forceinline__ void storeVec(elem_t* p, const Vec<VEC>& r) {
    if constexpr (VEC == 1) {
        *p = static_cast<elem_t>(narrow2(r.v[0], 0.0f) & 0xffffu);
    } else {
        constexpr int kWords = VEC > 1 ? VEC / 2 : 1; // VEC 1 takes the other branch
        unsigned w[kWords];
#pragma unroll
        for (int i = 0; i < kWords; ++i)
            w[i] = narrow2(r.v[2 * i], r.v[2 * i + 1]);
        if constexpr (VEC == 8)
            *reinterpret_cast<uint4*>(p) = make_uint4(w[0], w[1], w[2], w[3]);
        else if constexpr (VEC == 4)
            *reinterpret_cast<uint2*>(p) = make_uint2(w[0], w[1]);
        else
            *reinterpret_cast<unsigned*>(p) = w[0];
    }
}
#else
__device__ __forceinline__ Vec<VEC> loadVec(const float* p) {
    Vec<VEC> r;
    if constexpr (VEC == 4) {
        const float4 q = *reinterpret_cast<const float4*>(p);
        r.v[0] = q.x;
        r.v[1] = q.y;
        r.v[2] = q.z;
        r.v[3] = q.w;
    } else if constexpr (VEC == 2) {
        const float2 q = *reinterpret_cast<const float2*>(p);
        r.v[0] = q.x;
        r.v[1] = q.y;
    } else {
        r.v[0] = *p;
    }
    return r;
}

__device__ __forceinline__ void storeVec(float* p, const Vec<VEC>& r) {
    if constexpr (VEC == 4)
        *reinterpret_cast<float4*>(p) = make_float4(r.v[0], r.v[1], r.v[2], r.v[3]);
    else if constexpr (VEC == 2)
        *reinterpret_cast<float2*>(p) = make_float2(r.v[0], r.v[1]);
    else
        *p = r.v[0];
}
#endif

// Each mode defines only what it uses (an unused internal function is a front-end warning).
#if CACHE_ROW
struct MaxOp {
    __device__ __forceinline__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct SumOp {
    __device__ __forceinline__ float operator()(float a, float b) const { return a + b; }
};
__device__ __forceinline__ float shuffleXor(float v, int lane) {
    return __shfl_xor_sync(kFullMask, v, lane);
}
#else
// A running (max, sum of exp(x - max)) pair, merged with another: the sum with the smaller max
// is rescaled to the larger one. An empty pair is (-inf, 0); merging two empty pairs stays empty
// (the rescale factors are taken only from a finite max).
struct MaxSum {
    float m;
    float s;
};

__device__ __forceinline__ MaxSum merge(MaxSum a, MaxSum b) {
    const float m = fmaxf(a.m, b.m);
    if (m == negInf())
        return a;
    return {m, a.s * expOf(a.m - m) + b.s * expOf(b.m - m)};
}

struct MaxSumOp {
    __device__ __forceinline__ MaxSum operator()(MaxSum a, MaxSum b) const { return merge(a, b); }
};
__device__ __forceinline__ MaxSum shuffleXor(MaxSum v, int lane) {
    return {__shfl_xor_sync(kFullMask, v.m, lane), __shfl_xor_sync(kFullMask, v.s, lane)};
}
#endif

template <typename T, typename Op>
__device__ __forceinline__ T warpReduce(T v, Op op) {
#pragma unroll
    for (int lane = 16; lane >= 1; lane /= 2)
        v = op(v, shuffleXor(v, lane));
    return v;
}

// The reduction of `v` over the TPR threads of a row, returned to all of them. With several
// warps per row, each warp's result goes through `scratch` (kWarpsPerRow entries per row); every
// warp then reduces all of them itself, so one barrier is enough. Every thread of the block must
// call it (it may hold a barrier), and each call site needs its own `scratch`: a warp that runs
// ahead to the next call must not overwrite entries a slower warp has yet to read.
template <typename T, typename Op>
__device__ __forceinline__ T rowReduce(T v, Op op, T identity, T* scratch, int rowInBlock, int warpInRow, int lane) {
    v = warpReduce(v, op);
    if constexpr (kWarpsPerRow > 1) {
        T* const mine = scratch + rowInBlock * kWarpsPerRow;
        if (lane == 0)
            mine[warpInRow] = v;
        __syncthreads();
        v = lane < kWarpsPerRow ? mine[lane] : identity;
        v = warpReduce(v, op);
    }
    return v;
}

} // namespace

extern "C" __global__ void __launch_bounds__(kThreads)
    softmax(int rows, int cols, const elem_t* __restrict__ in, elem_t* __restrict__ out) {
    (void)rows; // the grid covers the rows exactly
    const int tid = static_cast<int>(threadIdx.x);
    const int rowInBlock = tid / TPR;
    const int t = tid % TPR; // index in the row group
    const int warpInRow = t / 32;
    const int lane = t % 32;
    const long long row = static_cast<long long>(blockIdx.x) * RPB + rowInBlock;
    const elem_t* const x = in + row * cols;
    elem_t* const y = out + row * cols;

#if CACHE_ROW
    __shared__ float maxScratch[RPB * kWarpsPerRow];
    __shared__ float sumScratch[RPB * kWarpsPerRow];

    // The thread's k-th vector is at column t * VEC + k * TPR * VEC: a compile-time offset from
    // its first one, so all addresses come from one base. The loops stop at the thread's vector
    // count with a break, not an `if` around each step: 32 guarded steps kept 32 predicates live
    // across the phases and doubled the registers for VEC = 1 (seen with CUDA 13, sm_90); the
    // breaks cost nothing in flight, as no branch waits for a load.
    constexpr int kStep = TPR * VEC;
    const elem_t* const xt = x + t * VEC;
    elem_t* const yt = y + t * VEC;
    const int count = (cols - t * VEC + kStep - 1) / kStep; // vectors this thread holds

    // Every load first (all in flight at once), then the arithmetic.
    Vec<VEC> cache[kCacheVecs];
#pragma unroll
    for (int k = 0; k < kCacheVecs; ++k) {
        if (k >= count)
            break;
        cache[k] = loadVec(xt + k * kStep);
    }
    float m = negInf();
#pragma unroll
    for (int k = 0; k < kCacheVecs; ++k) {
        if (k >= count)
            break;
#pragma unroll
        for (int e = 0; e < VEC; ++e)
            m = fmaxf(m, cache[k].v[e]);
    }
    m = rowReduce(m, MaxOp{}, negInf(), maxScratch, rowInBlock, warpInRow, lane);

    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < kCacheVecs; ++k) {
        if (k >= count)
            break;
#pragma unroll
        for (int e = 0; e < VEC; ++e) {
            cache[k].v[e] = expOf(cache[k].v[e] - m);
            s += cache[k].v[e];
        }
    }
    s = rowReduce(s, SumOp{}, 0.0f, sumScratch, rowInBlock, warpInRow, lane);

    const float inv = 1.0f / s;
#pragma unroll
    for (int k = 0; k < kCacheVecs; ++k) {
        if (k >= count)
            break;
#pragma unroll
        for (int e = 0; e < VEC; ++e)
            cache[k].v[e] *= inv;
        storeVec(yt + k * kStep, cache[k]);
    }
#else
    __shared__ MaxSum scratch[RPB * kWarpsPerRow];

    // Unrolled so that several loads of a thread are in flight before their arithmetic.
    MaxSum acc{negInf(), 0.0f};
#pragma unroll 4
    for (int c = t * VEC; c < cols; c += TPR * VEC) {
        const Vec<VEC> v = loadVec(x + c);
        float vm = v.v[0];
#pragma unroll
        for (int e = 1; e < VEC; ++e)
            vm = fmaxf(vm, v.v[e]);
        // One rescale per vector: the vector's own max joins the running one first.
        const float m = fmaxf(acc.m, vm);
        float s = acc.s * expOf(acc.m - m);
#pragma unroll
        for (int e = 0; e < VEC; ++e)
            s += expOf(v.v[e] - m);
        acc = {m, s};
    }
    acc = rowReduce(acc, MaxSumOp{}, MaxSum{negInf(), 0.0f}, scratch, rowInBlock, warpInRow, lane);

    const float inv = 1.0f / acc.s;
#pragma unroll 4
    for (int c = t * VEC; c < cols; c += TPR * VEC) {
        Vec<VEC> v = loadVec(x + c);
#pragma unroll
        for (int e = 0; e < VEC; ++e)
            v.v[e] = expOf(v.v[e] - acc.m) * inv;
        storeVec(y + c, v);
    }
#endif
}
