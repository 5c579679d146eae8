// The cross term of two point sets, sum over i, j of exp(-(a_i - b_j)^2 / TERM_SCALE), written as
// Kernel Tuner's expdist example writes its kernel: CUB's BlockReduce over a 2D block, defaults
// under #ifndef, a debugging printf, and a second kernel (a template) that sums the blocks' terms.

#include <cub/cub.cuh>
#include <stdio.h>

#include <cross_term_helpers.cuh>

#ifndef block_size_x
#define block_size_x 32
#endif
#ifndef block_size_y
#define block_size_y 4
#endif
#ifndef tile_size_y
#define tile_size_y 1
#endif

extern "C" __global__ void cross_term(double* partial, const double* a, const double* b, int m, int n) {
    typedef cub::BlockReduce<double, block_size_x, cub::BLOCK_REDUCE_WARP_REDUCTIONS, block_size_y> BlockReduce;
    __shared__ typename BlockReduce::TempStorage temp_storage;
    const int i = blockIdx.x * block_size_x + threadIdx.x;
    const int j0 = blockIdx.y * block_size_y * tile_size_y + threadIdx.y;
    double term = 0.0;
#pragma unroll
    for (int t = 0; t < tile_size_y; t++) {
        const int j = j0 + t * block_size_y;
        if (i < m && j < n)
            term += gaussian(a[i] - b[j], TERM_SCALE);
    }
    term = BlockReduce(temp_storage).Sum(term);
    if (threadIdx.x == 0 && threadIdx.y == 0) {
        if (m <= 0 || n <= 0)
            printf("cross_term: empty input (m=%d, n=%d)\n", m, n);
        partial[blockIdx.y * gridDim.x + blockIdx.x] = term;
    }
}

template <int block_size>
__global__ void reduce_terms(double* total, const double* partial, int count) {
    typedef cub::BlockReduce<double, block_size> BlockReduce;
    __shared__ typename BlockReduce::TempStorage temp_storage;
    double sum = 0.0;
    for (int k = threadIdx.x; k < count; k += block_size)
        sum += partial[k];
    sum = BlockReduce(temp_storage).Sum(sum);
    if (threadIdx.x == 0)
        total[0] = sum;
}
