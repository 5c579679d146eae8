#!/usr/bin/env python
"""Kernel Tuner's vector_add_observers.py with observables Tilescope measures: nvml_energy and
nvml_power (its energy measurement) and temperature (the GPU state after each config's samples),
and a metric of them (GFLOPS/W)."""

from collections import OrderedDict

import numpy
from kernel_tuner import tune_kernel
from kernel_tuner.observers.nvml import NVMLObserver

kernel_string = """
__global__ void vector_add(float *c, float *a, float *b, int n) {
    int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}
"""

size = 1000000
a = numpy.random.randn(size).astype(numpy.float32)
b = numpy.random.randn(size).astype(numpy.float32)
c = numpy.zeros_like(b)
args = [c, a, b, numpy.int32(size)]
tune_params = {"block_size_x": [128, 256, 512]}

metrics = OrderedDict()
metrics["GFLOPS/W"] = lambda p: (size / 1e9) / p["nvml_energy"]

results, env = tune_kernel("vector_add", kernel_string, size, args, tune_params,
                           observers=[NVMLObserver(["nvml_energy", "nvml_power", "temperature"])], metrics=metrics, iterations=32)
for r in results:
    print("energy", r["block_size_x"], r.get("nvml_energy"), r.get("nvml_power"), r.get("temperature"), r.get("GFLOPS/W"))
