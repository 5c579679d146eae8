// Attention's forward pass, as FlashAttention-2 computes it on mma.sync: O = softmax(scale * Q K^T) V,
// with the causal mask (a key after the query is left out) when CAUSAL is 1. Q, K, V and O are
// bf16 tensors [B, H, S, D], contiguous (the layout PyTorch's scaled_dot_product_attention takes),
// D = HEAD_DIM; every sum is fp32. One block computes BLOCK_M query rows of one head: the grid is
// S / BLOCK_M blocks in x and B * H in y, and S is a multiple of BLOCK_M and BLOCK_N (the space's
// conditions say so). sm_80 and later.
//
// Each of the WARPS warps owns BLOCK_M / WARPS query rows (whole 16-row tiles of the mma). The Q
// tile is copied into shared memory once; K and V are walked in tiles of BLOCK_N keys that cp.async
// copies into shared memory. STAGES 1 keeps one K and one V tile, as FlashAttention-2 does: V's
// copy runs under Q K^T and the next K's under the softmax and P V. STAGES 2 keeps two of each: the
// next key block's copies run under the whole of this one's math. The 16-byte chunks of each row
// are XOR-swizzled so that the eight rows an ldmatrix reads lie in eight different bank groups.
//
// Per key block a warp computes its scores S = Q K^T with mma.sync.m16n8k16 (K's rows, as they
// are stored, are the B operand: ldmatrix without .trans), then the online softmax in registers:
// the running max m and sum l of each row (a row's values are spread over the four lanes of a
// quad, which meet by shuffles), exp2 with scale * log2(e) folded in, and the O accumulators
// rescaled by exp2(m_old - m_new). P, rounded to bf16, stays in registers as the A operand of
// O += P V: the accumulators of two neighbouring m16n8 tiles are laid out as the A fragment of one
// m16n8k16. V's rows are the B operand through ldmatrix.trans. At the end O / l goes through shared
// memory (the warp's own rows of the Q tile) and out in whole 16-byte stores.
//
// Q_REGS 1 keeps the warp's Q fragments in registers through the key loop (HEAD_DIM / 4
// registers per 16 rows); Q_REGS 0 reads them from shared memory again for every key block, which
// leaves the registers to the O accumulators (HEAD_DIM / 2 per 16 rows) and the scores (BLOCK_N /
// 2 per 16 rows). The problem's register condition keeps these arrays at 160 registers a thread
// or fewer, Q's counted twice (live across the whole loop): past that, ptxas (CUDA 13.0, sm_90)
// spills, at 32 rows a warp of HEAD_DIM 128 already with BLOCK_N 64 (192 registers of arrays:
// 16 to 56 bytes a thread).
//
// With CAUSAL, block x takes query block gridDim.x - 1 - x, so that the blocks with the most key
// blocks start first and the short ones fill the tail. Key blocks wholly after the block's last
// query are never loaded; a warp skips the math of those wholly after its own last row and masks
// only those that its rows cross. Every row sees key 0 in the first key block, so no row's
// maximum stays -inf past it; the softmax still guards that case (exp2 of -inf minus -inf would
// be NaN), and a row without any key would be written as 0.
//
// ALGO 1 is Hopper's, FlashAttention-3 without its warp specialisation: the same blocks, tiles,
// copies and online softmax, with the products on wgmma.mma_async. Each warpgroup (4 warps) owns
// 64 query rows, so BLOCK_M is 16 * WARPS and WARPS a multiple of 4. Q, K and V are stored as
// wgmma reads them: a row's HEAD_DIM values are HEAD_DIM / 64 slices of 128 bytes, each slice of
// a tile a [rows][64] block of 128-byte rows (so that d 64 to 127 is a second block, after the
// first's rows) in the 128-byte swizzle (chunk c of row r at chunk c ^ (r % 8)), every block on a
// 1024-byte boundary. S = Q K^T is an m64nBLOCK_Nk16 per k16 step with both operands K-major in
// shared memory; its accumulators are laid out per warp as the mma.sync tiles' (a warp's 16
// rows, 8 columns a tile), so the softmax, the causal mask and P's packing are ALGO 0's with one
// 16-row tile a warp. O += P V is an m64nHEAD_DIMk16 per 16 keys with P straight from registers
// (the A fragment of a k16 step is the mma.sync one) and V from shared memory, N-major (V's rows
// are k). Each product is waited for before its results are used: S before the softmax, P V
// before the next block's rescale of O. The causal skip is per warpgroup (a wgmma takes all
// four warps); the mask stays per warp. The epilogue stages O in the warp's own rows of the Q
// tile, in the tile's layout. ALGO 1 needs sm_90a (--gpu-architecture=sm_90a), STAGES 1 or 2 and
// Q_REGS 0.

