// C = A * B on tensor cores, bf16 or fp16 inputs (fp16 with -DHGEMM_FP16), fp32 accumulation,
// C in the input type; ALGO 2 also takes FP8 inputs (below). A is M x K and B is K x N, both
// row-major (B_TRANS=1: B is N x K, row-major, as nn.Linear keeps its weight). For ALGO 0 and 1,
// N and K are multiples of the block tile (the space's conditions say so) and M is any size (rows
// past M load as zeros and are not stored, so a decode step's M = 1 runs as one ragged tile row).
// ALGO 2 takes any M, any N that is a multiple of 8 and any K whose rows are whole 16 bytes: TMA
// fills what lies past an edge with zeros, and the stores past M and N are skipped.
//
// One block computes a BLOCK_M x BLOCK_N tile of C with WARPS_M x WARPS_N warps, each a
// (BLOCK_M / WARPS_M) x (BLOCK_N / WARPS_N) tile of mma.sync.m16n8k16 instructions. K is walked
// in BLOCK_K slices through a STAGES-deep ring of shared-memory buffers that cp.async fills
// ahead of the math; fragments come from shared memory by ldmatrix, the 16-byte chunks of each
// row XOR-swizzled so that the eight rows an ldmatrix reads fall in eight different bank groups.
// Blocks are rasterised in groups of GROUP_M tile rows, so that neighbouring blocks share A and B
// tiles in L2. sm_80 and later.
//
// ALGO 1 is Hopper's: one warpgroup (128 threads) per 64 rows of the block tile issues
// wgmma.mma_async m64nBLOCK_Nk16 straight from shared memory, A and B (B_TRANS: K-major) in
// 64-wide K slices of 128-byte rows laid out in the 128-byte swizzle wgmma reads, filled by
// cp.async STAGES deep; one wgmma group stays in flight while the next slice is issued. It needs
// sm_90a (-arch sm_90a among the problem's CompilerOptions), B_TRANS and BLOCK_K 64.
//
// ALGO 2 is Hopper's as the fastest GEMMs are built: warp-specialised. A producer warpgroup's
// first thread loads A and B slices with TMA (cp.async.bulk.tensor through mapA and mapB, tensor
// maps of boxes of 64 rows of 128 bytes in the 128-byte swizzle that the worker builds from the
// problem's TensorMap arguments) into a STAGES-deep ring, each stage guarded by two mbarriers
// (full: the bytes have landed; empty: every consumer's wgmma that read it has completed);
// BLOCK_M / 64 consumer warpgroups each compute 64 x BLOCK_N of C with wgmma. Same needs as ALGO 1.
// The grid decides persistence: a block walks tiles blockIdx.x, + gridDim.x, ... (the problem's
// TILES parameter: tiles a block, so a grid of about the SM count), and the producer loads the
// next tile's slices while the consumers store the last one. STORE 1 stages each consumer's C
// tile in shared memory with stmatrix and writes whole rows with 16-byte stores (STORE 0: 4-byte
// stores straight from the accumulators). With HGEMM_FP8 (e4m3) or HGEMM_FP8_E5M2, A and B are
// FP8, wgmma runs k32 over the same 128-byte rows, and C (bf16) is scaled by scaleA * scaleB, the
// per-tensor scales of FP8 inference.

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
#ifndef ALGO
#define ALGO 0
#endif
#ifndef STORE
#define STORE 0
#endif

// FP8 inputs (HGEMM_FP8: e4m3; HGEMM_FP8_E5M2: e5m2), ALGO 2 only: C is bf16, scaled by scaleA * scaleB.
#if defined(HGEMM_FP8) || defined(HGEMM_FP8_E5M2)
#define HGEMM_8BIT 1
typedef unsigned char in_t;
#define EPILOGUE_SCALE scale
#if ALGO != 2
#error "FP8 inputs need ALGO 2"
#endif
#else
#define HGEMM_8BIT 0
typedef unsigned short in_t;
#define EPILOGUE_SCALE 1.0f
#endif
#define K_SLICE (128 / static_cast<int>(sizeof(in_t))) // K values in a 128-byte row of a wgmma slice

