// FP32 GEMM with warp tiling, C = A * B, all row-major: A is MxK, B is KxN, C is MxN.
//
// The problem of sgemm.cu, organised on three levels as CUTLASS's SIMT GEMMs are:
//   - a block computes a BLOCK_M x BLOCK_N tile of C, stepping over K in BLOCK_K slices staged
//     through shared memory;
//   - its WARPS_M x WARPS_N warps each own a WARP_M x WARP_N warp tile (BLOCK_M / WARPS_M by
//     BLOCK_N / WARPS_N);
//   - the 32 lanes of a warp are laid out LANES_M x LANES_N (WARP_M / THREAD_M by
//     WARP_N / THREAD_N: 4 x 8 or 8 x 4; lane l at r = l / LANES_N, c = l % LANES_N), and each
//     accumulates THREAD_M x THREAD_N in registers as pieces of 4 x 4 spread over the warp tile:
//     piece (p, q) of lane (r, c) covers rows p * 4 * LANES_M + 4 * r + [0, 4) and columns
//     q * 4 * LANES_N + 4 * c + [0, 4) of it.
// So one k of a thread's outer product takes THREAD_M / 4 + THREAD_N / 4 16-byte shared loads,
// and in each of them the warp reads only LANES_M (or LANES_N) distinct 16-byte words, at most
// 128 contiguous bytes: the other lanes get a broadcast, and the load is one wavefront.
//
// The pipeline, one __syncthreads per slice: shared memory holds two slices; while a block computes
// slice s from one buffer, the global loads of slice s + 1 are in flight into registers (issued
// before the FMAs of the first k of s) and are written to the other buffer before the last k of s.
// Inside a slice the fragments are double-buffered in registers too: the shared loads of k + 1 are
// issued before the FMAs of k (and those of the next slice's first k right after the barrier).
// Each element of C is summed as in sgemm.cu, one fmaf per k with k ascending from 0, so every
// config of either problem should give the same bits.
//
// Tuning parameters are injected as #defines (Kernel Tuner's convention); the defaults below
// let the file compile alone. The problem's conditions (sgemm_warp.json) guarantee:
//   M % BLOCK_M == 0, N % BLOCK_N == 0, K % BLOCK_K == 0 (no bounds checks in the kernel, and
//   every row of A, B and C starts 16-byte aligned for float4 loads and stores),
//   BLOCK_M % (WARPS_M * THREAD_M) == 0, BLOCK_N % (WARPS_N * THREAD_N) == 0 and
//   LANES_M * LANES_N == 32 with LANES_M 4 or 8, THREAD_M and THREAD_N 4 or 8, BLOCK_K 8 or 16,
//   2 to 16 warps, and static shared memory 4 * 2 * BLOCK_K * ((BLOCK_M + 4) + BLOCK_N) bytes at
//   most 48 KiB.
// A launch uses a 1-D block of WARPS_M * WARPS_N * 32 threads and a 1-D grid of
// (M / BLOCK_M) * (N / BLOCK_N) blocks, ordered by GROUP_M for L2 reuse: consecutive blocks walk
// GROUP_M tile rows down before moving one tile column right, so the blocks resident at one time
// share a few panels of A and of B (GROUP_M 1 is the plain row-major order of sgemm's grid).

#ifndef BLOCK_M
#define BLOCK_M 128 // rows of C per block
#endif
#ifndef BLOCK_N
#define BLOCK_N 128 // columns of C per block
#endif
#ifndef BLOCK_K
#define BLOCK_K 8 // depth of one shared-memory slice: 8 or 16
#endif
#ifndef WARPS_M
#define WARPS_M 4 // warps along M
#endif
#ifndef WARPS_N
#define WARPS_N 2 // warps along N
#endif
#ifndef THREAD_M
#define THREAD_M 8 // rows of C per thread (registers): 4 or 8
#endif
#ifndef THREAD_N
#define THREAD_N 8 // columns of C per thread (registers): 4 or 8
#endif
#ifndef MIN_BLOCKS
// Blocks per SM that ptxas must leave registers for (__launch_bounds__' second argument): with 2,
// a 256-thread block gets at most 128 registers a thread, and two blocks (16 warps) share an SM.
// The problem offers 2 only to blocks of 256 threads or more (below, the cap of 255 a thread
// applies either way) and only where the accumulators, two sets of fragments and about 24
// registers of addresses and staged loads fit what each thread gets, so that no config spills.
#define MIN_BLOCKS 2
#endif
#ifndef GROUP_M
#define GROUP_M 8 // tile rows a group of consecutive blocks walks down (1: row-major)
#endif