#include <cuda_bf16.h>

// The defaults, for the file compiled alone, are a config of the space that does not spill.
#ifndef HEAD_DIM
#define HEAD_DIM 128
#endif
#ifndef BLOCK_M
#define BLOCK_M 128
#endif
#ifndef BLOCK_N
#define BLOCK_N 64
#endif
#ifndef WARPS
#define WARPS 8
#endif
#ifndef STAGES
#define STAGES 2
#endif
#ifndef Q_REGS
#define Q_REGS 0
#endif
#ifndef CAUSAL
#define CAUSAL 0
#endif
#ifndef ALGO
#define ALGO 0
#endif

#define THREADS (WARPS * 32)
#define WARP_ROWS (BLOCK_M / WARPS)   // query rows of one warp
#define FRAGS_M (WARP_ROWS / 16)      // the warp's 16-row mma tiles
#define CHUNKS_PER_ROW (HEAD_DIM / 8) // 16-byte chunks in a row of Q, K, V or O
#define ROW_BYTES (HEAD_DIM * 2)
#define COPY_ROWS (THREADS / CHUNKS_PER_ROW) // rows a block copies in one chunk per thread
#define TILE_VALUES (BLOCK_N * HEAD_DIM)     // values in one K or V tile

static_assert(BLOCK_M % (16 * WARPS) == 0, "each warp owns whole 16-row tiles of the block's queries");
static_assert(BLOCK_N % 16 == 0, "a key block is whole k16 steps of P V");
static_assert(HEAD_DIM % 64 == 0, "the swizzle takes rows of at least eight 16-byte chunks");
static_assert(STAGES == 1 || STAGES == 2, "STAGES is 1 or 2");
static_assert(ALGO == 0 || ALGO == 1, "ALGO is 0 (mma.sync) or 1 (wgmma)");
#if ALGO == 1
static_assert(WARPS % 4 == 0 && BLOCK_M == 16 * WARPS, "each warpgroup owns 64 query rows, each warp 16");
static_assert(BLOCK_N == 32 || BLOCK_N == 64 || BLOCK_N == 128, "the scores' wgmma is m64n32, m64n64 or m64n128");
static_assert(HEAD_DIM == 64 || HEAD_DIM == 128, "P V's wgmma is m64n64 or m64n128");
static_assert(Q_REGS == 0, "wgmma reads Q from shared memory");
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "ALGO 1 (wgmma) needs sm_90a: --gpu-architecture=sm_90a"
#endif
#endif

typedef unsigned short elem_t; // the bits of a bf16 value

// The chunk `chunk` of row `row`, swizzled: its low three bits XORed with the row's, so that the
// eight consecutive rows of an 8x8 ldmatrix (rows of 128 bytes or more) land in distinct banks.
__device__ __forceinline__ int swizzle(int row, int chunk) {
    return row * CHUNKS_PER_ROW + (chunk ^ (row & 7));
}

// 2^x by the hardware's ex2.approx (a few ulp in fp32, far below bf16's rounding of P; -inf gives 0).
__device__ __forceinline__ float exp2Approx(float x) {
    float r;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(r) : "f"(x));
    return r;
}

