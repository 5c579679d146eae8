// The sum of each row of a 4096 x 1024 matrix, in the style of kernels written for Kernel Tuner:
// the grid size is the macro grid_size_x that Kernel Tuner defines (each block takes every
// grid_size_x-th row), the unroll factor of the row loop is a tuning parameter (0: no pragma at
// all), and the defaults for compiling the file on its own sit under #ifndef kernel_tuner, the
// unroll factor among them as a const int, which only compiles if Kernel Tuner's rules are kept.

#ifndef kernel_tuner
#define block_size_x 256
#define grid_size_x 1024
const int loop_unroll_factor_k = 1;
#endif

#define nrows 4096
#define ncols 1024

extern "C" __global__ void row_sums(float *sums, const float *matrix) {
    __shared__ float partial[block_size_x];
    for (int row = blockIdx.x; row < nrows; row += grid_size_x) {
        float s = 0.0f;
#pragma unroll loop_unroll_factor_k
        for (int k = threadIdx.x; k < ncols; k += block_size_x)
            s += matrix[row * ncols + k];
        partial[threadIdx.x] = s;
        __syncthreads();
        for (int stride = block_size_x / 2; stride > 0; stride /= 2) {
            if (threadIdx.x < stride)
                partial[threadIdx.x] += partial[threadIdx.x + stride];
            __syncthreads();
        }
        if (threadIdx.x == 0)
            sums[row] = partial[0];
        __syncthreads();
    }
}