namespace {

constexpr int kWarps = WARPS_M * WARPS_N;
constexpr int kThreads = kWarps * 32;
constexpr int kWarpM = BLOCK_M / WARPS_M;  // rows of the warp tile
constexpr int kWarpN = BLOCK_N / WARPS_N;  // columns of the warp tile
constexpr int kLanesM = kWarpM / THREAD_M; // lanes along M
constexpr int kLanesN = kWarpN / THREAD_N; // lanes along N
constexpr int kPiecesM = THREAD_M / 4;     // 4 x 4 pieces of a thread along M
constexpr int kPiecesN = THREAD_N / 4;

// The A slice is stored transposed (k-major) so that a thread reads 4 rows of one k as a float4.
// The rows are padded by 4 floats: every row stays 16-byte aligned, and the transposing stores
// (below) fall on 32 distinct banks.
constexpr int kLdA = BLOCK_M + 4;

// Global -> shared: the A slice is BLOCK_M rows of BLOCK_K floats, the B slice BLOCK_K rows of
// BLOCK_N, both read as float4s spread over the block's threads (whole warps: both counts are
// multiples of 32).
constexpr int kVecsA = BLOCK_M * BLOCK_K / 4;
constexpr int kVecsB = BLOCK_K * BLOCK_N / 4;
constexpr int kLoadsA = (kVecsA + kThreads - 1) / kThreads; // per thread
constexpr int kLoadsB = (kVecsB + kThreads - 1) / kThreads;
constexpr int kRowsA = kThreads * 4 / BLOCK_K; // rows of A one pass of the block loads
constexpr int kRowsB = kThreads * 4 / BLOCK_N; // rows of B one pass of the block loads
constexpr int kStageA = BLOCK_K * kLdA;        // floats of one A buffer
constexpr int kStageB = BLOCK_K * BLOCK_N;     // floats of one B buffer

static_assert(BLOCK_K == 8 || BLOCK_K == 16, "BLOCK_K must be 8 or 16");
static_assert(THREAD_M % 4 == 0 && THREAD_N % 4 == 0, "a thread's tile is made of 4 x 4 pieces");
static_assert(BLOCK_M % (WARPS_M * THREAD_M) == 0 && BLOCK_N % (WARPS_N * THREAD_N) == 0,
              "the thread tiles must divide the warp tile");
static_assert(kLanesM * kLanesN == 32, "a warp tile is 32 thread tiles");
static_assert(BLOCK_M % 32 == 0, "the A stores' bank pattern needs BLOCK_M a multiple of 32");
static_assert(kVecsA % 32 == 0 && kVecsB % 32 == 0, "slices are loaded by whole warps");
static_assert(kWarps % (BLOCK_K / 8) == 0 && kThreads % (BLOCK_N / 4) == 0,
              "a thread's further float4s of a slice lie in its first one's column, whole passes of rows apart");
static_assert(kThreads <= 1024, "at most 1024 threads per block");
static_assert(MIN_BLOCKS >= 1, "MIN_BLOCKS must be at least 1");
static_assert(GROUP_M >= 1, "GROUP_M must be at least 1");

// Float4 v of the A slice: its row and its first column (k). A warp's 32 float4s cover 16 rows by
// two neighbouring float4s of k, so its transposing stores to sA[k][row] (row stride 4 mod 32
// words) fill 32 distinct banks; its global loads read one full 32-byte sector of each row.
__device__ __forceinline__ int aRow(int v) {
    return v % 16 + 16 * ((v / 32) / (BLOCK_K / 8));
}
__device__ __forceinline__ int aCol(int v) {
    return 4 * ((v % 32) / 16 + 2 * ((v / 32) % (BLOCK_K / 8)));
}

} // namespace