#if ALGO == 1
#define THREADS (BLOCK_M / 64 * 128)
#elif ALGO == 2
#define THREADS ((BLOCK_M / 64 + 1) * 128)
#else
#define THREADS (WARPS_M * WARPS_N * 32)
#endif
#define WARP_TILE_M (BLOCK_M / WARPS_M)
#define WARP_TILE_N (BLOCK_N / WARPS_N)
#define FRAGS_M (WARP_TILE_M / 16)
#define FRAGS_N (WARP_TILE_N / 8)

typedef unsigned short elem_t; // the bits of a bf16 or fp16 value (C's; A's and B's are in_t)

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
// 16 bytes from `src` when `valid`, else 16 zero bytes (nothing is read: cp.async's source size 0).
__device__ __forceinline__ void cpAsync16OrZero(unsigned dst, const void* src, bool valid) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 16 : 0));
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


// A TMA tensor map (CUtensorMap: 128 opaque bytes), built by the host and passed by value.
struct __align__(64) TensorMap {
    unsigned long long bits[16];
};

#if ALGO >= 1
// A wgmma shared-memory descriptor of a K-major tile of 128-byte rows in the 128-byte swizzle:
// 8-row groups 1024 bytes apart; the tile starts on a 1024-byte boundary.
__device__ __forceinline__ unsigned long long wgmmaDescriptor(unsigned address) {
    unsigned long long d = (address & 0x3FFFF) >> 4;
    d |= 1ull << 16;                         // leading byte offset (unused with this swizzle)
    d |= static_cast<unsigned long long>(1024 >> 4) << 32; // stride byte offset: 8 rows of 128 bytes
    d |= 1ull << 62;                         // 128-byte swizzle
    return d;
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

__device__ __forceinline__ void mbarInit(unsigned long long* bar, int count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smemAddress(bar)), "r"(count) : "memory");
}
// One arrival that also expects `bytes` of TMA transfers before the phase completes.
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
// TMA: the box at coordinates (c0, c1) of `map` into shared memory at `dst`; completes on `bar`.
__device__ __forceinline__ void tmaLoad2d(void* dst, const TensorMap* map, int c0, int c1, unsigned long long* bar) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, "
                 "%3}], [%4];\n" ::"r"(smemAddress(dst)),
                 "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1), "r"(smemAddress(bar))
                 : "memory");
}

// The wgmma of this build: k16 for 16-bit inputs, k32 for 8-bit ones (whose instruction takes no
// transpose flags: both operands are K-major, as these tiles are).
#if defined(HGEMM_FP8_E5M2)
#define WGMMA_KIND "k32.f32.e5m2.e5m2"
#define WGMMA_SCALES ", 1, 1"
#elif defined(HGEMM_FP8)
#define WGMMA_KIND "k32.f32.e4m3.e4m3"
#define WGMMA_SCALES ", 1, 1"
#elif defined(HGEMM_FP16)
#define WGMMA_KIND "k16.f32.f16.f16"
#define WGMMA_SCALES ", 1, 1, 0, 0"
#else
#define WGMMA_KIND "k16.f32.bf16.bf16"
#define WGMMA_SCALES ", 1, 1, 0, 0"
#endif
#if BLOCK_N == 64
__device__ __forceinline__ void wgmmaTile(float (&d)[32], unsigned long long descA, unsigned long long descB, int accumulate) {
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %34, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64" WGMMA_KIND " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p" WGMMA_SCALES ";\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
                 : "l"(descA), "l"(descB), "r"(accumulate));
}
#endif
#if BLOCK_N == 128
__device__ __forceinline__ void wgmmaTile(float (&d)[64], unsigned long long descA, unsigned long long descB, int accumulate) {
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %66, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128" WGMMA_KIND " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p" WGMMA_SCALES ";\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
                 : "l"(descA), "l"(descB), "r"(accumulate));
}
#endif
#if BLOCK_N == 256
__device__ __forceinline__ void wgmmaTile(float (&d)[128], unsigned long long descA, unsigned long long descB, int accumulate) {
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %130, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n256" WGMMA_KIND " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, %128, %129, p" WGMMA_SCALES ";\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
                 : "l"(descA), "l"(descB), "r"(accumulate));
}
#endif
#endif

