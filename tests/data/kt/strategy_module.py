#!/usr/bin/env python
"""Kernel Tuner's strategy modules passed as the strategy, as its vector_add_custom_strategy.py
example passes kernel_tuner.strategies.minimize: each runs as the strategy of its name does."""

import json

import numpy as np

import kernel_tuner
import kernel_tuner.strategies.minimize
from kernel_tuner import tune_kernel
from kernel_tuner.strategies import random_sample

kernel_string = """
__global__ void vector_add(float *c, const float *a, const float *b, int n) {
    int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}
"""

size = 10000
a = np.random.randn(size).astype(np.float32)
b = np.random.randn(size).astype(np.float32)
c = np.zeros_like(a)
args = [c, a, b, np.int32(size)]
tune_params = {"block_size_x": [32 * i for i in range(1, 9)]}

sampled, _ = tune_kernel("vector_add", kernel_string, size, args, tune_params, strategy=random_sample,
                         strategy_options={"fraction": 0.5}, quiet=True)
minimized, _ = tune_kernel("vector_add", kernel_string, size, args, tune_params,
                           strategy=kernel_tuner.strategies.minimize, strategy_options={"max_fevals": 3}, quiet=True)
print("KT-SUMMARY " + json.dumps({"sampled": len(sampled), "minimized": len(minimized)}))
