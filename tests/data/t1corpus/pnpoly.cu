// Point-in-polygon test with the crossing-number algorithm (after the Kernel Tuner
// pnpoly benchmark). The polygon's VERTICES (x, y) pairs live in constant memory,
// copied by the tuner into the symbol d_vertices; the kernel also receives them as
// its third argument (unused). bitmap[i] becomes 1.0 when points[i] lies inside.
//
// Parameters: tile_size points per thread, block_size_x apart; between_method picks
// one of four equivalent "is p.y between the edge's end points" tests; use_method
// picks how the crossing is counted; use_precomputed_slopes = 1 computes the edges'
// slopes once per block into shared memory.
//
// Geometry (no GlobalSizeType): ceil(n / (block_size_x * tile_size)) blocks.

#ifndef block_size_x
#define block_size_x 256
#endif
#ifndef tile_size
#define tile_size 1
#endif
#ifndef between_method
#define between_method 0
#endif
#ifndef use_precomputed_slopes
#define use_precomputed_slopes 0
#endif
#ifndef use_method
#define use_method 0
#endif

#define VERTICES 600

__constant__ float2 d_vertices[VERTICES];

__device__ __forceinline__ bool is_between(float a, float b, float c) {
#if between_method == 0
    return (b > a) != (c > a);
#elif between_method == 1
    return ((b <= a) && (c > a)) || ((b > a) && (c <= a));
#elif between_method == 2
    return ((a - b) < 0.0f) != ((a - c) < 0.0f);
#else
    return (b > a) ^ (c > a);
#endif
}

__global__ void __launch_bounds__(block_size_x)
    cn_pnpoly(float *bitmap, const float2 *points, const float *vertices, int n) {
#if use_precomputed_slopes == 1
    __shared__ float slopes[VERTICES];
    for (int k = threadIdx.x; k < VERTICES; k += block_size_x) {
        const int j = (k == 0) ? VERTICES - 1 : k - 1;
        const float2 vk = d_vertices[k];
        const float2 vj = d_vertices[j];
        const float dy = vj.y - vk.y;
        slopes[k] = (dy != 0.0f) ? (vj.x - vk.x) / dy : 0.0f;
    }
    __syncthreads();
#endif

    const int base = blockIdx.x * block_size_x * tile_size + threadIdx.x;
#pragma unroll
    for (int t = 0; t < tile_size; t++) {
        const int i = base + t * block_size_x;
        if (i >= n)
            continue;
        const float2 p = points[i];
        int c = 0;
        int k = VERTICES - 1;
        for (int j = 0; j < VERTICES; k = j++) {
            // Edge from vertex k to vertex j.
            const float2 vj = d_vertices[j];
            const float2 vk = d_vertices[k];
#if use_precomputed_slopes == 1
            const float slope = slopes[j];
#else
            const float dy = vk.y - vj.y;
            const float slope = (dy != 0.0f) ? (vk.x - vj.x) / dy : 0.0f;
#endif
            if (is_between(p.y, vj.y, vk.y)) {
#if use_method == 0
                if (p.x < slope * (p.y - vj.y) + vj.x)
                    c = !c;
#elif use_method == 1
                c += (p.x < slope * (p.y - vj.y) + vj.x) ? 1 : 0;
#else
                c ^= ((p.x - vj.x) < slope * (p.y - vj.y)) ? 1 : 0;
#endif
            }
        }
#if use_method == 1
        c &= 1;
#endif
        bitmap[i] = c ? 1.0f : 0.0f;
    }
}
