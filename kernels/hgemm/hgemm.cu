// C = A * B on tensor cores, bf16 or fp16 inputs (fp16 with -DHGEMM_FP16), fp32 accumulation,
// C in the input type. A is M x K and B is K x N, both row-major (B_TRANS=1: B is N x K,
// row-major, as nn.Linear keeps its weight). M, N and K are multiples of the block tile (the
// space's conditions say so).
//
// One block computes a BLOCK_M x BLOCK_N tile of C with WARPS_M x WARPS_N warps, each a
// (BLOCK_M / WARPS_M) x (BLOCK_N / WARPS_N) tile of mma.sync.m16n8k16 instructions. K is walked
// in BLOCK_K slices through a STAGES-deep ring of shared-memory buffers that cp.async fills
// ahead of the math; fragments come from shared memory by ldmatrix, the 16-byte chunks of each
// row XOR-swizzled so that the eight rows an ldmatrix reads fall in eight different bank groups.
// Blocks are rasterised in groups of GROUP_M tile rows, so that neighbouring blocks share A and B
// tiles in L2. sm_80 and later.

#ifndef BLOCK_M
#define BLOCK_M 128
#endif
#ifndef BLOCK_N
#define BLOCK_N 128
#endif
#ifndef BLOCK_K
#define BLOCK_K 32
#endif
#ifndef WARPS_M
#define WARPS_M 2
#endif
#ifndef WARPS_N
#define WARPS_N 2
#endif
#ifndef STAGES
#define STAGES 3
#endif
#ifndef GROUP_M
#define GROUP_M 8
#endif
#ifndef B_TRANS
#define B_TRANS 0
#endif

#define THREADS (WARPS_M * WARPS_N * 32)
#define WARP_TILE_M (BLOCK_M / WARPS_M)
#define WARP_TILE_N (BLOCK_N / WARPS_N)
#define FRAGS_M (WARP_TILE_M / 16)
#define FRAGS_N (WARP_TILE_N / 8)

typedef unsigned short elem_t; // the bits of a bf16 or fp16 value

// Shared memory, in 16-byte chunks of 8 values. A stage holds A as BLOCK_M rows of BLOCK_K
// values, and B as BLOCK_K rows of BLOCK_N values (B_TRANS: BLOCK_N rows of BLOCK_K values).
#define A_CHUNKS_PER_ROW (BLOCK_K / 8)
#define A_STAGE_CHUNKS (BLOCK_M * A_CHUNKS_PER_ROW)
#if B_TRANS
#define B_CHUNKS_PER_ROW (BLOCK_K / 8)
#define B_STAGE_CHUNKS (BLOCK_N * B_CHUNKS_PER_ROW)
#else
#define B_CHUNKS_PER_ROW (BLOCK_N / 8)
#define B_STAGE_CHUNKS (BLOCK_K * B_CHUNKS_PER_ROW)
#endif

// The chunk `chunk` of row `row` in a tile of `perRow` chunks a row, swizzled: the low three
// bits of the chunk index are XORed with the row (over groups of rows when a row has fewer than
// eight chunks), so that the eight 16-byte rows of an 8x8 ldmatrix land in distinct banks.
__device__ __forceinline__ int swizzle(int row, int chunk, int perRow) {
    if (perRow >= 8)
        return row * perRow + (chunk ^ (row & 7));
    // 4 chunks a row (64 bytes): two rows share a 128-byte line
    return row * perRow + (chunk ^ ((row >> 1) & 3));
}

__device__ __forceinline__ unsigned smemAddress(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void cpAsync16(unsigned dst, const void* src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src));
}
__device__ __forceinline__ void cpAsyncCommit() {
    asm volatile("cp.async.commit_group;\n" ::);
}
template <int N>
__device__ __forceinline__ void cpAsyncWait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

__device__ __forceinline__ void ldmatrixX4(unsigned (&r)[4], unsigned address) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(address));
}
__device__ __forceinline__ void ldmatrixX4Trans(unsigned (&r)[4], unsigned address) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(address));
}

__device__ __forceinline__ void mma16816(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
#ifdef HGEMM_FP16
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                 "{%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#else
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                 "{%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#endif
}

