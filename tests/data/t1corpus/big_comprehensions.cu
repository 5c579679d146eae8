// Box filter (mean over a (2 * filter_radius + 1)^2 window, edges clamped) with many
// tuning knobs; the problem exists to give the corpus a large (~4.4 million raw
// configurations) space built from list comprehensions.
//
// A thread computes tile_size_y rows x tile_size_x groups of vector_width consecutive
// pixels; rows are block_size_y apart, groups block_size_x groups apart. A block covers
// (block_size_x * tile_size_x * vector_width) x (block_size_y * tile_size_y) pixels.
// use_shared = 1 stages the block's input region (with a filter_radius halo) in shared
// memory; loop_unroll (0 = compiler's choice) unrolls the window's inner loop;
// use_ldg = 1 reads global memory through the read-only cache; blocks_per_sm > 0 adds
// __launch_bounds__.
//
// Geometry (GlobalSizeType CUDA): ceil(width / block width) x ceil(height / block height)
// blocks. Every access is clamped or bounds-checked.

#ifndef block_size_x
#define block_size_x 64
#endif
#ifndef block_size_y
#define block_size_y 4
#endif
#ifndef blocks_per_sm
#define blocks_per_sm 0
#endif
#ifndef tile_size_x
#define tile_size_x 1
#endif
#ifndef tile_size_y
#define tile_size_y 1
#endif
#ifndef filter_radius
#define filter_radius 1
#endif
#ifndef loop_unroll
#define loop_unroll 0
#endif
#ifndef vector_width
#define vector_width 1
#endif
#ifndef use_shared
#define use_shared 0
#endif
#ifndef use_ldg
#define use_ldg 0
#endif

#define BLOCK_W (block_size_x * tile_size_x * vector_width)
#define BLOCK_H (block_size_y * tile_size_y)
#define WINDOW (2 * filter_radius + 1)

#define PRAGMA(x) _Pragma(#x)
#define UNROLL(n) PRAGMA(unroll n)
#if loop_unroll > 0
#define UNROLL_INNER UNROLL(loop_unroll)
#else
#define UNROLL_INNER
#endif

#if use_ldg == 1
#define LOAD(p) __ldg(p)
#else
#define LOAD(p) (*(p))
#endif

#if blocks_per_sm > 0
#define LAUNCH_BOUNDS __launch_bounds__(block_size_x * block_size_y, blocks_per_sm)
#else
#define LAUNCH_BOUNDS __launch_bounds__(block_size_x * block_size_y)
#endif

__device__ __forceinline__ int clampi(int v, int hi) {
    return v < 0 ? 0 : (v > hi ? hi : v);
}

__global__ void LAUNCH_BOUNDS box_filter(float *out, const float *__restrict__ in, int width, int height) {
    const int x0 = blockIdx.x * BLOCK_W;
    const int y0 = blockIdx.y * BLOCK_H;
    const float scale = 1.0f / (WINDOW * WINDOW);

#if use_shared == 1
    __shared__ float sh[BLOCK_H + 2 * filter_radius][BLOCK_W + 2 * filter_radius];
    for (int i = threadIdx.y; i < BLOCK_H + 2 * filter_radius; i += block_size_y)
        for (int j = threadIdx.x; j < BLOCK_W + 2 * filter_radius; j += block_size_x) {
            const int y = clampi(y0 + i - filter_radius, height - 1);
            const int x = clampi(x0 + j - filter_radius, width - 1);
            sh[i][j] = LOAD(in + y * width + x);
        }
    __syncthreads();
#endif

#pragma unroll
    for (int ty = 0; ty < tile_size_y; ty++) {
        const int ly = threadIdx.y + ty * block_size_y;
        const int y = y0 + ly;
#pragma unroll
        for (int tx = 0; tx < tile_size_x; tx++) {
#pragma unroll
            for (int v = 0; v < vector_width; v++) {
                const int lx = (threadIdx.x + tx * block_size_x) * vector_width + v;
                const int x = x0 + lx;
                if (y < height && x < width) {
                    float sum = 0.0f;
                    for (int dy = -filter_radius; dy <= filter_radius; dy++) {
                        UNROLL_INNER
                        for (int dx = -filter_radius; dx <= filter_radius; dx++) {
#if use_shared == 1
                            sum += sh[ly + dy + filter_radius][lx + dx + filter_radius];
#else
                            sum += LOAD(in + clampi(y + dy, height - 1) * width + clampi(x + dx, width - 1));
#endif
                        }
                    }
                    out[y * width + x] = sum * scale;
                }
            }
        }
    }
}