// Grouped rasterisation: GROUP_M tile rows walk the tile columns together. Tile `t` of the
// sequence as (tile row, tile column).
__device__ __forceinline__ int2 tileOf(int t, int tilesM, int tilesN) {
    const int inGroup = GROUP_M * tilesN;
    const int firstM = (t / inGroup) * GROUP_M;
    const int groupRows = min(tilesM - firstM, GROUP_M);
    return make_int2(firstM + (t % inGroup) % groupRows, (t % inGroup) / groupRows);
}

// mapA and mapB are read by ALGO 2 only; scaleA and scaleB (FP8 builds only) multiply C.
extern "C" __global__ void __launch_bounds__(THREADS, 1)
    hgemm(int M, int N, int K, const in_t* __restrict__ A, const in_t* __restrict__ B, elem_t* __restrict__ C,
          const __grid_constant__ TensorMap mapA, const __grid_constant__ TensorMap mapB
#if HGEMM_8BIT
          , float scaleA, float scaleB
#endif
    ) {
    extern __shared__ __align__(128) unsigned char smem[];

#if ALGO == 2
    const int tilesM = (M + BLOCK_M - 1) / BLOCK_M, tilesN = (N + BLOCK_N - 1) / BLOCK_N; // ragged edges
#else
    const int tilesM = (M + BLOCK_M - 1) / BLOCK_M, tilesN = N / BLOCK_N;
#endif
    const int pid = blockIdx.x;
#if ALGO != 2
    const int2 own = tileOf(pid, tilesM, tilesN);
    const int tileM = own.x, tileN = own.y;
#endif

#if ALGO == 2
    // One producer warpgroup (one thread of it issues the TMA loads) and BLOCK_M / 64 consumer
    // warpgroups, each a 64 x BLOCK_N tile of wgmma. A stage is full when its TMA bytes have landed
    // (full[s]: one arrival with the byte count), and free again when every consumer's wgmma
    // group that read it has completed (empty[s]: one arrival per consumer warpgroup).
    // The block walks tiles blockIdx.x, blockIdx.x + gridDim.x, ... (a grid smaller than the
    // tile count makes it persistent), and the producer runs on into the next tile's slices while
    // the consumers store the last one: the ring's slices are counted across tiles.
    unsigned char* const base = smem + ((1024 - (smemAddress(smem) & 1023)) & 1023);
    constexpr int aStageBytes = BLOCK_M * 128, bStageBytes = BLOCK_N * 128;
    constexpr int consumers = BLOCK_M / 64;
    constexpr int cBytes = STORE ? 64 * BLOCK_N * 2 : 0; // a consumer's C tile staged for 16-byte stores
    unsigned char* const sA = base;
    unsigned char* const sB = base + STAGES * aStageBytes;
    unsigned char* const sC = sB + STAGES * bStageBytes;
    unsigned long long* const full = reinterpret_cast<unsigned long long*>(sC + consumers * cBytes);
    unsigned long long* const empty = full + STAGES;
    const int tid = threadIdx.x;
    const int wg = tid / 128;
    const int kTiles = (K + K_SLICE - 1) / K_SLICE; // TMA fills what lies past M, N or K with zeros
    const int numTiles = tilesM * tilesN;
    if (tid == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbarInit(full + s, 1);
            mbarInit(empty + s, consumers);
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();

    // With two consumer warpgroups the producer keeps 40 registers a thread and hands the rest
    // to the consumers' accumulators (168 each at launch, 232 after): setmaxnreg moves registers
    // within the block only. One consumer has 240 from the start; four need none moved.
    constexpr bool moveRegisters = consumers == 2;
    if (wg == 0) {
        if (moveRegisters)
            asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n" ::: "memory");
        if (tid == 0) {
            int it = 0; // slices issued so far, over every tile of this block
            for (int tile = pid; tile < numTiles; tile += gridDim.x) {
                const int2 t = tileOf(tile, tilesM, tilesN);
                for (int kt = 0; kt < kTiles; ++kt, ++it) {
                    const int stage = it % STAGES;
                    if (it >= STAGES)
                        mbarWait(empty + stage, (it / STAGES - 1) & 1);
                    mbarArriveExpectTx(full + stage, aStageBytes + bStageBytes);
#pragma unroll
                    for (int i = 0; i < BLOCK_M / 64; ++i)
                        tmaLoad2d(sA + stage * aStageBytes + i * 8192, &mapA, kt * K_SLICE, t.x * BLOCK_M + i * 64, full + stage);
#pragma unroll
                    for (int i = 0; i < BLOCK_N / 64; ++i)
                        tmaLoad2d(sB + stage * bStageBytes + i * 8192, &mapB, kt * K_SLICE, t.y * BLOCK_N + i * 64, full + stage);
                }
            }
        }
        return;
    }

    if (moveRegisters)
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::: "memory");
    const int cw = wg - 1, warpInGroup = (tid % 128) / 32, lane = tid % 32;
#if HGEMM_8BIT
    const float scale = scaleA * scaleB;
#endif
    float acc[BLOCK_N / 2];
    int it = 0;
    for (int tile = pid; tile < numTiles; tile += gridDim.x) {
        const int2 t = tileOf(tile, tilesM, tilesN);
        for (int kt = 0; kt < kTiles; ++kt, ++it) {
            const int stage = it % STAGES;
            mbarWait(full + stage, (it / STAGES) & 1);
            const unsigned a = smemAddress(sA + stage * aStageBytes + cw * 8192);
            const unsigned b = smemAddress(sB + stage * bStageBytes);
            wgmmaFence();
#pragma unroll
            for (int kk = 0; kk < 4; ++kk) // 32 bytes of K a step (k16 of 16-bit values, k32 of 8-bit ones)
                wgmmaTile(acc, wgmmaDescriptor(a + kk * 32), wgmmaDescriptor(b + kk * 32), kt > 0 || kk > 0);
            wgmmaCommit();
            wgmmaWait<1>(); // the previous slice's group is done: its stage may be refilled
            if (kt > 0 && tid % 128 == 0)
                mbarArrive(empty + (it - 1) % STAGES);
        }
        wgmmaWait<0>();
        if (tid % 128 == 0)
            mbarArrive(empty + (it - 1) % STAGES);

        const int row0 = t.x * BLOCK_M + cw * 64;
#if STORE
        // stmatrix puts the accumulators' 8 x 8 blocks into this consumer's staging tile (rows of
        // BLOCK_N * 2 bytes, 16-byte chunks XOR-swizzled by row), then each warp copies whole rows
        // out with 16-byte stores.
        unsigned char* const myC = sC + cw * cBytes;
        constexpr int chunksPerRow = BLOCK_N / 8;
        const int mRow = warpInGroup * 16 + (lane % 8) + ((lane / 8) % 2) * 8; // the row this lane addresses
#pragma unroll
        for (int j = 0; j < BLOCK_N / 8; j += 2) {
            // matrices: (rows 0-7, cols j), (rows 8-15, cols j), (rows 0-7, cols j+1), (rows 8-15, cols j+1)
            const int chunk = j + lane / 16;
            const unsigned address = smemAddress(myC + mRow * BLOCK_N * 2 + ((chunk ^ (mRow & 7)) * 16));
            asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(address),
                         "r"(pack2(EPILOGUE_SCALE * acc[j * 4], EPILOGUE_SCALE * acc[j * 4 + 1])),
                         "r"(pack2(EPILOGUE_SCALE * acc[j * 4 + 2], EPILOGUE_SCALE * acc[j * 4 + 3])),
                         "r"(pack2(EPILOGUE_SCALE * acc[j * 4 + 4], EPILOGUE_SCALE * acc[j * 4 + 5])),
                         "r"(pack2(EPILOGUE_SCALE * acc[j * 4 + 6], EPILOGUE_SCALE * acc[j * 4 + 7]))
                         : "memory");
        }
        asm volatile("bar.sync %0, 128;\n" ::"r"(cw + 1) : "memory");
#pragma unroll
        for (int c = tid % 128; c < 64 * chunksPerRow; c += 128) {
            const int row = c / chunksPerRow, chunk = c % chunksPerRow;
            const uint4 v = *reinterpret_cast<const uint4*>(myC + row * BLOCK_N * 2 + ((chunk ^ (row & 7)) * 16));
            if (row0 + row < M && t.y * BLOCK_N + chunk * 8 < N) // N is a multiple of 8
                *reinterpret_cast<uint4*>(C + static_cast<long long>(row0 + row) * N + t.y * BLOCK_N + chunk * 8) = v;
        }
        asm volatile("bar.sync %0, 128;\n" ::"r"(cw + 1) : "memory"); // read out before the next tile's stmatrix
#else
        const int rowC = row0 + warpInGroup * 16 + lane / 4, colC = t.y * BLOCK_N + (lane % 4) * 2;
        elem_t* gC = C + static_cast<long long>(rowC) * N + colC;
        const bool fullTile = t.x * BLOCK_M + BLOCK_M <= M && t.y * BLOCK_N + BLOCK_N <= N;
#pragma unroll
        for (int j = 0; j < BLOCK_N / 8; ++j) {
            const bool col = fullTile || colC + j * 8 < N; // N is even: a pair is in or out
            if (fullTile || (col && rowC < M))
                *reinterpret_cast<unsigned*>(gC + j * 8) = pack2(EPILOGUE_SCALE * acc[j * 4], EPILOGUE_SCALE * acc[j * 4 + 1]);
            if (fullTile || (col && rowC + 8 < M))
                *reinterpret_cast<unsigned*>(gC + 8 * static_cast<long long>(N) + j * 8) =
                    pack2(EPILOGUE_SCALE * acc[j * 4 + 2], EPILOGUE_SCALE * acc[j * 4 + 3]);
        }
#endif
    }
