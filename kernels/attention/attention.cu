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

extern "C" __global__ void __launch_bounds__(THREADS)
    attention(const __nv_bfloat16* Q, const __nv_bfloat16* K, const __nv_bfloat16* V, __nv_bfloat16* O, int S,
              float scale) {
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
    const unsigned copyDst = swizzle(tid / CHUNKS_PER_ROW, tid % CHUNKS_PER_ROW) * 16;

    const unsigned qTile = smemAddress(sQ);
    loadTile<BLOCK_M>(qTile + copyDst, gQ + copySrc);
    cpAsyncCommit();
    loadTile<BLOCK_N>(smemAddress(sK) + copyDst, gK + copySrc);
#if STAGES == 2
    loadTile<BLOCK_N>(smemAddress(sV) + copyDst, gV + copySrc);
#endif
    cpAsyncCommit();

    // The lanes' ldmatrix addresses at k 0 (Q, K) or column 0 (V), its rows and swizzled chunks.
    // A k16 step kk is chunk 2 kk + lane / 16 (Q) or 2 kk + lane / 8 % 2 (K), an 8-column step d
    // of V chunk d + lane / 16: the step's bits are XORed into the address, as the swizzle XORs the
    // row's into the chunk's. Further rows are an offset added: whole groups of 8 rows.
    const unsigned qLane = qTile + (warp * WARP_ROWS + lane % 16) * ROW_BYTES + ((lane / 16) ^ (lane & 7)) * 16;
    const unsigned kLane = (lane % 8 + (lane / 16) * 8) * ROW_BYTES + (((lane / 8) % 2) ^ (lane & 7)) * 16;
    const unsigned vLane = (lane % 16) * ROW_BYTES + ((lane / 16) ^ (lane & 7)) * 16;

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
#if CAUSAL
        const int keyFirst = kb * BLOCK_N;
        const bool skip = keyFirst > warpFirst + WARP_ROWS - 1; // every key after every row of the warp
        const bool crosses = keyFirst + BLOCK_N - 1 > warpFirst;
#else
        const bool skip = false;
#endif

        // This block's K (STAGES 2: and V) has landed, and every warp is done with the buffers
        // refilled next: STAGES 2's other stage (read in the last iteration), STAGES 1's V tile.
        cpAsyncWait<0>();
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

#if STAGES == 1
        // V has landed, and every warp is done with K: the next block's K goes there.
        cpAsyncWait<0>();
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
                *reinterpret_cast<unsigned*>(smem + swizzle(row, d) * 16 + (lane % 4) * 4) =
                    pack2(o[i][d][2 * h] * inv, o[i][d][2 * h + 1] * inv);
        }
    }
    __syncwarp();
#pragma unroll
    for (int c = lane; c < WARP_ROWS * CHUNKS_PER_ROW; c += 32) {
        const int row = warp * WARP_ROWS + c / CHUNKS_PER_ROW, chunk = c % CHUNKS_PER_ROW;
        *reinterpret_cast<uint4*>(gO + row * HEAD_DIM + chunk * 8) =
            *reinterpret_cast<const uint4*>(smem + swizzle(row, chunk) * 16);
    }
}
