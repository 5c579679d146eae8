// FP32 GEMM, C = A * B, all row-major: A is MxK, B is KxN, C is MxN.
//
// A block computes a BLOCK_M x BLOCK_N tile of C, stepping over K in BLOCK_K slices that it stages
// through shared memory; each thread accumulates a THREAD_M x THREAD_N tile in registers from an
// outer product per k (THREAD_M + THREAD_N shared loads feed THREAD_M * THREAD_N FMAs).
//
// Tuning parameters are injected as #defines (Kernel Tuner's convention); the defaults below
// let the file compile alone. The problem's conditions (sgemm.json) guarantee:
//   M % BLOCK_M == 0, N % BLOCK_N == 0, K % BLOCK_K == 0 (no bounds checks in the kernel),
//   BLOCK_M % THREAD_M == 0, BLOCK_N % THREAD_N == 0, THREAD_N % VEC == 0, BLOCK_K % VEC == 0.
// A launch uses a 1-D block of (BLOCK_M / THREAD_M) * (BLOCK_N / THREAD_N) threads and a grid of
// (N / BLOCK_N, M / BLOCK_M) blocks. Static shared memory is
//   4 * STAGES * BLOCK_K * ((BLOCK_M + A_PAD) + BLOCK_N) bytes.

#ifndef BLOCK_M
#define BLOCK_M 128 // rows of C per block
#endif
#ifndef BLOCK_N
#define BLOCK_N 128 // columns of C per block
#endif
#ifndef BLOCK_K
#define BLOCK_K 8 // depth of one shared-memory slice
#endif
#ifndef THREAD_M
#define THREAD_M 8 // rows of C per thread (registers)
#endif
#ifndef THREAD_N
#define THREAD_N 8 // columns of C per thread (registers)
#endif
#ifndef VEC
#define VEC 4 // width of global loads and C stores: 1 (float), 2 (float2) or 4 (float4)
#endif
#ifndef STAGES
#define STAGES 2 // 1: load, sync, compute, sync; 2: double-buffered, next slice prefetched into registers
#endif
#ifndef MIN_BLOCKS
// Blocks per SM that ptxas must leave registers for (__launch_bounds__' second argument); 0 gives
// none and leaves the register count to ptxas' heuristics. Seen on sm_90 with CUDA 13 over the
// whole space: with 0, ptxas keeps light 256- and 512-thread blocks small (full occupancy) but
// caps heavy 512-thread blocks that must spill anyway at 32 registers (0.7-1 TFLOP/s); with 1 those
// get 128 registers (5-7 TFLOP/s), but light blocks grow to 60-80 registers and lose up to half
// their speed to occupancy (372 configs >10 % slower, 107 faster, the best ones equal). So it
// stays out of sgemm.json's space: a lever for register-pressure experiments.
#define MIN_BLOCKS 0
#endif
#ifndef A_PAD
// The A slice is stored transposed (k-major) so a thread reads its THREAD_M values of one k as
// vectors; the transposing store writes columns, and padding the rows by 4 floats shifts the
// banks of consecutive k rows by 4 words so those writes do not collide, while keeping every
// row 16-byte aligned for float4 reads.
#define A_PAD 4
#endif

