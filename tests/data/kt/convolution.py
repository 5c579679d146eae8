#!/usr/bin/env python
"""A 2D convolution tuned as Kernel Tuner's convolution example tunes it: grid divisor lists,
the filter in constant memory (cmem_args), the expected output as answer."""

import json
import sys
from collections import OrderedDict

import numpy as np

from kernel_tuner import tune_kernel

width, height = 256, 128
fw, fh = 5, 5
problem_size = (width, height)

rng = np.random.default_rng(1)
output = np.zeros(width * height, dtype=np.float32)
input_image = rng.standard_normal((height + fh - 1) * (width + fw - 1)).astype(np.float32)
conv_filter = rng.standard_normal(fw * fh).astype(np.float32)

# The expected output, computed on the host.
image = input_image.reshape(height + fh - 1, width + fw - 1).astype(np.float64)
kernel = conv_filter.reshape(fh, fw).astype(np.float64)
expected = np.zeros((height, width))
for i in range(fh):
    for j in range(fw):
        expected += image[i : i + height, j : j + width] * kernel[i, j]
answer = [expected.astype(np.float32).ravel(), None, None, None, None]

args = [output, input_image, conv_filter, np.int32(width), np.int32(height)]

tune_params = OrderedDict()
tune_params["block_size_x"] = [16, 32, 64]
tune_params["block_size_y"] = [2, 4, 8, 16]
tune_params["tile_size_x"] = [1, 2]
tune_params["tile_size_y"] = [1, 2, 4]

grid_div_x = ["block_size_x", "tile_size_x"]
grid_div_y = ["block_size_y", "tile_size_y"]

metrics = OrderedDict()
metrics["GFLOP/s"] = lambda p: 2 * width * height * fw * fh / 1e9 / (p["time"] / 1e3)

results, env = tune_kernel(
    "convolution_kernel",
    "convolution.cu",
    problem_size,
    args,
    tune_params,
    grid_div_x=grid_div_x,
    grid_div_y=grid_div_y,
    cmem_args={"d_filter": conv_filter},
    answer=answer,
    atol=1e-3,
    restrictions=["block_size_x * block_size_y >= 64", "tile_size_x * tile_size_y <= 4"],
    metrics=metrics,
    objective="GFLOP/s",
    verbose=True,
)

count = 0
for bx in tune_params["block_size_x"]:
    for by in tune_params["block_size_y"]:
        for tx in tune_params["tile_size_x"]:
            for ty in tune_params["tile_size_y"]:
                if bx * by >= 64 and tx * ty <= 4 and bx * by <= 1024:
                    count += 1
summary = {
    "expected": count,
    "results": len(results),
    "metrics": all("GFLOP/s" in r for r in results if "__error__" not in r),
    "best": {k: env["best_config"][k] for k in tune_params},
    "problem": env["tilescope"]["problem"],
}
print("KT-SUMMARY " + json.dumps(summary))
sys.exit(0 if summary["results"] == count else 1)