#elif ALGO == 1
    // The swizzle is of address bits: the stages start on a 1024-byte boundary.
    unsigned char* const base = smem + ((1024 - (smemAddress(smem) & 1023)) & 1023);
    constexpr int aStageBytes = BLOCK_M * 128, bStageBytes = BLOCK_N * 128;
    unsigned char* const sA = base;
    unsigned char* const sB = base + STAGES * aStageBytes;
    const int tid = threadIdx.x;
    const int wg = tid / 128, warpInGroup = (tid % 128) / 32, lane = tid % 32;
    const elem_t* gA = A + static_cast<long long>(tileM) * BLOCK_M * K;
    const elem_t* gB = B + static_cast<long long>(tileN) * BLOCK_N * K;

    // Row r's 16-byte chunk c goes to chunk c ^ (r % 8) of its 128-byte row.
    auto loadStage = [&](int stage, int kt) {
        const unsigned a0 = smemAddress(sA + stage * aStageBytes);
#pragma unroll
        for (int c = tid; c < BLOCK_M * 8; c += THREADS) {
            const int row = c / 8, chunk = c % 8;
            const bool inside = tileM * BLOCK_M + row < M;
            cpAsync16OrZero(a0 + row * 128 + ((chunk ^ (row & 7)) * 16),
                            gA + static_cast<long long>(inside ? row : 0) * K + kt * 64 + chunk * 8, inside);
        }
        const unsigned b0 = smemAddress(sB + stage * bStageBytes);
#pragma unroll
        for (int c = tid; c < BLOCK_N * 8; c += THREADS) {
            const int row = c / 8, chunk = c % 8;
            cpAsync16(b0 + row * 128 + ((chunk ^ (row & 7)) * 16), gB + static_cast<long long>(row) * K + kt * 64 + chunk * 8);
        }
    };

    float acc[BLOCK_N / 2];