namespace {

constexpr int kThreadsM = BLOCK_M / THREAD_M;   // threads along M
constexpr int kThreadsN = BLOCK_N / THREAD_N;   // threads along N
constexpr int kThreads = kThreadsM * kThreadsN; // block size
constexpr int kLdA = BLOCK_M + A_PAD;           // row stride of the transposed A slice

// A thread's tile is not contiguous: it is split into chunks of up to 4 rows (columns), and
// chunk c of thread t sits at c * (threads along that axis) * chunk + t * chunk. A warp then
// reads one contiguous run of shared memory per vector load (no bank conflicts between its
// threads) and writes C in contiguous runs (full sectors).
constexpr int kChunkM = THREAD_M % 4 == 0 ? 4 : THREAD_M;
constexpr int kChunkN = THREAD_N % 4 == 0 ? 4 : THREAD_N;

// Global -> shared loads: the A slice is BLOCK_M rows of BLOCK_K, the B slice BLOCK_K rows of
// BLOCK_N, both read as VEC-wide vectors spread over all threads of the block.
constexpr int kVecsA = BLOCK_M * BLOCK_K / VEC;
constexpr int kVecsB = BLOCK_K * BLOCK_N / VEC;
constexpr int kLoadsA = (kVecsA + kThreads - 1) / kThreads; // per thread
constexpr int kLoadsB = (kVecsB + kThreads - 1) / kThreads;

static_assert(BLOCK_M % THREAD_M == 0 && BLOCK_N % THREAD_N == 0, "the thread tile must divide the block tile");
static_assert(VEC == 1 || VEC == 2 || VEC == 4, "VEC must be 1, 2 or 4");
static_assert(BLOCK_K % VEC == 0 && BLOCK_N % VEC == 0, "VEC must divide the rows of the A and B slices");
static_assert(THREAD_N % VEC == 0, "C is stored in VEC-wide vectors: VEC must divide THREAD_N");
static_assert(kThreads >= 1 && kThreads <= 1024, "1 to 1024 threads per block");
static_assert(STAGES == 1 || STAGES == 2, "STAGES must be 1 or 2");
static_assert(A_PAD >= 0 && A_PAD % 4 == 0, "A_PAD keeps rows 16-byte aligned: a multiple of 4");

// W consecutive floats from memory into registers (one vector load when W is 2 or 4).
template <int W>
__device__ __forceinline__ void loadVec(float* dst, const float* src) {
    if constexpr (W == 4) {
        const float4 v = *reinterpret_cast<const float4*>(src);
        dst[0] = v.x;
        dst[1] = v.y;
        dst[2] = v.z;
        dst[3] = v.w;
    } else if constexpr (W == 2) {
        const float2 v = *reinterpret_cast<const float2*>(src);
        dst[0] = v.x;
        dst[1] = v.y;
    } else {
#pragma unroll
        for (int i = 0; i < W; ++i)
            dst[i] = src[i];
    }
}

// W floats from registers to memory (one vector store when W is 2 or 4).
template <int W>
__device__ __forceinline__ void storeVec(float* dst, const float* src) {
    if constexpr (W == 4) {
        *reinterpret_cast<float4*>(dst) = make_float4(src[0], src[1], src[2], src[3]);
    } else if constexpr (W == 2) {
        *reinterpret_cast<float2*>(dst) = make_float2(src[0], src[1]);
    } else {
#pragma unroll
        for (int i = 0; i < W; ++i)
            dst[i] = src[i];
    }
}

// Row (column) inside the block tile of a thread's register row (column) `i`.
__device__ __forceinline__ int tileRow(int tRow, int i) {
    return (i / kChunkM) * kThreadsM * kChunkM + tRow * kChunkM + i % kChunkM;
}
__device__ __forceinline__ int tileCol(int tCol, int j) {
    return (j / kChunkN) * kThreadsN * kChunkN + tCol * kChunkN + j % kChunkN;
}

} // namespace

#if MIN_BLOCKS > 0
#define SGEMM_LAUNCH_BOUNDS __launch_bounds__(kThreads, MIN_BLOCKS)
#else
#define SGEMM_LAUNCH_BOUNDS __launch_bounds__(kThreads)
#endif

