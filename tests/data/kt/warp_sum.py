#!/usr/bin/env python
"""A warp sum written as Kernel Tuner's spmv example writes its reduction, with __shfl_down, which
CUDA 9 removed: no config compiles, and the error says why. Like spmv's, its column indices are
an empty array under NumPy 2 (nrows * ncols overflows int32 there), which a kernel that reads
none of them runs with: the error is the compiler's, not the array's."""

from collections import OrderedDict

import numpy

from kernel_tuner import tune_kernel

kernel_string = """
__global__ void warp_sum(float *sums, const float *values, const int *cols, int n) {
    int i = blockIdx.x * block_size_x + threadIdx.x;
    float v = i < n ? values[i] : 0.0f;
    #pragma unroll
    for (unsigned int s = 16; s > 0; s >>= 1) {
        v += __shfl_down(v, s);
    }
    if ((threadIdx.x & 31) == 0) {
        sums[i / 32] = v;
    }
}
"""

n = numpy.int32(4096)
values = numpy.random.randn(n).astype(numpy.float32)
sums = numpy.zeros(n // 32).astype(numpy.float32)

tune_params = OrderedDict()
tune_params["block_size_x"] = [32 * i for i in range(1, 9)]

cols = numpy.zeros(0, dtype=numpy.int32)  # as spmv's under NumPy 2: int32(128 * 1024) * ncols is 0

tune_kernel("warp_sum", kernel_string, n, [sums, values, cols, n], tune_params, verbose=True)
