// A three-point smoothing stencil whose weights are a cuda::std::array (libcu++) and whose
// arithmetic is done in half precision (cuda_fp16.h): out[i] = 0.25 in[i-1] + 0.5 in[i] +
// 0.25 in[i+1], the ends clamped. 1.0 everywhere for an input of ones.
//
// Geometry: ceil(ProblemSize[0] / (block_size_x * tile_size_x)) blocks of block_size_x threads,
// each thread tile_size_x elements block_size_x apart.

#include <cuda/std/array>
#include <cuda_fp16.h>

__global__ void smooth_half(float* out, const float* in, int n) {
    constexpr cuda::std::array<float, 3> weights{0.25f, 0.5f, 0.25f};
    const int base = blockIdx.x * block_size_x * tile_size_x + threadIdx.x;
#pragma unroll
    for (int t = 0; t < tile_size_x; t++) {
        const int i = base + t * block_size_x;
        if (i >= n)
            return;
        __half sum = __float2half(0.0f);
        for (int k = 0; k < 3; k++) {
            const int j = min(max(i + k - 1, 0), n - 1);
            sum = __hadd(sum, __hmul(__float2half(weights[k]), __float2half(in[j])));
        }
        out[i] = __half2float(sum);
    }
}