extern "C" __global__ void __launch_bounds__(kThreads, MIN_BLOCKS)
    sgemm_warp(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C) {
    __shared__ __align__(16) float sA[2][BLOCK_K][kLdA];
    __shared__ __align__(16) float sB[2][BLOCK_K][BLOCK_N];

    // The block's tile, GROUP_M tile rows at a time.
    const int tilesM = M / BLOCK_M;
    const int tilesN = N / BLOCK_N;
    const int pid = static_cast<int>(blockIdx.x);
    const int perGroup = GROUP_M * tilesN;
    const int firstM = (pid / perGroup) * GROUP_M;
    const int groupRows = min(tilesM - firstM, GROUP_M);
    const int inGroup = pid % perGroup;
    const int blockRow = (firstM + inGroup % groupRows) * BLOCK_M;
    const int blockCol = (inGroup / groupRows) * BLOCK_N;

    const int tid = static_cast<int>(threadIdx.x);
    const int warp = tid / 32;
    const int lane = tid % 32;
    // The thread's first row and column inside the block tile; its pieces are 4 * LANES_M rows
    // (4 * LANES_N columns) apart.
    const int rowBase = (warp / WARPS_N) * kWarpM + (lane / kLanesN) * 4;
    const int colBase = (warp % WARPS_N) * kWarpN + (lane % kLanesN) * 4;

    // This thread's first float4 of each slice: of A (row aRow(tid), column aCol(tid) of the slice;
    // its further loads lie kRowsA rows apart) and of B (kRowsB rows apart, the same column).
    // Offsets along one axis fit an int; products with a leading dimension are 64-bit.
    const float* aSrc = A + static_cast<long long>(blockRow + aRow(tid)) * K + aCol(tid);
    const float* bSrc = B + static_cast<long long>(tid / (BLOCK_N / 4)) * N + blockCol + (tid % (BLOCK_N / 4)) * 4;
    float* const aDst = &sA[0][aCol(tid)][aRow(tid)];
    float* const bDst = &sB[0][tid / (BLOCK_N / 4)][(tid % (BLOCK_N / 4)) * 4];
    const long long bStep = static_cast<long long>(BLOCK_K) * N;

    float4 stageA[kLoadsA];
    float4 stageB[kLoadsB];

    auto loadSlice = [&]() {
#pragma unroll
        for (int l = 0; l < kLoadsA; ++l)
            if (kVecsA % kThreads == 0 || tid + l * kThreads < kVecsA)
                stageA[l] = *reinterpret_cast<const float4*>(aSrc + static_cast<long long>(l * kRowsA) * K);
#pragma unroll
        for (int l = 0; l < kLoadsB; ++l)
            if (kVecsB % kThreads == 0 || tid + l * kThreads < kVecsB)
                stageB[l] = *reinterpret_cast<const float4*>(bSrc + static_cast<long long>(l * kRowsB) * N);
        aSrc += BLOCK_K;
        bSrc += bStep;
    };

    auto storeSlice = [&](int buf) {
#pragma unroll
        for (int l = 0; l < kLoadsA; ++l) {
            if (kVecsA % kThreads == 0 || tid + l * kThreads < kVecsA) {
                float* const dst = aDst + buf * kStageA + l * kRowsA;
                dst[0 * kLdA] = stageA[l].x;
                dst[1 * kLdA] = stageA[l].y;
                dst[2 * kLdA] = stageA[l].z;
                dst[3 * kLdA] = stageA[l].w;
            }
        }
#pragma unroll
        for (int l = 0; l < kLoadsB; ++l)
            if (kVecsB % kThreads == 0 || tid + l * kThreads < kVecsB)
                *reinterpret_cast<float4*>(bDst + buf * kStageB + l * kRowsB * BLOCK_N) = stageB[l];
    };

    float fragA[2][THREAD_M];
    float fragB[2][THREAD_N];

    auto loadFragments = [&](int f, int buf, int k) {
#pragma unroll
        for (int p = 0; p < kPiecesM; ++p) {
            const float4 x = *reinterpret_cast<const float4*>(&sA[buf][k][rowBase + p * 4 * kLanesM]);
            fragA[f][4 * p + 0] = x.x;
            fragA[f][4 * p + 1] = x.y;
            fragA[f][4 * p + 2] = x.z;
            fragA[f][4 * p + 3] = x.w;
        }
#pragma unroll
        for (int q = 0; q < kPiecesN; ++q) {
            const float4 x = *reinterpret_cast<const float4*>(&sB[buf][k][colBase + q * 4 * kLanesN]);
            fragB[f][4 * q + 0] = x.x;
            fragB[f][4 * q + 1] = x.y;
            fragB[f][4 * q + 2] = x.z;
            fragB[f][4 * q + 3] = x.w;
        }
    };

    float acc[THREAD_M][THREAD_N];
#pragma unroll
    for (int i = 0; i < THREAD_M; ++i)
#pragma unroll
        for (int j = 0; j < THREAD_N; ++j)
            acc[i][j] = 0.0f;

    loadSlice();
    storeSlice(0);
    __syncthreads();
    loadFragments(0, 0, 0);

    // One slice's math from buffer `buf`; with `more`, slice s + 1 (loaded into registers during
    // it) goes to the other buffer, last read by slice s - 1, which every thread finished before
    // the barrier that ended it; the barrier here in turn lets slice s + 2 overwrite this buffer.
    auto computeSlice = [&](int buf, bool more) {
#pragma unroll
        for (int k = 0; k < BLOCK_K; ++k) {
            if (k < BLOCK_K - 1) {
                loadFragments((k + 1) % 2, buf, k + 1);
            } else if (more) {
                storeSlice(buf ^ 1);
                __syncthreads();
                loadFragments((k + 1) % 2, buf ^ 1, 0);
            }
            if (k == 0 && more)
                loadSlice();
#pragma unroll
            for (int i = 0; i < THREAD_M; ++i)
#pragma unroll
                for (int j = 0; j < THREAD_N; ++j)
                    acc[i][j] = fmaf(fragA[k % 2][i], fragB[k % 2][j], acc[i][j]);
        }
    };

    // The last slice is peeled off, so that the loop's body has no conditions.
    const int slices = K / BLOCK_K;
    for (int s = 0; s < slices - 1; ++s)
        computeSlice(s & 1, true);
    computeSlice((slices - 1) & 1, false);

    // Each store of a warp writes LANES_N float4s side by side in each of LANES_M rows.
#pragma unroll
    for (int i = 0; i < THREAD_M; ++i) {
        const int row = blockRow + rowBase + (i / 4) * 4 * kLanesM + i % 4;
        float* const cRow = C + static_cast<long long>(row) * N + blockCol;
#pragma unroll
        for (int q = 0; q < kPiecesN; ++q)
            *reinterpret_cast<float4*>(cRow + colBase + q * 4 * kLanesN) =
                make_float4(acc[i][4 * q + 0], acc[i][4 * q + 1], acc[i][4 * q + 2], acc[i][4 * q + 3]);
    }
}
