// The decode step's y = x * W^T: x is M x K (M = 1 to 16 tokens), W is N x K row-major (as
// nn.Linear keeps its weight), y is M x N; bf16 (fp16 with -DGEMV_FP16), fp32 accumulation.
// Reading W once is the whole cost: the objective is the bandwidth of that read.
//
// A block of WARPS warps; each warp owns ROWS consecutive rows of W and walks K with 16-byte
// loads, UNROLL of them in flight per row, every lane holding MT (the smallest power of two
// >= M) x ROWS partial sums; a shuffle reduction ends each row. HINT 1 reads W with
// ld.global.nc.L1::no_allocate (streamed, kept out of L1), 0 through the read-only cache, 2 as 1
// and asks L2 to fetch the 256-byte line around each load (L2::256B).
//
// ALGO 1 runs the dot products on the tensor cores (mma.sync m16n8k16, sm_80 and later), so that 2
// to 16 tokens cost no more arithmetic issue than one: the block owns 16 * ROWS rows of W and its
// WARPS warps split K between them. W is the mma's A operand and the tokens its B operand (n = 8
// tokens, two n-tiles when M > 8), y^T = W x^T. Each lane loads 16 bytes (8 consecutive k) of row
// lane / 4 and of row lane / 4 + 8 of a 16-row tile; the mma's k order is a permutation of the
// loaded k, and the tokens' 16 bytes are loaded with the same permutation, so a dot product is
// a sum over the same pairs. The warps' partial tiles meet in shared memory at the end.
//
// ALGO 2 is Hopper's, for M = 1 (sm_90): bulk copies (cp.async.bulk, TMA without a tensor map)
// keep many bytes of W in flight without holding registers. A block of WARPS consumer warps and
// one producer warp walks groups of ROWS rows, blockIdx.x, + gridDim.x, ... (a grid of fewer
// blocks than groups makes it persistent); each group's rows are cut into CHUNK-element pieces along
// K, and one thread of the producer warp copies a group's ROWS pieces of one chunk into a stage of
// a STAGES-deep ring in dynamic shared memory, which also holds all of x (one bulk copy up front).
// A stage is full when its bytes have landed (full[s]: the producer's one arrival with the byte
// count) and free again when every consumer warp has read it (empty[s]: one arrival a warp).
// Consumer thread t reads the 16-byte vectors t, t + 32 * WARPS, ... of each row's piece and the
// same vectors of x: a quarter warp reads 128 consecutive bytes, conflict-free. A group ends with
// a shuffle reduction per row and the warps' sums meeting in shared memory.

#ifndef WARPS
#define WARPS 4
#endif
#ifndef ROWS
#define ROWS 1
#endif
#ifndef UNROLL
#define UNROLL 4
#endif
#ifndef MT
#define MT 1
#endif
#ifndef HINT
#define HINT 1
#endif
#ifndef ALGO
#define ALGO 0
#endif

typedef unsigned short elem_t; // the bits of a bf16 or fp16 value

__device__ __forceinline__ uint4 loadWeights(const elem_t* p) {
    uint4 v;
#if HINT == 2
    asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
#elif HINT
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
#else
    v = __ldg(reinterpret_cast<const uint4*>(p));
#endif
    return v;
}

// The two 16-bit values of `u` as floats (low half first).
__device__ __forceinline__ float2 unpack2(unsigned u) {
#ifdef GEMV_FP16
    float2 f;
    asm("{\n .reg .f16 l, h;\n mov.b32 {l, h}, %2;\n cvt.f32.f16 %0, l;\n cvt.f32.f16 %1, h;\n}\n"
        : "=f"(f.x), "=f"(f.y)
        : "r"(u));
    return f;
#else
    return make_float2(__uint_as_float(u << 16), __uint_as_float(u & 0xffff0000u));
#endif
}

__device__ __forceinline__ elem_t pack1(float v) {
    unsigned short r;
#ifdef GEMV_FP16
    asm("cvt.rn.f16.f32 %0, %1;\n" : "=h"(r) : "f"(v));
#else
    asm("cvt.rn.bf16.f32 %0, %1;\n" : "=h"(r) : "f"(v));
#endif
    return r;
}