extern "C" __global__ void SGEMM_LAUNCH_BOUNDS sgemm(int M, int N, int K, const float* __restrict__ A,
                                                     const float* __restrict__ B, float* __restrict__ C) {
    (void)M; // the grid covers M exactly
    __shared__ __align__(16) float sA[STAGES][BLOCK_K][kLdA];
    __shared__ __align__(16) float sB[STAGES][BLOCK_K][BLOCK_N];

    const int tid = static_cast<int>(threadIdx.x);
    const int tRow = tid / kThreadsN;
    const int tCol = tid % kThreadsN;
    // Offsets along one axis fit an int; products with a leading dimension are 64-bit. (A 64-bit
    // column offset in the C address made NVVM split the vector stores of C into scalars.)
    const int blockRow = static_cast<int>(blockIdx.y) * BLOCK_M;
    const int blockCol = static_cast<int>(blockIdx.x) * BLOCK_N;
    const float* const aBlock = A + static_cast<long long>(blockRow) * K;
    const float* const bBlock = B + blockCol;

    // The next slice travels global -> these registers -> shared memory, so that with two stages
    // its global latency hides behind the FMAs of the current slice.
    float stageA[kLoadsA][VEC];
    float stageB[kLoadsB][VEC];

    auto loadSlice = [&](int k0) {
#pragma unroll
        for (int l = 0; l < kLoadsA; ++l) {
            const int v = tid + l * kThreads;
            if (kVecsA % kThreads == 0 || v < kVecsA) {
                const int r = v / (BLOCK_K / VEC);
                const int c = (v % (BLOCK_K / VEC)) * VEC;
                loadVec<VEC>(stageA[l], aBlock + static_cast<long long>(r) * K + k0 + c);
            }
        }
#pragma unroll
        for (int l = 0; l < kLoadsB; ++l) {
            const int v = tid + l * kThreads;
            if (kVecsB % kThreads == 0 || v < kVecsB) {
                const int r = v / (BLOCK_N / VEC);
                const int c = (v % (BLOCK_N / VEC)) * VEC;
                loadVec<VEC>(stageB[l], bBlock + static_cast<long long>(k0 + r) * N + c);
            }
        }
    };

    auto storeSlice = [&](int buf) {
#pragma unroll
        for (int l = 0; l < kLoadsA; ++l) {
            const int v = tid + l * kThreads;
            if (kVecsA % kThreads == 0 || v < kVecsA) {
                const int r = v / (BLOCK_K / VEC);
                const int c = (v % (BLOCK_K / VEC)) * VEC;
#pragma unroll
                for (int e = 0; e < VEC; ++e)
                    sA[buf][c + e][r] = stageA[l][e];
            }
        }
#pragma unroll
        for (int l = 0; l < kLoadsB; ++l) {
            const int v = tid + l * kThreads;
            if (kVecsB % kThreads == 0 || v < kVecsB) {
                const int r = v / (BLOCK_N / VEC);
                const int c = (v % (BLOCK_N / VEC)) * VEC;
                storeVec<VEC>(&sB[buf][r][c], stageB[l]);
            }
        }
    };

    float acc[THREAD_M][THREAD_N];
#pragma unroll
    for (int i = 0; i < THREAD_M; ++i)
#pragma unroll
        for (int j = 0; j < THREAD_N; ++j)
            acc[i][j] = 0.0f;

    auto computeSlice = [&](int buf) {
#pragma unroll
        for (int k = 0; k < BLOCK_K; ++k) {
            float fragA[THREAD_M];
            float fragB[THREAD_N];
#pragma unroll
            for (int i = 0; i < THREAD_M; i += kChunkM)
                loadVec<kChunkM>(&fragA[i], &sA[buf][k][tileRow(tRow, i)]);
#pragma unroll
            for (int j = 0; j < THREAD_N; j += kChunkN)
                loadVec<kChunkN>(&fragB[j], &sB[buf][k][tileCol(tCol, j)]);
#pragma unroll
            for (int i = 0; i < THREAD_M; ++i)
#pragma unroll
                for (int j = 0; j < THREAD_N; ++j)
                    acc[i][j] = fmaf(fragA[i], fragB[j], acc[i][j]);
        }
    };

    const int slices = K / BLOCK_K;
    if constexpr (STAGES == 2) {
        loadSlice(0);
        storeSlice(0);
        __syncthreads();
        for (int s = 0; s < slices; ++s) {
            const int buf = s & 1;
            const bool more = s + 1 < slices;
            if (more)
                loadSlice((s + 1) * BLOCK_K);
            computeSlice(buf);
            // The other buffer was last read in iteration s - 1, which every thread finished
            // before the barrier that ended it, so one barrier per slice is enough.
            if (more)
                storeSlice(buf ^ 1);
            __syncthreads();
        }
    } else {
        for (int s = 0; s < slices; ++s) {
            loadSlice(s * BLOCK_K);
            storeSlice(0);
            __syncthreads();
            computeSlice(0);
            __syncthreads();
        }
    }

#pragma unroll
    for (int i = 0; i < THREAD_M; ++i) {
        float* const cRow = C + static_cast<long long>(blockRow + tileRow(tRow, i)) * N + blockCol;
#pragma unroll
        for (int j = 0; j < THREAD_N; j += VEC)
            storeVec<VEC>(cRow + tileCol(tCol, j), &acc[i][j]);
    }
}
