#!/usr/bin/env python
"""A warp sum written as Kernel Tuner's spmv example writes its reduction, with __shfl_down, which
CUDA 9 removed: no config compiles, and the error says why."""

from collections import OrderedDict

import numpy

from kernel_tuner import tune_kernel

kernel_string = """
__global__ void warp_sum(float *sums, const float *values, int n) {
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

tune_kernel("warp_sum", kernel_string, n, [sums, values, n], tune_params, verbose=True)
