// Includes a header that no folder has: the compile error names it and the folders searched.

#include <kernel_helpers/not_shipped.cuh>

extern "C" __global__ void scale(float* out, const float* in, int n) {
    const int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i < n)
        out[i] = 2.0f * in[i];
}
