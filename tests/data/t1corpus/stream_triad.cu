// STREAM triad: a[i] = b[i] + scalar * c[i].
//
// block_size_x is NOT a tuning parameter: LocalSize and GridDivX name it, and Kernel
// Tuner then uses (and #defines) its default of 256 threads. Geometry (no
// GlobalSizeType): ceil(n / (block_size_x * unroll * vector_width)) blocks. Block b
// owns block_size_x * unroll groups of vector_width consecutive elements; thread t
// takes groups t, t + block_size_x, ... (unroll of them). Elements past n are skipped.

#ifndef block_size_x
#define block_size_x 256
#endif
#ifndef unroll
#define unroll 1
#endif
#ifndef vector_width
#define vector_width 1
#endif
#ifndef use_ldg
#define use_ldg 0
#endif

#if use_ldg == 1
#define LOAD(p) __ldg(p)
#else
#define LOAD(p) (*(p))
#endif

extern "C" __global__ void triad(float *a, const float *__restrict__ b, const float *__restrict__ c, float scalar,
                                 int n) {
    const int group0 = blockIdx.x * block_size_x * unroll + threadIdx.x;
#pragma unroll
    for (int u = 0; u < unroll; u++) {
        const int first = (group0 + u * block_size_x) * vector_width;
#pragma unroll
        for (int v = 0; v < vector_width; v++) {
            const int i = first + v;
            if (i < n)
                a[i] = LOAD(b + i) + scalar * LOAD(c + i);
        }
    }
}
