// A kernel with Kernel Tuner's less common options: its own block size names (bx, by), dynamic
// shared memory, a header passed in kernel_source's list, and bool, float and string parameters.
#include "stencil_helper.cuh"

extern "C" __global__ void stencil(float *out, const float *in, int w, int h) {
    extern __shared__ float buf[];
    int x = blockIdx.x * bx + threadIdx.x;
    int y = blockIdx.y * by + threadIdx.y;
    if (x < w && y < h) {
        float v = in[y * w + x] * SCALE * factor;
        if (use_square) {
            v = v * v;
        }
        buf[threadIdx.y * bx + threadIdx.x] = v;
        out[y * w + x] = buf[threadIdx.y * bx + threadIdx.x];
    }
}