// INFINITY needs <math.h>, which NVRTC does not provide.
__device__ __forceinline__ float negInf() {
    return __int_as_float(static_cast<int>(0xff800000u));
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
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// ldmatrix at the address (base ^ flip) + offset. The address is made inside the asm statement:
// made outside, the eight addresses of a k loop over Q, which do not change from one key block to
// the next, are hoisted out of the key loop and held in registers (or spilled) all along it.
__device__ __forceinline__ void ldmatrixX4(unsigned (&r)[4], unsigned base, unsigned flip, unsigned offset) {
    asm volatile("{\n .reg .b32 a;\n xor.b32 a, %4, %5;\n add.u32 a, a, %6;\n"
                 " ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [a];\n}\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(base), "r"(flip), "r"(offset));
}
__device__ __forceinline__ void ldmatrixX4Trans(unsigned (&r)[4], unsigned base, unsigned flip, unsigned offset) {
    asm volatile("{\n .reg .b32 a;\n xor.b32 a, %4, %5;\n add.u32 a, a, %6;\n"
                 " ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [a];\n}\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(base), "r"(flip), "r"(offset));
}

__device__ __forceinline__ void mma16816(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                 "{%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Two fp32 values as two bf16 in one word (lo in the low half), rounded to nearest.
__device__ __forceinline__ unsigned pack2(float lo, float hi) {
    unsigned r;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}

#if ALGO == 1
// The byte offset of chunk `chunk` of row `row` in a tile of `rows` rows laid out for wgmma: the
// chunk's 128-byte slice (chunk / 8) is a block of rows x 128 bytes, and in its row of that block
// the chunk sits at chunk % 8 XOR row % 8 (the 128-byte swizzle of the address bits 4-6 by 7-9,
// the block starting on a 1024-byte boundary).
__device__ __forceinline__ unsigned sliceOffset(int rows, int row, int chunk) {
    return (chunk / 8) * rows * 128 + row * 128 + (((chunk % 8) ^ (row & 7)) * 16);
}

// Issues a thread's copies of a tile of ROWS rows: its chunk of rows 0, COPY_ROWS, 2 COPY_ROWS, ...
// below ROWS (COPY_ROWS need not divide ROWS) from `src` (the chunk in row 0) to `dst` (its place
// in row 0). A row is 128 bytes further in its slice, and COPY_ROWS is a multiple of 8, so that
// the swizzle is the same in each of them.
template <int ROWS>
__device__ __forceinline__ void loadTile(unsigned dst, const elem_t* src) {
    static_assert(THREADS % CHUNKS_PER_ROW == 0 && COPY_ROWS % 8 == 0, "every thread copies the same chunk of rows");
    const int row = threadIdx.x / CHUNKS_PER_ROW;
#pragma unroll
    for (int r = 0; r < ROWS; r += COPY_ROWS)
        if (ROWS % COPY_ROWS == 0 || r + row < ROWS)
            cpAsync16(dst + r * 128, src + r * HEAD_DIM);
}

// Where the epilogue stages chunk `chunk` of O's row `row` (the block's rows): that row's place in
// the Q tile, which only the row's own warp (its wgmma long completed) reads.
__device__ __forceinline__ unsigned stagedOffset(int row, int chunk) {
    return sliceOffset(BLOCK_M, row, chunk);
}

// A wgmma shared-memory descriptor: the start address, the leading and the stride byte offsets
// (each in 16-byte units, in bits 0-13, 16-29 and 32-45) and the 128-byte swizzle (bits 62-63;
// base offset 0: every block starts on a 1024-byte boundary). The start address of a k16 step or
// slice is added to the low bits later (shared addresses are below 2^18, so it never carries).
//
// Q (A of S) and K (B of S) are K-major: a block's rows are m (queries) or n (keys), 128 bytes
// (64 values of d) each. In the PTX ISA's canonical K-major 128-byte-swizzle layout,
// ((8,m),(T,2k)):((8T,SBO),(1,T)) in units of values (T = 8 bf16 a 16-byte chunk), a k16 step
// reads two chunks of each row and the rows' 8-row groups are SBO apart: SBO = 8 * 128 = 1024.
// The leading byte offset is not used with a swizzle (the ISA: "assumed 1"; CUTLASS's
// make_gmma_desc<Major::K> writes 1). A k16 step kk is slice kk / 4 at 32 * (kk % 4) bytes into
// its 128-byte rows: the hardware swizzles the address it forms, so those 32 bytes move to the
// chunks c ^ (r % 8) where they were stored.
//
// V (B of O += P V) is N-major: its rows are k (keys) and d (n) runs along them. In the
// canonical MN-major 128-byte-swizzle layout, ((T,8,n),(8,k)):((1,T,LBO),(8T,SBO)), 64 values
// of n lie along a 128-byte row, the k rows of an 8-row group 128 bytes apart, and the ISA
// defines LBO, for a swizzled MN-major layout, as the offset from one (swizzle bytes / 16 = 8)
// chunk-wide column of n to the next, 64 values of d: here the next slice, BLOCK_N rows of 128
// bytes further, LBO = BLOCK_N * 128; and SBO as the offset from one 8 columns of k (8 keys) to
// the next: 8 rows of 128 bytes, SBO = 1024. (CUTLASS's make_gmma_desc<Major::MN> reads them
// the same way off ((W,n),(8,2)): LBO the stride of n's second mode, SBO that of k's.) A k16
// step (16 keys) starts 16 rows, 2048 bytes, further into slice 0.
__device__ __forceinline__ unsigned long long wgmmaDescriptor(unsigned address, unsigned leading, unsigned stride) {
    return static_cast<unsigned long long>((address & 0x3FFFF) >> 4) |
           static_cast<unsigned long long>(leading >> 4) << 16 | static_cast<unsigned long long>(stride >> 4) << 32 |
           1ull << 62;
}

__device__ __forceinline__ void wgmmaFence() {
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmmaCommit() {
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int N>
__device__ __forceinline__ void wgmmaWait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Called after wgmmaWait, so that no read of the accumulators is moved above the wait: an empty
// asm that "writes" each of them, kept after the wait as volatile asm statements keep their order.
template <int TILES>
__device__ __forceinline__ void wgmmaSettled(float (&d)[TILES][4]) {
#pragma unroll
    for (int j = 0; j < TILES; ++j)
#pragma unroll
        for (int r = 0; r < 4; ++r)
            asm volatile("" : "+f"(d[j][r])::"memory");
}

// The accumulator operands of an m64nNk16 wgmma, N / 2 registers a thread in 8-column tiles of 4.
#define WGMMA_REGS_16 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15"
#define WGMMA_REGS_32 WGMMA_REGS_16 ", %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define WGMMA_REGS_64                                                                                                  \
    WGMMA_REGS_32 ", %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, "  \
                  "%51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define WGMMA_TILE(d, j) "+f"(d[j][0]), "+f"(d[j][1]), "+f"(d[j][2]), "+f"(d[j][3])
#define WGMMA_ACC_16(d) WGMMA_TILE(d, 0), WGMMA_TILE(d, 1), WGMMA_TILE(d, 2), WGMMA_TILE(d, 3)
#define WGMMA_ACC_32(d) WGMMA_ACC_16(d), WGMMA_TILE(d, 4), WGMMA_TILE(d, 5), WGMMA_TILE(d, 6), WGMMA_TILE(d, 7)
#define WGMMA_ACC_64(d)                                                                                                \
    WGMMA_ACC_32(d), WGMMA_TILE(d, 8), WGMMA_TILE(d, 9), WGMMA_TILE(d, 10), WGMMA_TILE(d, 11), WGMMA_TILE(d, 12),      \
        WGMMA_TILE(d, 13), WGMMA_TILE(d, 14), WGMMA_TILE(d, 15)

// S (+)= Q K^T for the warpgroup's 64 rows, one k16 step: m64nBLOCK_Nk16, A (Q) and B (K) K-major
// in shared memory (imm-trans-a 0, imm-trans-b 0); `accumulate` 0 overwrites S.
__device__ __forceinline__ void wgmmaScores(float (&d)[BLOCK_N / 8][4], unsigned long long descQ,
                                            unsigned long long descK, int accumulate) {
#if BLOCK_N == 32
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %18, 0;\n"
                 " wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 {" WGMMA_REGS_16
                 "}, %16, %17, p, 1, 1, 0, 0;\n}\n"
                 : WGMMA_ACC_16(d)
                 : "l"(descQ), "l"(descK), "r"(accumulate));
#elif BLOCK_N == 64
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %34, 0;\n"
                 " wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {" WGMMA_REGS_32
                 "}, %32, %33, p, 1, 1, 0, 0;\n}\n"
                 : WGMMA_ACC_32(d)
                 : "l"(descQ), "l"(descK), "r"(accumulate));
#else
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %66, 0;\n"
                 " wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {" WGMMA_REGS_64
                 "}, %64, %65, p, 1, 1, 0, 0;\n}\n"
                 : WGMMA_ACC_64(d)
                 : "l"(descQ), "l"(descK), "r"(accumulate));
#endif
}

// O += P V for the warpgroup's 64 rows, one k16 step (16 keys): m64nHEAD_DIMk16 with A (P) in
// registers, the mma.sync A fragment of the warp's 16 rows, and B (V) N-major in shared memory:
// "d, a, b-desc, scale-d, imm-scale-a, imm-scale-b, imm-trans-b" (no imm-trans-a with A in registers).
__device__ __forceinline__ void wgmmaOutput(float (&d)[HEAD_DIM / 8][4], const unsigned (&a)[4],
                                            unsigned long long descV) {
#if HEAD_DIM == 64
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %37, 0;\n"
                 " wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {" WGMMA_REGS_32
                 "}, {%32, %33, %34, %35}, %36, p, 1, 1, 1;\n}\n"
                 : WGMMA_ACC_32(d)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(descV), "r"(1));
#else
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %69, 0;\n"
                 " wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {" WGMMA_REGS_64
                 "}, {%64, %65, %66, %67}, %68, p, 1, 1, 1;\n}\n"
                 : WGMMA_ACC_64(d)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(descV), "r"(1));
#endif
}
#else
// Issues a thread's copies of a tile of ROWS rows: its chunk of rows 0, COPY_ROWS, 2 COPY_ROWS, ...
// from `src` (the chunk in row 0) to `dst` (the chunk's swizzled place in row 0). COPY_ROWS is a
// multiple of 8, so that the swizzle is the same in each of them.
template <int ROWS>
__device__ __forceinline__ void loadTile(unsigned dst, const elem_t* src) {
    static_assert(THREADS % CHUNKS_PER_ROW == 0 && COPY_ROWS % 8 == 0 && ROWS % COPY_ROWS == 0,
                  "every thread copies the same chunk of every COPY_ROWS-th row");
#pragma unroll
    for (int r = 0; r < ROWS; r += COPY_ROWS)
        cpAsync16(dst + r * ROW_BYTES, src + r * HEAD_DIM);
}

// Where the epilogue stages chunk `chunk` of O's row `row` (the block's rows): that row of the Q
// tile, which only the row's own warp reads.
__device__ __forceinline__ unsigned stagedOffset(int row, int chunk) {
    return swizzle(row, chunk) * 16;
}
#endif

// This thread's cp.async copies, landed, made visible to wgmma's reads of shared memory (the
// async proxy) before the barrier that lets the warpgroup read them; mma.sync needs nothing.
__device__ __forceinline__ void landedForTensorCores() {
#if ALGO == 1
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}

#if ALGO == 1
#define LAUNCH_BOUNDS __launch_bounds__(THREADS, 1)
#else
#define LAUNCH_BOUNDS __launch_bounds__(THREADS)
#endif

extern "C" __global__ void LAUNCH_BOUNDS attention(const __nv_bfloat16* Q, const __nv_bfloat16* K,
                                                   const __nv_bfloat16* V, __nv_bfloat16* O, int S, float scale) {
    // The tiles start on 1024-byte boundaries (the base rounded up, which the problem's
    // SharedMemory allows 1024 bytes for; every tile a multiple of 4 KiB), so that a swizzled
    // chunk's address bits are those of its offset in the tile.
    extern __shared__ __align__(128) unsigned char smemWindow[];
    unsigned char* const smem = smemWindow + ((1024 - (smemAddress(smemWindow) & 1023)) & 1023);
    elem_t* const sQ = reinterpret_cast<elem_t*>(smem);
    elem_t* const sK = sQ + BLOCK_M * HEAD_DIM;
    elem_t* const sV = sK + STAGES * TILE_VALUES;

    const int tid = threadIdx.x;
    const int warp = tid / 32, lane = tid % 32;
#if CAUSAL
    const int qBlock = gridDim.x - 1 - blockIdx.x; // the longest rows first
    const int kBlocks = ((qBlock + 1) * BLOCK_M + BLOCK_N - 1) / BLOCK_N;
    const int warpFirst = qBlock * BLOCK_M + warp * WARP_ROWS; // the warp's first query row
#else
    const int qBlock = blockIdx.x;
    const int kBlocks = S / BLOCK_N;
#endif
    const long long head = static_cast<long long>(blockIdx.y) * S * HEAD_DIM;
    const long long rows0 = static_cast<long long>(qBlock) * BLOCK_M * HEAD_DIM;
    const elem_t* const gQ = reinterpret_cast<const elem_t*>(Q) + head + rows0;
    const elem_t* const gK = reinterpret_cast<const elem_t*>(K) + head;
    const elem_t* const gV = reinterpret_cast<const elem_t*>(V) + head;
    elem_t* const gO = reinterpret_cast<elem_t*>(O) + head + rows0;

    // The thread's chunk in the tiles' copies: in global memory and, swizzled, in shared memory.
    // The offsets within a head are unsigned (a head's S * HEAD_DIM values are far below 2^32):
    // the compiler can then not split a pointer plus (block offset + copySrc) into a pointer
    // plus copySrc, kept in two registers for the whole loop, plus the block offset.
    const unsigned copySrc = (tid / CHUNKS_PER_ROW) * HEAD_DIM + (tid % CHUNKS_PER_ROW) * 8;
#if ALGO == 1
    // A slice of a K or V tile is BLOCK_N rows, of the Q tile BLOCK_M.
    const unsigned copyDst = sliceOffset(BLOCK_N, tid / CHUNKS_PER_ROW, tid % CHUNKS_PER_ROW);

    const unsigned qTile = smemAddress(sQ);
    loadTile<BLOCK_M>(qTile + sliceOffset(BLOCK_M, tid / CHUNKS_PER_ROW, tid % CHUNKS_PER_ROW), gQ + copySrc);
#else
    const unsigned copyDst = swizzle(tid / CHUNKS_PER_ROW, tid % CHUNKS_PER_ROW) * 16;

    const unsigned qTile = smemAddress(sQ);
    loadTile<BLOCK_M>(qTile + copyDst, gQ + copySrc);
#endif
    cpAsyncCommit();
    loadTile<BLOCK_N>(smemAddress(sK) + copyDst, gK + copySrc);
#if STAGES == 2
    loadTile<BLOCK_N>(smemAddress(sV) + copyDst, gV + copySrc);
#endif
    cpAsyncCommit();

#if ALGO == 1
    // The warpgroup's 64 rows of Q, as the A operand of S = Q K^T (K-major; see wgmmaDescriptor).
    const unsigned long long qDesc = wgmmaDescriptor(qTile + (warp / 4) * 64 * 128, 16, 1024);
#else
    // The lanes' ldmatrix addresses at k 0 (Q, K) or column 0 (V), its rows and swizzled chunks.
    // A k16 step kk is chunk 2 kk + lane / 16 (Q) or 2 kk + lane / 8 % 2 (K), an 8-column step d
    // of V chunk d + lane / 16: the step's bits are XORed into the address, as the swizzle XORs the
    // row's into the chunk's. Further rows are an offset added: whole groups of 8 rows.
    const unsigned qLane = qTile + (warp * WARP_ROWS + lane % 16) * ROW_BYTES + ((lane / 16) ^ (lane & 7)) * 16;
    const unsigned kLane = (lane % 8 + (lane / 16) * 8) * ROW_BYTES + (((lane / 8) % 2) ^ (lane & 7)) * 16;
    const unsigned vLane = (lane % 16) * ROW_BYTES + ((lane / 16) ^ (lane & 7)) * 16;
#endif

#if Q_REGS
    // The warp's Q fragments, per 16 rows and k16 step: lanes 0-15 address rows 0-15 at k 0-7,
    // lanes 16-31 the same rows at k 8-15 (a0-a3 of the A fragment).
    unsigned qFrag[FRAGS_M][HEAD_DIM / 16][4];
    cpAsyncWait<1>();
    __syncthreads();
#pragma unroll
    for (int i = 0; i < FRAGS_M; ++i)
#pragma unroll
        for (int kk = 0; kk < HEAD_DIM / 16; ++kk)
            ldmatrixX4(qFrag[i][kk], qLane, kk * 32, i * 16 * ROW_BYTES);
#endif

    // The accumulators: per 16-row tile and 8 columns, rows lane/4 (values 0, 1) and lane/4 + 8
    // (2, 3), columns 2 * (lane % 4) and the next. Per tile, the running max and sum of those two rows.
    float o[FRAGS_M][HEAD_DIM / 8][4];
    float rowMax[FRAGS_M][2], rowSum[FRAGS_M][2];
#pragma unroll
    for (int i = 0; i < FRAGS_M; ++i) {
#pragma unroll
        for (int d = 0; d < HEAD_DIM / 8; ++d)
#pragma unroll
            for (int r = 0; r < 4; ++r)
                o[i][d][r] = 0.0f;
        rowMax[i][0] = rowMax[i][1] = negInf();
        rowSum[i][0] = rowSum[i][1] = 0.0f;
    }
    const float scaleLog2 = scale * 1.4426950408889634f; // exp(scale * x) = exp2(scaleLog2 * x)

    for (int kb = 0; kb < kBlocks; ++kb) {
        const int stage = STAGES == 2 ? kb & 1 : 0;
        const unsigned kTile = smemAddress(sK + stage * TILE_VALUES);
        const unsigned vTile = smemAddress(sV + stage * TILE_VALUES);
#if CAUSAL && ALGO == 1
        // The wgmma takes the whole warpgroup: it skips a key block after all of its 64 rows.
        const int keyFirst = kb * BLOCK_N;
        const bool skip = keyFirst > qBlock * BLOCK_M + (warp / 4) * 64 + 63;
        const bool crosses = keyFirst + BLOCK_N - 1 > warpFirst;
#elif CAUSAL
        const int keyFirst = kb * BLOCK_N;
        const bool skip = keyFirst > warpFirst + WARP_ROWS - 1; // every key after every row of the warp
        const bool crosses = keyFirst + BLOCK_N - 1 > warpFirst;
#else
        const bool skip = false;
#endif

        // This block's K (STAGES 2: and V) has landed, and every warp is done with the buffers
        // refilled next: STAGES 2's other stage (read in the last iteration), STAGES 1's V tile.
        cpAsyncWait<0>();
        landedForTensorCores();
        __syncthreads();
#if STAGES == 2
        if (kb + 1 < kBlocks) {
            const int next = (stage ^ 1) * TILE_VALUES;
            const unsigned from = static_cast<unsigned>(kb + 1) * TILE_VALUES + copySrc;
            loadTile<BLOCK_N>(smemAddress(sK + next) + copyDst, gK + from);
            loadTile<BLOCK_N>(smemAddress(sV + next) + copyDst, gV + from);
        }
#else
        loadTile<BLOCK_N>(vTile + copyDst, gV + (static_cast<unsigned>(kb) * TILE_VALUES + copySrc));
#endif
        cpAsyncCommit();

        // S = Q K^T for the warp's rows and the block's keys, laid out as the O accumulators.
        float s[FRAGS_M][BLOCK_N / 8][4];
#if ALGO == 1
        if (!skip) {
            // k16 step kk: slice kk / 4 of Q's and K's tiles, 32 bytes a step along their rows.
            const unsigned long long kDesc = wgmmaDescriptor(kTile, 16, 1024);
            wgmmaFence(); // S's registers were last read by the softmax
#pragma unroll
            for (int kk = 0; kk < HEAD_DIM / 16; ++kk) {
                const unsigned qStep = ((kk / 4) * BLOCK_M * 128 + (kk % 4) * 32) >> 4;
                const unsigned kStep = ((kk / 4) * BLOCK_N * 128 + (kk % 4) * 32) >> 4;
                wgmmaScores(s[0], qDesc + qStep, kDesc + kStep, kk > 0);
            }
            wgmmaCommit();
            wgmmaWait<0>();
            wgmmaSettled(s[0]);
        }
#else
        if (!skip) {
#pragma unroll
            for (int i = 0; i < FRAGS_M; ++i)
#pragma unroll
                for (int j = 0; j < BLOCK_N / 8; ++j)
#pragma unroll
                    for (int r = 0; r < 4; ++r)
                        s[i][j][r] = 0.0f;
#pragma unroll
            for (int kk = 0; kk < HEAD_DIM / 16; ++kk) {
                unsigned a[FRAGS_M][4];
#pragma unroll
                for (int i = 0; i < FRAGS_M; ++i) {
#if Q_REGS
#pragma unroll
                    for (int r = 0; r < 4; ++r)
                        a[i][r] = qFrag[i][kk][r];
#else
                    ldmatrixX4(a[i], qLane, kk * 32, i * 16 * ROW_BYTES);
#endif
                }
#pragma unroll
                for (int j = 0; j < BLOCK_N / 8; j += 2) {
                    // K's rows are n: matrices (n0-7, k0-7) (n0-7, k8-15) (n8-15, k0-7) (n8-15, k8-15)
                    unsigned b[4];
                    ldmatrixX4(b, kTile + kLane, kk * 32, j * 8 * ROW_BYTES);
#pragma unroll
                    for (int i = 0; i < FRAGS_M; ++i) {
                        mma16816(s[i][j], a[i], b[0], b[1]);
                        mma16816(s[i][j + 1], a[i], b[2], b[3]);
                    }
                }
            }
        }
#endif

#if STAGES == 1
        // V has landed, and every warp is done with K: the next block's K goes there.
        cpAsyncWait<0>();
        landedForTensorCores();
        __syncthreads();
        if (kb + 1 < kBlocks)
            loadTile<BLOCK_N>(kTile + copyDst, gK + (static_cast<unsigned>(kb + 1) * TILE_VALUES + copySrc));
        cpAsyncCommit();
#endif
        if (skip)
            continue;

#if CAUSAL
        if (crosses) {
#pragma unroll
            for (int i = 0; i < FRAGS_M; ++i)
#pragma unroll
                for (int j = 0; j < BLOCK_N / 8; ++j)
#pragma unroll
                    for (int r = 0; r < 4; ++r) {
                        const int query = warpFirst + i * 16 + lane / 4 + (r / 2) * 8;
                        const int key = keyFirst + j * 8 + (lane % 4) * 2 + r % 2;
                        if (key > query)
                            s[i][j][r] = negInf();
                    }
        }
#endif

        // The online softmax, per row (h 0: row lane/4 of the tile, h 1: row lane/4 + 8). P goes
        // to bf16 pairs as it is made, p[i][j][h] the pair of row h in tile j, so that the scores'
        // registers are free before P V.
        unsigned p[FRAGS_M][BLOCK_N / 8][2];
#pragma unroll
        for (int i = 0; i < FRAGS_M; ++i) {
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                float m = rowMax[i][h];
#pragma unroll
                for (int j = 0; j < BLOCK_N / 8; ++j)
                    m = fmaxf(m, fmaxf(s[i][j][2 * h], s[i][j][2 * h + 1]));
                m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 1));
                m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 2));
                // A row with no key yet keeps -inf: subtract 0 then, so that its exp2 gives 0, not NaN.
                const float mScaled = m == negInf() ? 0.0f : m * scaleLog2;
                const float alpha = exp2Approx(rowMax[i][h] * scaleLog2 - mScaled);
                rowMax[i][h] = m;
                float sum = 0.0f;