// The eight 16-bit values of `v` as floats.
__device__ __forceinline__ void unpack8(uint4 v, float (&f)[8]) {
    const unsigned u[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const float2 p = unpack2(u[i]);
        f[2 * i] = p.x;
        f[2 * i + 1] = p.y;
    }
}

#if ALGO == 1
// D += A B, m16n8k16, fp32 accumulators; A: 16 rows of W, B: 8 tokens.
__device__ __forceinline__ void mma16816(float (&d)[4], unsigned a0, unsigned a1, unsigned a2, unsigned a3, unsigned b0,
                                         unsigned b1) {
#ifdef GEMV_FP16
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                 "{%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
#else
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                 "{%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
#endif
}

#define NTILES (MT > 8 ? 2 : 1) // 8-token tiles
#define KSTEP (32 * UNROLL)     // the k a warp walks per iteration: 32 per unrolled load

extern "C" __global__ void __launch_bounds__(WARPS * 32)
    gemv(int M, int N, int K, const elem_t* __restrict__ x, const elem_t* __restrict__ W, elem_t* __restrict__ y) {
    __shared__ float partial[WARPS > 1 ? WARPS - 1 : 1][ROWS][NTILES][4][32];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int g = lane / 4, c = lane % 4;
    const int row0 = blockIdx.x * 16 * ROWS;

    float acc[ROWS][NTILES][4];
#pragma unroll
    for (int r = 0; r < ROWS; ++r)
#pragma unroll
        for (int t = 0; t < NTILES; ++t)
#pragma unroll
            for (int i = 0; i < 4; ++i)
                acc[r][t][i] = 0.0f;

    // Lane (g, c) reads 8 consecutive k at c * 8 of rows g and g + 8 of each tile, and of tokens g, g + 8.
    const elem_t* w = W + static_cast<long long>(row0 + g) * K + c * 8;
    const elem_t* xa = x + static_cast<long long>(g) * K + c * 8;
    const elem_t* xb = x + static_cast<long long>(g + 8) * K + c * 8;
    const bool tokenA = g < M, tokenB = g + 8 < M;
    for (int k0 = warp * KSTEP; k0 < K; k0 += WARPS * KSTEP) {
        uint4 wv[UNROLL][ROWS][2];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u)
#pragma unroll
            for (int r = 0; r < ROWS; ++r) {
                wv[u][r][0] = loadWeights(w + static_cast<long long>(r * 16) * K + k0 + u * 32);
                wv[u][r][1] = loadWeights(w + static_cast<long long>(r * 16 + 8) * K + k0 + u * 32);
            }
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            uint4 xv[NTILES];
            xv[0] = tokenA ? __ldg(reinterpret_cast<const uint4*>(xa + k0 + u * 32)) : make_uint4(0, 0, 0, 0);
            if (NTILES > 1)
                xv[NTILES - 1] =
                    tokenB ? __ldg(reinterpret_cast<const uint4*>(xb + k0 + u * 32)) : make_uint4(0, 0, 0, 0);
#pragma unroll
            for (int r = 0; r < ROWS; ++r)
#pragma unroll
                for (int t = 0; t < NTILES; ++t) {
                    // k pairs 0-1 and 2-3 of the lane's eight, then 4-5 and 6-7
                    mma16816(acc[r][t], wv[u][r][0].x, wv[u][r][1].x, wv[u][r][0].y, wv[u][r][1].y, xv[t].x, xv[t].y);
                    mma16816(acc[r][t], wv[u][r][0].z, wv[u][r][1].z, wv[u][r][0].w, wv[u][r][1].w, xv[t].z, xv[t].w);
                }
        }
    }

    if (WARPS > 1) {
        if (warp > 0) {
#pragma unroll
            for (int r = 0; r < ROWS; ++r)
#pragma unroll
                for (int t = 0; t < NTILES; ++t)
#pragma unroll
                    for (int i = 0; i < 4; ++i)
                        partial[warp > 0 ? warp - 1 : 0][r][t][i][lane] = acc[r][t][i];
        }
        __syncthreads();
        if (warp > 0)
            return;
#pragma unroll
        for (int v = 0; v < WARPS - 1; ++v)
#pragma unroll
            for (int r = 0; r < ROWS; ++r)
#pragma unroll
                for (int t = 0; t < NTILES; ++t)
#pragma unroll
                    for (int i = 0; i < 4; ++i)
                        acc[r][t][i] += partial[v][r][t][i][lane];
    }
    // D: (row g, token 2c), (row g, token 2c + 1), (row g + 8, token 2c), (row g + 8, token 2c + 1)
