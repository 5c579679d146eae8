// out[i] = a * in[i], with the C headers a kernel written for nvcc includes: stdio.h for a
// debugging printf, math.h for INFINITY and isfinite, stdint.h for int64_t. 2.0 everywhere for
// an input of ones and a = 2.
//
// Geometry: ceil(ProblemSize[0] / block_size_x) blocks of block_size_x threads.

#include <math.h>
#include <stdint.h>
#include <stdio.h>

extern "C" __global__ void checked_scale(float* out, const float* in, float a, int n) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * block_size_x + threadIdx.x;
    if (i >= n)
        return;
    const float v = a * in[i];
    if (!isfinite(v) || v == INFINITY)
        printf("checked_scale: element %lld is %f\n", static_cast<long long>(i), v);
    out[i] = v;
}
