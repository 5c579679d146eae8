#!/usr/bin/env python
"""run_kernel to check a kernel's output once, then tune_kernel with a verify function of the
script's own, as Kernel Tuner's tests of a kernel often do. On a GPU (--backend cuda) it runs
through; elsewhere run_kernel is refused, since no kernel runs there to give an output."""

import json
import sys
from collections import OrderedDict

import numpy as np

from kernel_tuner import run_kernel, tune_kernel

kernel_string = """
__constant__ float scale[2];

__global__ void axpy(float *y, const float *x, float a, int n) {
    int i = blockIdx.x * block_size_x * work_per_thread + threadIdx.x;
    for (int k = 0; k < work_per_thread; k++) {
        int j = i + k * block_size_x;
        if (j < n) {
            y[j] = (a * x[j] + y[j]) * scale[0] + scale[1];
        }
    }
}
"""

n = 5000
rng = np.random.default_rng(3)
x = rng.standard_normal(n).astype(np.float32)
y = rng.standard_normal(n).astype(np.float32)
a = np.float32(2.5)
scale = np.array([0.5, 1.0], dtype=np.float32)
args = [y, x, a, np.int32(n)]
expected = ((a * x + y) * scale[0] + scale[1]).astype(np.float32)

# run_kernel returns every argument after one run: y holds the output.
out = run_kernel("axpy", kernel_string, n, args, {"block_size_x": 128, "work_per_thread": 2},
                 grid_div_x=["block_size_x", "work_per_thread"], cmem_args={"scale": scale})
assert isinstance(out[0], np.ndarray) and out[0].shape == y.shape and out[0].dtype == y.dtype
assert out[2] == a and out[3] == n
run_ok = bool(np.allclose(out[0], expected, atol=1e-5))
untouched = bool(np.array_equal(out[1], x))

calls = []


def verify(answer, result_host, atol=None):
    calls.append(1)
    return bool(np.allclose(answer[0], result_host[0], atol=atol))


tune_params = OrderedDict(block_size_x=[64, 128, 256], work_per_thread=[1, 2, 4])
results, env = tune_kernel("axpy", kernel_string, n, args, tune_params,
                           grid_div_x=["block_size_x", "work_per_thread"], cmem_args={"scale": scale},
                           answer=[expected, None, None, None], verify=verify, atol=1e-5, quiet=True)

summary = {"run_kernel": run_ok, "inputs_untouched": untouched, "results": len(results),
           "verified": len(calls), "times": all(r["time"] > 0 for r in results)}
print("KT-SUMMARY " + json.dumps(summary))
sys.exit(0 if run_ok and untouched and len(results) == 9 and len(calls) == 9 else 1)
