#!/usr/bin/env python
"""Kernel Tuner's vector_add, as its documentation writes it: the kernel inline, a metric, a
string restriction. Run it with `tilescope-cli kt vector_add.py` (add --backend analysis:sm_90
without a GPU)."""

import json
import sys
from collections import OrderedDict

import numpy

from kernel_tuner import tune_kernel
from kernel_tuner.file_utils import store_metadata_file, store_output_file

kernel_string = """
__global__ void vector_add(float *c, const float *a, const float *b, int n) {
    int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}
"""

size = 100000

a = numpy.random.randn(size).astype(numpy.float32)
b = numpy.random.randn(size).astype(numpy.float32)
c = numpy.zeros_like(b)
n = numpy.int32(size)

args = [c, a, b, n]

tune_params = OrderedDict()
tune_params["block_size_x"] = [32 * i for i in range(1, 33)]
tune_params["tile"] = [1, 2, 4]

metrics = OrderedDict()
metrics["GB/s"] = lambda p: 3 * 4 * size / 1e9 / (p["time"] / 1e3)
metrics["bytes_per_thread"] = "12 * tile"

results, env = tune_kernel(
    "vector_add",
    kernel_string,
    size,
    args,
    tune_params,
    restrictions=["block_size_x * tile <= 1024", "block_size_x % 64 == 0 or tile == 1"],
    metrics=metrics,
)

store_output_file("vector_add_results.json", results, tune_params)
store_metadata_file("vector_add_metadata.json")

# What the test reads: the count Python's own enumeration gives, and the results.
expected = sum(
    1
    for bx in tune_params["block_size_x"]
    for t in tune_params["tile"]
    if bx * t <= 1024 and (bx % 64 == 0 or t == 1)
)
summary = {
    "expected": expected,
    "results": len(results),
    "metrics": all("bytes_per_thread" in r and r["bytes_per_thread"] == 12 * r["tile"] for r in results),
    "gbs": all("GB/s" in r for r in results),
    "best": {k: env["best_config"][k] for k in tune_params},
    "device_name": env["device_name"],
    "problem": env["tilescope"]["problem"],
}
print("KT-SUMMARY " + json.dumps(summary))
sys.exit(0 if summary["results"] == expected else 1)
