#!/usr/bin/env python
"""Two kernels tuned as Kernel Tuner's expdist example tunes them: the first includes CUB's
<cub/cub.cuh> (under include/cccl in CUDA 13) and <stdio.h> for a printf, and a header of its own
through the compiler options (-I., with a -D beside it); the second is a template launched by its
name with the tuning parameter in it."""

import json
import sys
from collections import OrderedDict

import numpy

from kernel_tuner import tune_kernel

m, n = 2000, 2000
a = numpy.random.randn(m).astype(numpy.float64)
b = numpy.random.randn(n).astype(numpy.float64)

tune_params = OrderedDict()
tune_params["block_size_x"] = [32, 64]
tune_params["block_size_y"] = [1, 2, 4]
tune_params["tile_size_y"] = [1, 2]
max_blocks = int(numpy.ceil(m / 32) * numpy.ceil(n / 1))
partial = numpy.zeros(max_blocks).astype(numpy.float64)

with open("cross_term.cu", "r") as f:
    kernel_string = f.read()

first, env1 = tune_kernel("cross_term", kernel_string, (m, n), [partial, a, b, numpy.int32(m), numpy.int32(n)],
                          tune_params, grid_div_x=["block_size_x"], grid_div_y=["block_size_y", "tile_size_y"],
                          compiler_options=["-I.", "-DTERM_SCALE=0.5"], verbose=True)

second_params = OrderedDict()
second_params["block_size_x"] = [64, 128, 256]
total = numpy.zeros(1).astype(numpy.float64)
second, env2 = tune_kernel("reduce_terms<block_size_x>", kernel_string, 1,
                           [total, partial, numpy.int32(max_blocks)], second_params, grid_div_x=[],
                           compiler_options=["-I.", "-DTERM_SCALE=0.5"], verbose=True)

summary = {
    "first": len(first),
    "second": len(second),
    "errors": [r["__error__"].__class__.__name__ for r in first + second
               if "__error__" in r and r["__error__"].__class__.__name__ != "InvalidConfig"],
    "problems": [env1["tilescope"]["problem"], env2["tilescope"]["problem"]],
}
print("KT-SUMMARY " + json.dumps(summary))
sys.exit(0 if summary["first"] == 12 and summary["second"] == 3 and not summary["errors"] else 1)
