#!/usr/bin/env python
"""Kernel Tuner's less common options: block_size_names, a problem size and a grid divisor given
as functions, shared memory sized by a function, restrictions as a (function, names) tuple and a
plain function, bool, float and string parameters, and a kernel file with a header in a list."""

import json
import sys
from collections import OrderedDict

import numpy as np

from kernel_tuner import tune_kernel

w, h = 300, 200
out = np.zeros((h, w), dtype=np.float32)
inp = np.random.default_rng(5).standard_normal((h, w)).astype(np.float32)

tune_params = OrderedDict()
tune_params["bx"] = [16, 32, 64]
tune_params["by"] = [1, 2, 4, 8]
tune_params["use_square"] = [True, False]
tune_params["factor"] = [0.5, 1.0]
tune_params["variant"] = ["plain", "fast"]


def not_fast_at_half(bx, by, use_square, factor, variant):
    return not (variant == "fast" and factor == 0.5)


results, env = tune_kernel(
    "stencil",
    ["stencil.cu", "stencil_helper.cuh"],
    lambda p: (w, h),
    [out, inp, np.int32(w), np.int32(h)],
    tune_params,
    block_size_names=["bx", "by"],
    grid_div_x=lambda p: p["bx"],
    grid_div_y=["by"],
    smem_args={"size": lambda p: p["bx"] * p["by"] * 4},
    restrictions=[(lambda bx, by: bx * by >= 32, ["bx", "by"]), not_fast_at_half, "use_square or factor == 1.0"],
    quiet=True,
)

count = sum(
    1
    for bx in tune_params["bx"]
    for by in tune_params["by"]
    for sq in tune_params["use_square"]
    for f in tune_params["factor"]
    for v in tune_params["variant"]
    if bx * by >= 32 and not (v == "fast" and f == 0.5) and (sq or f == 1.0)
)
summary = {
    "expected": count,
    "results": len(results),
    "values": sorted({(r["use_square"], r["factor"], r["variant"]) for r in results}) == sorted(
        {(sq, f, v) for sq in [True, False] for f in [0.5, 1.0] for v in ["plain", "fast"]
         if not (v == "fast" and f == 0.5) and (sq or f == 1.0)}),
    "problem": env["tilescope"]["problem"],
}
print("KT-SUMMARY " + json.dumps(summary))
sys.exit(0 if summary["results"] == count and summary["values"] else 1)