#pragma unroll
    for (int r = 0; r < ROWS; ++r)
#pragma unroll
        for (int t = 0; t < NTILES; ++t)
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                const int m = t * 8 + 2 * c + (i & 1), n = row0 + r * 16 + g + (i >> 1) * 8;
                if (m < M)
                    y[static_cast<long long>(m) * N + n] = pack1(acc[r][t][i]);
            }
}
#elif ALGO == 2
#ifndef STAGES
#define STAGES 4
#endif
#ifndef CHUNK
#define CHUNK 2048
#endif
#define STAGE_ELEMS (ROWS * CHUNK)      // a stage: the group's ROWS pieces of one chunk
#define VECS (CHUNK / (8 * 32 * WARPS)) // 16-byte vectors of a row's piece per consumer thread

__device__ __forceinline__ unsigned smemAddress(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void mbarInit(unsigned long long* bar, int count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smemAddress(bar)), "r"(count) : "memory");
}
// One arrival that also expects `bytes` of bulk copies before the phase completes.
__device__ __forceinline__ void mbarArriveExpectTx(unsigned long long* bar, int bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smemAddress(bar)), "r"(bytes)
                 : "memory");
}
__device__ __forceinline__ void mbarArrive(unsigned long long* bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smemAddress(bar)) : "memory");
}
// Waits until the barrier's phase of parity `parity` has completed.
__device__ __forceinline__ void mbarWait(unsigned long long* bar, int parity) {
    asm volatile("{\n .reg .pred done;\n"
                 "WAIT:\n"
                 " mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
                 " @!done bra WAIT;\n"
                 "}\n" ::"r"(smemAddress(bar)),
                 "r"(parity)
                 : "memory");
}
// `bytes` (a multiple of 16, both addresses 16-byte aligned) from global `src` to shared `dst`;
// completes on `bar`.
__device__ __forceinline__ void bulkLoad(void* dst, const void* src, int bytes, unsigned long long* bar) {
    const unsigned d = smemAddress(dst), b = smemAddress(bar);
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(d),
                 "l"(src), "r"(bytes), "r"(b)
                 : "memory");
}