#pragma unroll
    for (int i = 0; i < BLOCK_N / 2; ++i)
        acc[i] = 0.0f;

    // Slices are loaded STAGES - 2 ahead: the stage refilled was read two slices ago, and one
    // wgmma group (the last slice's) may still be reading.
    const int kTiles = K / 64;
#pragma unroll
    for (int s = 0; s < STAGES - 2; ++s) {
        if (s < kTiles)
            loadStage(s, s);
        cpAsyncCommit();
    }
    for (int kt = 0; kt < kTiles; ++kt) {
        cpAsyncWait<(STAGES >= 3 ? STAGES - 3 : 0)>();
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); // cp.async's writes, seen by wgmma
        __syncthreads();
        const int next = kt + STAGES - 2;
        if (next < kTiles)
            loadStage(next % STAGES, next);
        cpAsyncCommit();

        const int stage = kt % STAGES;
        const unsigned a = smemAddress(sA + stage * aStageBytes + wg * 64 * 128);
        const unsigned b = smemAddress(sB + stage * bStageBytes);
        wgmmaFence();
#pragma unroll
        for (int kk = 0; kk < 4; ++kk) // k16 steps: 32 bytes further along the swizzled rows
            wgmmaTile(acc, wgmmaDescriptor(a + kk * 32), wgmmaDescriptor(b + kk * 32), 1);
        wgmmaCommit();
        wgmmaWait<1>();
    }
    wgmmaWait<0>();

    // The accumulators of m64nN: per 8 columns j, rows lane/4 and lane/4 + 8 of the warp's 16.
    const int rowC = tileM * BLOCK_M + wg * 64 + warpInGroup * 16 + lane / 4;
    elem_t* gC = C + static_cast<long long>(rowC) * N + tileN * BLOCK_N + (lane % 4) * 2;
