// A small kernel for the tuning tests: y = a * x, each thread handling ITEMS elements, staged
// through shared memory (NUM_STAGES buffers, so that large configs exceed the static limit).
extern "C" __global__ void scale(int n, float a, const float* __restrict__ x, float* __restrict__ y) {
    __shared__ float stage[NUM_STAGES * BLOCK * ITEMS];
    const int base = (blockIdx.x * BLOCK) * ITEMS;
    for (int i = 0; i < ITEMS; ++i) {
        const int j = base + i * BLOCK + threadIdx.x;
        stage[(i % NUM_STAGES) * BLOCK * ITEMS + i * BLOCK + threadIdx.x] = j < n ? x[j] : 0.0f;
    }
    __syncthreads();
    for (int i = 0; i < ITEMS; ++i) {
        const int j = base + i * BLOCK + threadIdx.x;
        if (j < n)
            y[j] = a * stage[(i % NUM_STAGES) * BLOCK * ITEMS + i * BLOCK + threadIdx.x];
    }
}
