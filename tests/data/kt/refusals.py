#!/usr/bin/env python
"""What Tilescope cannot honour, one case per run (the first argument names it): each tune_kernel
call below raises an exception whose message starts with "Tilescope cannot" and names the
argument, so the script exits non-zero with that message."""

import sys

import numpy as np

from kernel_tuner import tune_kernel
from kernel_tuner.observers.nvml import NVMLObserver

kernel_string = """
__global__ void vector_add(float *c, const float *a, const float *b, int n) {
    int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}
"""
opencl_string = """
__kernel void vector_add(__global float *c, __global const float *a, __global const float *b, int n) {
    int i = get_global_id(0);
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}
"""

size = 1000
a = np.random.randn(size).astype(np.float32)
b = np.random.randn(size).astype(np.float32)
c = np.zeros_like(a)
args = [c, a, b, np.int32(size)]
tune_params = {"block_size_x": [64, 128]}

case = sys.argv[1]
if case == "texmem":
    tune_kernel("vector_add", kernel_string, size, args, tune_params, texmem_args={"tex": a})
elif case == "opencl":
    tune_kernel("vector_add", opencl_string, size, args, tune_params, lang="OpenCL")
elif case == "observer":
    tune_kernel("vector_add", kernel_string, size, args, tune_params, observers=[NVMLObserver(["gr_voltage"])])
elif case == "strategy":

    class MyStrategy:
        def tune(self, searchspace, runner, tuning_options):
            return []

    tune_kernel("vector_add", kernel_string, size, args, tune_params, strategy=MyStrategy())
elif case == "generator":
    # Code that differs with a string parameter: the preprocessor cannot choose between them.
    tune_kernel("vector_add", lambda p: kernel_string.replace("c[i] =", "c[i] = (" + p["op"] + ")"), size, args,
                dict(tune_params, op=["1.0f *", "2.0f *"]), lang="CUDA")
elif case == "pythonkernel":
    # A kernel called from Python needs a GPU to run on.
    from kernel_tuner.kernelbuilder import PythonKernel

    PythonKernel("vector_add", kernel_string, size, args, {"block_size_x": 128})
else:
    sys.exit(f"unknown case {case}")