#pragma unroll
    for (int j = 0; j < BLOCK_N / 8; ++j) {
        if (rowC < M)
            *reinterpret_cast<unsigned*>(gC + j * 8) = pack2(acc[j * 4], acc[j * 4 + 1]);
        if (rowC + 8 < M)
            *reinterpret_cast<unsigned*>(gC + 8 * static_cast<long long>(N) + j * 8) =
                pack2(acc[j * 4 + 2], acc[j * 4 + 3]);
    }
#else
    elem_t* const sA = reinterpret_cast<elem_t*>(smem);
    elem_t* const sB = sA + STAGES * A_STAGE_CHUNKS * 8;

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
            const bool inside = tileM * BLOCK_M + row < M;
            cpAsync16OrZero(a0 + swizzle(row, chunk, A_CHUNKS_PER_ROW) * 16,
                            gA + static_cast<long long>(inside ? row : 0) * K + kt * BLOCK_K + chunk * 8, inside);
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
    const int rowsLeft = M - (tileM * BLOCK_M + warpM * WARP_TILE_M); // rows of this warp's tile inside C
    elem_t* gC = C + static_cast<long long>(tileM * BLOCK_M + warpM * WARP_TILE_M) * N + tileN * BLOCK_N +
                 warpN * WARP_TILE_N;
#pragma unroll
    for (int i = 0; i < FRAGS_M; ++i) {
#pragma unroll
        for (int j = 0; j < FRAGS_N; ++j) {
            const int row = i * 16 + lane / 4, col = j * 8 + (lane % 4) * 2;
            if (row < rowsLeft)
                *reinterpret_cast<unsigned*>(gC + static_cast<long long>(row) * N + col) =
                    pack2(acc[i][j][0], acc[i][j][1]);
            if (row + 8 < rowsLeft)
                *reinterpret_cast<unsigned*>(gC + static_cast<long long>(row + 8) * N + col) =
                    pack2(acc[i][j][2], acc[i][j][3]);
        }
    }
#endif
}
