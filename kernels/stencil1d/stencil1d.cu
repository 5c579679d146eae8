// A 1D stencil, the kernel of the manual's first-kernel page (resources/docs/guide/first-kernel.md):
// out[i] = the sum over k = -RADIUS..RADIUS of w(k) * in[i + k], with the weights 1, 2, 3, 4, 3, 2,
// 1 (over 16) of a small blur, and the values past either end of `in` counting as 0.
//
// Written as Kernel Tuner's examples are, so that the problem reads the same to Kernel Tuner and
// to Tilescope: the thread block is the tuning parameter block_size_x, and a block computes one
// tile of block_size_x * tile_size_x consecutive outputs (the problem's GridDivX), thread t the
// outputs t, t + block_size_x, t + 2 * block_size_x, ... of it, so each step of a warp reads and
// writes 32 consecutive floats. With use_shared 1 the block first stages its tile and the RADIUS
// values on either side in shared memory, and every input is read from memory once; with 0, each
// output reads its 2 * RADIUS + 1 inputs from global memory, and the caches catch the overlap.
//
// Tuning parameters arrive as #defines before the file; the defaults under #ifndef kernel_tuner
// (which is defined then) let the file compile alone. The grid is rounded up, so the last block
// may reach past n: every read and write checks its index.

#ifndef kernel_tuner
#define block_size_x 256 // threads per block
#define tile_size_x 1    // outputs per thread
#define use_shared 0     // 1: stage the block's inputs in shared memory
#endif

#define RADIUS 3
#define TILE (block_size_x * tile_size_x) // outputs per block

extern "C" __global__ void __launch_bounds__(block_size_x) stencil1d(int n, const float* __restrict__ in,
                                                                     float* __restrict__ out) {
    const int first = blockIdx.x * TILE; // the block's first output
#if use_shared
    __shared__ float tile[TILE + 2 * RADIUS];
    for (int j = threadIdx.x; j < TILE + 2 * RADIUS; j += block_size_x) {
        const int i = first + j - RADIUS;
        tile[j] = i >= 0 && i < n ? in[i] : 0.0f;
    }
    __syncthreads();
#endif
#pragma unroll
    for (int item = 0; item < tile_size_x; ++item) {
        const int local = item * block_size_x + threadIdx.x;
        const int i = first + local;
        if (i >= n)
            break;
        float sum = 0.0f;
#pragma unroll
        for (int k = -RADIUS; k <= RADIUS; ++k) {
            const float w = float(RADIUS + 1 - (k < 0 ? -k : k)) / 16.0f;
#if use_shared
            sum += w * tile[local + RADIUS + k];
#else
            const int j = i + k;
            if (j >= 0 && j < n)
                sum += w * in[j];
#endif
        }
        out[i] = sum;
    }
}
