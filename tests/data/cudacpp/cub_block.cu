// Each element's share of its block's sum, times the block's size: out[i] = in[i] * B / sum,
// where B = block_size threads each take one element and sum is CUB's BlockReduce over them
// (1.0 everywhere for a constant input). A C++ template, launched as Kernel Tuner launches one:
// KernelName "block_share<block_size_x, float>", the tuning parameter substituted.
//
// Geometry: ProblemSize[0] / block_size_x blocks of block_size_x threads (n is a multiple).

#include <cub/cub.cuh>

template <int block_size, typename T>
__global__ void block_share(T* out, const T* in, int n) {
    using BlockReduce = cub::BlockReduce<T, block_size>;
    __shared__ typename BlockReduce::TempStorage temp;
    __shared__ T total;
    const int i = blockIdx.x * block_size + threadIdx.x;
    const T v = i < n ? in[i] : T(0);
    const T sum = BlockReduce(temp).Sum(v);
    if (threadIdx.x == 0)
        total = sum;
    __syncthreads();
    if (i < n)
        out[i] = v * T(block_size) / total;
}