#pragma unroll
                for (int j = 0; j < BLOCK_N / 8; ++j) {
                    const float p0 = exp2Approx(fmaf(s[i][j][2 * h], scaleLog2, -mScaled));
                    const float p1 = exp2Approx(fmaf(s[i][j][2 * h + 1], scaleLog2, -mScaled));
                    sum += p0 + p1;
                    p[i][j][h] = pack2(p0, p1);
                }
                // The lane's part of the row's sum; the quad's parts meet once, at the end.
                rowSum[i][h] = rowSum[i][h] * alpha + sum;
#pragma unroll
                for (int d = 0; d < HEAD_DIM / 8; ++d) {
                    o[i][d][2 * h] *= alpha;
                    o[i][d][2 * h + 1] *= alpha;
                }
            }
        }

#if ALGO == 1
        // O += P V, per k16 step kk over the block's keys: the A fragment of P's columns 16 kk to
        // 16 kk + 15 (each warp its 16 rows, as mma.sync's) is the pairs of its tiles 2 kk (a0: row
        // lane/4, a1: row lane/4 + 8) and 2 kk + 1 (a2, a3); B is V's keys 16 kk to 16 kk + 15,
        // 16 rows of 128 bytes a step into the slices (see wgmmaDescriptor).
        const unsigned long long vDesc = wgmmaDescriptor(vTile, BLOCK_N * 128, 1024);
        wgmmaFence(); // O was rescaled and P written by ordinary instructions