// Two fp32 values as two packed 16-bit values, rounded to nearest.
__device__ __forceinline__ unsigned pack2(float lo, float hi) {
    unsigned r;
#ifdef HGEMM_FP16
    asm("cvt.rn.f16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
#else
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
#endif
    return r;
}

extern "C" __global__ void __launch_bounds__(THREADS)
    hgemm(int M, int N, int K, const elem_t* __restrict__ A, const elem_t* __restrict__ B, elem_t* __restrict__ C) {
    extern __shared__ __align__(128) unsigned char smem[];
    elem_t* const sA = reinterpret_cast<elem_t*>(smem);
    elem_t* const sB = sA + STAGES * A_STAGE_CHUNKS * 8;

    // Grouped rasterisation: GROUP_M tile rows walk the tile columns together.
    const int tilesM = M / BLOCK_M, tilesN = N / BLOCK_N;
    const int pid = blockIdx.x;
    const int inGroup = GROUP_M * tilesN;
    const int firstM = (pid / inGroup) * GROUP_M;
    const int groupRows = min(tilesM - firstM, GROUP_M);
    const int tileM = firstM + (pid % inGroup) % groupRows;
    const int tileN = (pid % inGroup) / groupRows;

    const int tid = threadIdx.x;
    const int warp = tid / 32, lane = tid % 32;
    const int warpM = warp / WARPS_N, warpN = warp % WARPS_N;

    const elem_t* gA = A + static_cast<long long>(tileM) * BLOCK_M * K;
#if B_TRANS
    const elem_t* gB = B + static_cast<long long>(tileN) * BLOCK_N * K;
#else
    const elem_t* gB = B + static_cast<long long>(tileN) * BLOCK_N;
#endif

    // Issues the copies of K slice `kt` into stage `stage`.
    auto loadStage = [&](int stage, int kt) {
        const unsigned a0 = smemAddress(sA + stage * A_STAGE_CHUNKS * 8);
#pragma unroll
        for (int c = tid; c < A_STAGE_CHUNKS; c += THREADS) {
            const int row = c / A_CHUNKS_PER_ROW, chunk = c % A_CHUNKS_PER_ROW;
            cpAsync16(a0 + swizzle(row, chunk, A_CHUNKS_PER_ROW) * 16,
                      gA + static_cast<long long>(row) * K + kt * BLOCK_K + chunk * 8);
        }
        const unsigned b0 = smemAddress(sB + stage * B_STAGE_CHUNKS * 8);
#pragma unroll
        for (int c = tid; c < B_STAGE_CHUNKS; c += THREADS) {
            const int row = c / B_CHUNKS_PER_ROW, chunk = c % B_CHUNKS_PER_ROW;
#if B_TRANS
            const elem_t* src = gB + static_cast<long long>(row) * K + kt * BLOCK_K + chunk * 8;
#else
            const elem_t* src = gB + static_cast<long long>(kt * BLOCK_K + row) * N + chunk * 8;
#endif
            cpAsync16(b0 + swizzle(row, chunk, B_CHUNKS_PER_ROW) * 16, src);
        }
    };

    float acc[FRAGS_M][FRAGS_N][4];
#pragma unroll
    for (int i = 0; i < FRAGS_M; ++i)
#pragma unroll
        for (int j = 0; j < FRAGS_N; ++j)
#pragma unroll
            for (int r = 0; r < 4; ++r)
                acc[i][j][r] = 0.0f;

    const int kTiles = K / BLOCK_K;
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < kTiles)
            loadStage(s, s);
        cpAsyncCommit();
    }

    for (int kt = 0; kt < kTiles; ++kt) {
        cpAsyncWait<STAGES - 2>();
        __syncthreads();
        // Refill the stage the previous iteration read (every warp is past it now).
        const int next = kt + STAGES - 1;
        if (next < kTiles)
            loadStage(next % STAGES, next);
        cpAsyncCommit();

        const int stage = kt % STAGES;
        const elem_t* stA = sA + stage * A_STAGE_CHUNKS * 8;
        const elem_t* stB = sB + stage * B_STAGE_CHUNKS * 8;
#pragma unroll
        for (int kk = 0; kk < BLOCK_K / 16; ++kk) {
            unsigned a[FRAGS_M][4];
#pragma unroll
            for (int i = 0; i < FRAGS_M; ++i) {
                // lanes 0-15: rows 0-15 at k 0-7; lanes 16-31: the same rows at k 8-15
                const int row = warpM * WARP_TILE_M + i * 16 + (lane % 16);
                const int chunk = kk * 2 + lane / 16;
                ldmatrixX4(a[i], smemAddress(stA) + swizzle(row, chunk, A_CHUNKS_PER_ROW) * 16);
            }
            unsigned b[FRAGS_N][2];
#pragma unroll
            for (int j = 0; j < FRAGS_N; j += 2) {
                unsigned r[4];
#if B_TRANS
                // B is n-major, rows are n as A's are m: matrices (n0-7,k0-7) (n0-7,k8-15) (n8-15,k0-7) (n8-15,k8-15)
                const int row = warpN * WARP_TILE_N + j * 8 + (lane % 8) + ((lane / 16) * 8);
                const int chunk = kk * 2 + (lane / 8) % 2;
                ldmatrixX4(r, smemAddress(stB) + swizzle(row, chunk, B_CHUNKS_PER_ROW) * 16);
#else
                // B is k-major: matrices (k0-7,n0-7) (k8-15,n0-7) (k0-7,n8-15) (k8-15,n8-15), transposed
                const int row = kk * 16 + (lane % 16);
                const int chunk = (warpN * WARP_TILE_N + j * 8) / 8 + lane / 16;
                ldmatrixX4Trans(r, smemAddress(stB) + swizzle(row, chunk, B_CHUNKS_PER_ROW) * 16);
#endif
                b[j][0] = r[0];
                b[j][1] = r[1];
                b[j + 1][0] = r[2];
                b[j + 1][1] = r[3];
            }
#pragma unroll
            for (int i = 0; i < FRAGS_M; ++i)
#pragma unroll
                for (int j = 0; j < FRAGS_N; ++j)
                    mma16816(acc[i][j], a[i], b[j][0], b[j][1]);
        }
    }
    cpAsyncWait<0>();

    // Each accumulator quad: rows lane/4 and lane/4 + 8, columns 2 * (lane % 4) and the next.
    elem_t* gC = C + static_cast<long long>(tileM * BLOCK_M + warpM * WARP_TILE_M) * N + tileN * BLOCK_N +
                 warpN * WARP_TILE_N;
#pragma unroll
    for (int i = 0; i < FRAGS_M; ++i) {
#pragma unroll
        for (int j = 0; j < FRAGS_N; ++j) {
            const int row = i * 16 + lane / 4, col = j * 8 + (lane % 4) * 2;
            *reinterpret_cast<unsigned*>(gC + static_cast<long long>(row) * N + col) =
                pack2(acc[i][j][0], acc[i][j][1]);
            *reinterpret_cast<unsigned*>(gC + static_cast<long long>(row + 8) * N + col) =
                pack2(acc[i][j][2], acc[i][j][3]);
        }
    }
}