extern "C" __global__ void __launch_bounds__((WARPS + 1) * 32)
    gemv(int M, int N, int K, const elem_t* __restrict__ x, const elem_t* __restrict__ W, elem_t* __restrict__ y) {
    // Dynamic: the ring of STAGES * STAGE_ELEMS elements, then x's K.
    extern __shared__ __align__(128) unsigned char smem[];
    __shared__ unsigned long long full[STAGES], empty[STAGES], xFull;
    __shared__ float partial[2][WARPS][ROWS]; // the warps' row sums, two groups apart
    elem_t* const ring = reinterpret_cast<elem_t*>(smem);
    elem_t* const xs = ring + STAGES * STAGE_ELEMS;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int groups = N / ROWS, chunks = K / CHUNK;
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbarInit(full + s, 1);
            mbarInit(empty + s, WARPS);
        }
        mbarInit(&xFull, 1);
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();

    if (warp == WARPS) {
        // The producer: stage it % STAGES takes the block's it-th chunk, counted over all its groups.
        if (lane == 0) {
            mbarArriveExpectTx(&xFull, K * 2);
            bulkLoad(xs, x, K * 2, &xFull);
            int it = 0;
            for (int g = blockIdx.x; g < groups; g += gridDim.x)
                for (int c = 0; c < chunks; ++c, ++it) {
                    const int stage = it % STAGES;
                    if (it >= STAGES)
                        mbarWait(empty + stage, (it / STAGES - 1) & 1); // read out STAGES chunks ago
                    mbarArriveExpectTx(full + stage, STAGE_ELEMS * 2);
#pragma unroll
                    for (int r = 0; r < ROWS; ++r)
                        bulkLoad(ring + stage * STAGE_ELEMS + r * CHUNK,
                                 W + static_cast<long long>(g * ROWS + r) * K + c * CHUNK, CHUNK * 2, full + stage);
                }
        }
        return;
    }

    const uint4* const xv = reinterpret_cast<const uint4*>(xs) + threadIdx.x;
    mbarWait(&xFull, 0);
    int it = 0, n = 0;
    for (int g = blockIdx.x; g < groups; g += gridDim.x, ++n) {
        float acc[ROWS];
#pragma unroll
        for (int r = 0; r < ROWS; ++r)
            acc[r] = 0.0f;
        for (int c = 0; c < chunks; ++c, ++it) {
            const int stage = it % STAGES;
            mbarWait(full + stage, (it / STAGES) & 1);
            const uint4* const wv = reinterpret_cast<const uint4*>(ring + stage * STAGE_ELEMS) + threadIdx.x;
#pragma unroll
            for (int v = 0; v < VECS; ++v) {
                // x is unpacked once and used for every row.
                float xf[8];
                unpack8(xv[c * (CHUNK / 8) + v * 32 * WARPS], xf);
#pragma unroll
                for (int r = 0; r < ROWS; ++r) {
                    float wf[8];
                    unpack8(wv[r * (CHUNK / 8) + v * 32 * WARPS], wf);
#pragma unroll
                    for (int i = 0; i < 8; ++i)
                        acc[r] = fmaf(xf[i], wf[i], acc[r]);
                }
            }
            __syncwarp(); // the warp's reads of the stage are done before it is handed back
            if (lane == 0)
                mbarArrive(empty + stage);
        }

#pragma unroll
        for (int r = 0; r < ROWS; ++r) {
            float v = acc[r];
#pragma unroll
            for (int offset = 16; offset > 0; offset /= 2)
                v += __shfl_xor_sync(0xffffffffu, v, offset);
            if (lane == 0)
                partial[n & 1][warp][r] = v;
        }
        // The consumers only (barrier 1): the producer does not take part.
        asm volatile("bar.sync 1, %0;\n" ::"n"(WARPS * 32) : "memory");
        if (threadIdx.x < ROWS) {
            float v = 0.0f;
#pragma unroll
            for (int w = 0; w < WARPS; ++w)
                v += partial[n & 1][w][threadIdx.x];
            y[static_cast<long long>(g) * ROWS + threadIdx.x] = pack1(v);
        }
    }
}
#else
extern "C" __global__ void __launch_bounds__(WARPS * 32)
    gemv(int M, int N, int K, const elem_t* __restrict__ x, const elem_t* __restrict__ W, elem_t* __restrict__ y) {
    const int lane = threadIdx.x % 32;
    const int row0 = (blockIdx.x * WARPS + threadIdx.x / 32) * ROWS;

    float acc[MT][ROWS];
#pragma unroll
    for (int m = 0; m < MT; ++m)
#pragma unroll
        for (int r = 0; r < ROWS; ++r)
            acc[m][r] = 0.0f;

    const elem_t* w = W + static_cast<long long>(row0) * K + lane * 8;
    for (int k0 = lane * 8; k0 < K; k0 += 256 * UNROLL) {
        uint4 wv[UNROLL][ROWS];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u)
#pragma unroll
            for (int r = 0; r < ROWS; ++r)
                wv[u][r] = loadWeights(w + static_cast<long long>(r) * K + (k0 - lane * 8) + u * 256);
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            // Each weight is unpacked once and used for every token.
            float wf[ROWS][8];
#pragma unroll
            for (int r = 0; r < ROWS; ++r)
                unpack8(wv[u][r], wf[r]);
#pragma unroll
            for (int m = 0; m < MT; ++m) {
                if (m < M) {
                    float xf[8];
                    unpack8(__ldg(reinterpret_cast<const uint4*>(x + static_cast<long long>(m) * K + k0 + u * 256)),
                            xf);
#pragma unroll
                    for (int r = 0; r < ROWS; ++r)
#pragma unroll
                        for (int i = 0; i < 8; ++i)
                            acc[m][r] = fmaf(xf[i], wf[r][i], acc[m][r]);
                }
            }
        }
    }

#pragma unroll
    for (int m = 0; m < MT; ++m) {
#pragma unroll
        for (int r = 0; r < ROWS; ++r) {
            float v = acc[m][r];
#pragma unroll
            for (int offset = 16; offset > 0; offset /= 2)
                v += __shfl_xor_sync(0xffffffffu, v, offset);
            if (lane == 0 && m < M)
                y[static_cast<long long>(m) * N + row0 + r] = pack1(v);
        }
    }
}
#endif