#pragma unroll
        for (int kk = 0; kk < BLOCK_N / 16; ++kk) {
            const unsigned a[4] = {p[0][2 * kk][0], p[0][2 * kk][1], p[0][2 * kk + 1][0], p[0][2 * kk + 1][1]};
            wgmmaOutput(o[0], a, vDesc + ((kk * 16 * 128) >> 4));
        }
        wgmmaCommit();
        wgmmaWait<0>();
        wgmmaSettled(o[0]);
#else
        // O += P V, per 16 columns of V (d, d + 1) and k16 step kk over the block's keys: the A
        // fragment of P's columns 16 kk to 16 kk + 15 is the pairs of its tiles 2 kk (a0: row
        // lane/4, a1: row lane/4 + 8) and 2 kk + 1 (a2, a3).
#pragma unroll
        for (int d = 0; d < HEAD_DIM / 8; d += 2) {
#pragma unroll
            for (int kk = 0; kk < BLOCK_N / 16; ++kk) {
                // V's rows are k: matrices (k0-7, n0-7) (k8-15, n0-7) (k0-7, n8-15) (k8-15, n8-15), transposed
                unsigned b[4];
                ldmatrixX4Trans(b, vTile + vLane, d * 16, kk * 16 * ROW_BYTES);
#pragma unroll
                for (int i = 0; i < FRAGS_M; ++i) {
                    const unsigned a[4] = {p[i][2 * kk][0], p[i][2 * kk][1], p[i][2 * kk + 1][0], p[i][2 * kk + 1][1]};
                    mma16816(o[i][d], a, b[0], b[1]);
                    mma16816(o[i][d + 1], a, b[2], b[3]);
                }
            }
        }
