#!/usr/bin/env python
"""A sum reduction tuned with Python function restrictions (which only Python can evaluate, so
the configs go to Tilescope as a list) and a Kernel Tuner cache file: run it twice and the second
run measures nothing, answering from the cache. Its loop carries Kernel Tuner's
`#pragma unroll loop_unroll_factor_0` without tuning it, as Kernel Tuner's own reduction.cu does."""

import json
import os
import sys
from collections import OrderedDict

import numpy as np

from kernel_tuner import tune_kernel
from kernel_tuner.util import get_config_string

kernel_string = """
__global__ void sum_floats(float *sums, const float *array, int n) {
    __shared__ float partial[block_size_x];
    int ti = threadIdx.x;
    int step = block_size_x * num_blocks;
    float sum = 0.0f;
    #pragma unroll loop_unroll_factor_0
    for (int i = blockIdx.x * block_size_x + ti; i < n; i += step * vector) {
        for (int v = 0; v < vector; v++) {
            if (i + v * step < n) {
                sum += array[i + v * step];
            }
        }
    }
    partial[ti] = sum;
    __syncthreads();
    for (int s = block_size_x / 2; s > 0; s /= 2) {
        if (ti < s) {
            partial[ti] += partial[ti + s];
        }
        __syncthreads();
    }
    if (ti == 0) {
        sums[blockIdx.x] = partial[0];
    }
}
"""

size = 1 << 16
rng = np.random.default_rng(7)
array = rng.standard_normal(size).astype(np.float32)
sums = np.zeros(1024, dtype=np.float32)
n = np.int32(size)
args = [sums, array, n]

tune_params = OrderedDict()
tune_params["block_size_x"] = [2**i for i in range(5, 11)]
tune_params["num_blocks"] = [2**i for i in range(5, 11)]
tune_params["vector"] = [1, 2, 4]


def enough_work(block_size_x, num_blocks, vector):
    # A function in the list takes the values of every parameter, in order.
    return block_size_x * num_blocks * vector <= size


restrictions = [
    lambda p: p["num_blocks"] * p["block_size_x"] >= 2048,
    enough_work,
]

cache = sys.argv[1] if len(sys.argv) > 1 else "reduction_cache"

results, env = tune_kernel(
    "sum_floats",
    kernel_string,
    "num_blocks",
    args,
    tune_params,
    grid_div_x=[],
    restrictions=restrictions,
    cache=cache,
    quiet=True,
)

count = sum(
    1
    for bx in tune_params["block_size_x"]
    for nb in tune_params["num_blocks"]
    for v in tune_params["vector"]
    if nb * bx >= 2048 and bx * nb * v <= size and bx <= 1024
)
summary = {
    "expected": count,
    "results": len(results),
    "measured": sum(1 for r in results if r.get("compile_time", 0) > 0),
    "cache": os.path.abspath(cache + ".json"),
    "best": get_config_string(env["best_config"], list(tune_params)),
    "problem": env["tilescope"]["problem"],
}
print("KT-SUMMARY " + json.dumps(summary))
sys.exit(0 if summary["results"] == count else 1)
