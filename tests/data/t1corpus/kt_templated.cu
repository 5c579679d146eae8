// out[i] = a * in[i], written as a C++ template: Kernel Tuner instantiates
// vector_scale<block_size_x, tile_size_x> with the tuning parameters' values
// (KernelName "vector_scale<block_size_x, tile_size_x>"). Not extern "C".
//
// Geometry (GlobalSizeType CUDA): ceil(n / (BLOCK * TILE)) blocks of BLOCK threads;
// block b covers elements [b * BLOCK * TILE, (b + 1) * BLOCK * TILE), each thread
// TILE of them, BLOCK apart (coalesced). The tail is bounds-checked.

template <int BLOCK, int TILE>
__global__ void vector_scale(float *out, const float *in, float a, int n) {
    const int base = blockIdx.x * (BLOCK * TILE) + threadIdx.x;
#pragma unroll
    for (int t = 0; t < TILE; t++) {
        const int i = base + t * BLOCK;
        if (i < n)
            out[i] = a * in[i];
    }
}