#endif
    }

    // O / l, rounded to bf16, into the warp's own rows of the Q tile (no other warp reads them),
    // then out by whole rows: a warp's 32 lanes store 512 contiguous bytes at a time.
    __syncwarp();
#pragma unroll
    for (int i = 0; i < FRAGS_M; ++i) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            float l = rowSum[i][h];
            l += __shfl_xor_sync(0xffffffffu, l, 1);
            l += __shfl_xor_sync(0xffffffffu, l, 2);
            const float inv = l > 0.0f ? 1.0f / l : 0.0f;
            const int row = warp * WARP_ROWS + i * 16 + lane / 4 + h * 8;
#pragma unroll
            for (int d = 0; d < HEAD_DIM / 8; ++d)
                *reinterpret_cast<unsigned*>(smem + stagedOffset(row, d) + (lane % 4) * 4) =
                    pack2(o[i][d][2 * h] * inv, o[i][d][2 * h + 1] * inv);
        }
    }
    __syncwarp();
#pragma unroll
    for (int c = lane; c < WARP_ROWS * CHUNKS_PER_ROW; c += 32) {
        const int row = warp * WARP_ROWS + c / CHUNKS_PER_ROW, chunk = c % CHUNKS_PER_ROW;
        *reinterpret_cast<uint4*>(gO + row * HEAD_DIM + chunk * 8) =
            *reinterpret_cast<const uint4*>(smem + stagedOffset(row, chunk));
    }
}
