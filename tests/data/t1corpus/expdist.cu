// The cross term of the Bhattacharya-like distance between two sets of 2D
// localisations (after the "expdist" kernel tuned with Kernel Tuner):
//   sum over i < m, j < n of exp(-|a_i - b_j|^2 / (sa_i^2 + sb_j^2 + 0.1)).
// A holds m (x, y) pairs, B n pairs, scale_A / scale_B the per-point scales.
//
// A block of block_size_x x block_size_y threads takes block_size_x * tile_size_x
// points of A (blockIdx.x) and sweeps B in chunks of block_size_y * tile_size_y points,
// starting at chunk blockIdx.y and stepping n_y_blocks chunks. use_shared_mem = 1 stages
// each B chunk in shared memory, 2 also the block's A points. use_column = 1 swaps the
// tile loops. The block reduces its partial sum with warp shuffles and writes it to
// cross_term[blockIdx.y * ceil(m / CHUNK_A) + blockIdx.x]; the host sums cross_term.
//
// Geometry (GlobalSizeType CUDA): ceil(m / (block_size_x * tile_size_x)) x n_y_blocks
// blocks; cross_term holds ceil(m / 32) * max(n_y_blocks) floats, enough for any config.

#ifndef block_size_x
#define block_size_x 32
#endif
#ifndef block_size_y
#define block_size_y 4
#endif
#ifndef tile_size_x
#define tile_size_x 1
#endif
#ifndef tile_size_y
#define tile_size_y 1
#endif
#ifndef use_shared_mem
#define use_shared_mem 0
#endif
#ifndef loop_unroll_factor_x
#define loop_unroll_factor_x 0
#endif
#ifndef loop_unroll_factor_y
#define loop_unroll_factor_y 0
#endif
#ifndef use_column
#define use_column 0
#endif
#ifndef n_y_blocks
#define n_y_blocks 1
#endif

#define THREADS (block_size_x * block_size_y)
#define CHUNK_A (block_size_x * tile_size_x)
#define CHUNK_B (block_size_y * tile_size_y)

#define PRAGMA(x) _Pragma(#x)
#define UNROLL(n) PRAGMA(unroll n)
#if loop_unroll_factor_x > 0
#define UNROLL_X UNROLL(loop_unroll_factor_x)
#else
#define UNROLL_X
#endif
#if loop_unroll_factor_y > 0
#define UNROLL_Y UNROLL(loop_unroll_factor_y)
#else
#define UNROLL_Y
#endif

__device__ __forceinline__ float pair_term(float xa, float ya, float sa, float xb, float yb, float sb) {
    const float dx = xa - xb;
    const float dy = ya - yb;
    return __expf(-(dx * dx + dy * dy) / (sa * sa + sb * sb + 0.1f));
}

__global__ void __launch_bounds__(THREADS)
    ExpDist(const float *A, const float *B, int m, int n, const float *scale_A, const float *scale_B,
            float *cross_term) {
    const int tx = threadIdx.x;
    const int ty = threadIdx.y;
    const int tid = ty * block_size_x + tx;
    const int i0 = blockIdx.x * CHUNK_A;
    // The intended grid is ceil(m / CHUNK_A) x n_y_blocks; extra blocks (from a loader
    // that sizes the grid another way) leave without writing.
    const int blocks_x = (m + CHUNK_A - 1) / CHUNK_A;
    if (blockIdx.x >= blocks_x || blockIdx.y >= n_y_blocks)
        return;

#if use_shared_mem == 2
    __shared__ float sh_A[3][CHUNK_A];
    for (int k = tid; k < CHUNK_A; k += THREADS) {
        const int i = i0 + k;
        sh_A[0][k] = i < m ? A[2 * i] : 0.0f;
        sh_A[1][k] = i < m ? A[2 * i + 1] : 0.0f;
        sh_A[2][k] = i < m ? scale_A[i] : 1.0f;
    }
#endif
#if use_shared_mem >= 1
    __shared__ float sh_B[3][CHUNK_B];
#endif

    float sum = 0.0f;
    for (int j0 = blockIdx.y * CHUNK_B; j0 < n; j0 += n_y_blocks * CHUNK_B) {
#if use_shared_mem >= 1
        __syncthreads();  // the previous chunk is no longer read
        for (int k = tid; k < CHUNK_B; k += THREADS) {
            const int j = j0 + k;
            sh_B[0][k] = j < n ? B[2 * j] : 0.0f;
            sh_B[1][k] = j < n ? B[2 * j + 1] : 0.0f;
            sh_B[2][k] = j < n ? scale_B[j] : 1.0f;
        }
        __syncthreads();
#endif
#if use_column == 0
        UNROLL_X
        for (int ti = 0; ti < tile_size_x; ti++) {
            UNROLL_Y
            for (int tj = 0; tj < tile_size_y; tj++) {
#else
        UNROLL_Y
        for (int tj = 0; tj < tile_size_y; tj++) {
            UNROLL_X
            for (int ti = 0; ti < tile_size_x; ti++) {
#endif
                const int li = tx + ti * block_size_x;
                const int lj = ty + tj * block_size_y;
                const int i = i0 + li;
                const int j = j0 + lj;
                if (i < m && j < n) {
#if use_shared_mem == 2
                    const float xa = sh_A[0][li], ya = sh_A[1][li], sa = sh_A[2][li];
#else
                    const float xa = A[2 * i], ya = A[2 * i + 1], sa = scale_A[i];
#endif
#if use_shared_mem >= 1
                    const float xb = sh_B[0][lj], yb = sh_B[1][lj], sb = sh_B[2][lj];
#else
                    const float xb = B[2 * j], yb = B[2 * j + 1], sb = scale_B[j];
#endif
                    sum += pair_term(xa, ya, sa, xb, yb, sb);
                }
            }
        }
    }

    // Block reduction: warp shuffles, then one warp over the per-warp sums.
    __shared__ float sh_warp[32];
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2)
        sum += __shfl_down_sync(0xffffffffu, sum, offset);
    if ((tid & 31) == 0)
        sh_warp[tid / 32] = sum;
    __syncthreads();
    if (tid < 32) {
        float v = tid < THREADS / 32 ? sh_warp[tid] : 0.0f;
#pragma unroll
        for (int offset = 16; offset > 0; offset /= 2)
            v += __shfl_down_sync(0xffffffffu, v, offset);
        if (tid == 0)
            cross_term[blockIdx.y * blocks_x + blockIdx.x] = v;
    }
}
