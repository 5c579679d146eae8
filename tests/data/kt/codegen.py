#!/usr/bin/env python
"""A kernel written by a Python function of the parameters, in Kernel Tuner's code-generator
style: the unroll depth is written into the code as a literal, so each value of `unroll` gives
other code (and `block_size_x`, a define, does not)."""

import json

import numpy as np

from kernel_tuner import tune_kernel


def generate(params):
    body = "\n".join(
        f"        if (i + {k} * stride < n) acc += x[i + {k} * stride];" for k in range(params["unroll"])
    )
    return f"""
__global__ void strided_sum(float *out, const float *x, int n) {{
    int i = blockIdx.x * block_size_x + threadIdx.x;
    int stride = gridDim.x * block_size_x;
    float acc = 0.0f;
{body}
    out[i] = acc;
}}
"""


size = 1 << 16
x = np.random.randn(size).astype(np.float32)
out = np.zeros(size // 2, dtype=np.float32)
args = [out, x, np.int32(size)]
tune_params = {"block_size_x": [64, 128, 256], "unroll": [1, 2, 4, 8]}

results, env = tune_kernel(
    "strided_sum", generate, size // 2, args, tune_params, lang="CUDA", restrictions=["block_size_x * unroll <= 1024"]
)
print("KT-SUMMARY " + json.dumps({"count": len(results), "configs": sorted([r["block_size_x"], r["unroll"]] for r in results)}))
