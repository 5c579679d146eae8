// A small kernel for testing the analysis: UNROLL=3 does not compile (a deliberate syntax error
// behind an #if, as a real kernel may break for one value of a parameter), and ITEMS=256 keeps
// 256 floats live per thread, more than the 255 registers a thread can have, so it spills.
//
// Each thread loads ITEMS values strided by BLOCK, mixes them in registers for a few rounds
// (every index is a compile-time constant, so the array lives in registers, not local memory),
// passes one value through dynamic shared memory (BLOCK floats) and stores them back.

#ifndef BLOCK
#define BLOCK 128
#endif
#ifndef ITEMS
#define ITEMS 8
#endif
#ifndef UNROLL
#define UNROLL 1
#endif

// Pragma arguments are not macro-expanded; a constant is.
constexpr int kUnroll = UNROLL;

extern "C" __global__ void __launch_bounds__(BLOCK) broken(const float* in, float* out) {
    extern __shared__ float scratch[];
    float acc[ITEMS];
    const long long base = static_cast<long long>(blockIdx.x) * BLOCK * ITEMS + threadIdx.x;
#pragma unroll
    for (int i = 0; i < ITEMS; ++i)
        acc[i] = in[base + i * BLOCK];

#if UNROLL == 3
    this is not C++ // the deliberate syntax error
#endif

#pragma unroll kUnroll
    for (int r = 0; r < 4; ++r) {
#pragma unroll
        for (int i = 0; i < ITEMS; ++i)
            acc[i] = acc[i] * acc[(i + 1) % ITEMS] + static_cast<float>(r);
    }

    scratch[threadIdx.x] = acc[0];
    __syncthreads();
    acc[0] += scratch[(threadIdx.x + 1) % BLOCK];
#pragma unroll
    for (int i = 0; i < ITEMS; ++i)
        out[base + i * BLOCK] = acc[i];
}
