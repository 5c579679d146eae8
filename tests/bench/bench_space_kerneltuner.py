#!/usr/bin/env python3
"""Side-by-side: Kernel Tuner builds the same config space as bench_space.

Kernel Tuner is used only by this benchmark, from PyPI in a throwaway virtual environment:

    python3 -m venv /tmp/kt && /tmp/kt/bin/pip install kernel_tuner
    /tmp/kt/bin/python tests/bench/bench_space_kerneltuner.py [tests/bench/data/space10.json]

It reads the T1 problem's parameters and conditions (the shape's names substituted, as Kernel
Tuner has no shapes), builds Kernel Tuner's Searchspace with its default solver, and prints the
valid count and the median time of a few builds.
"""
import ast
import json
import re
import statistics
import sys
import time
from pathlib import Path

from kernel_tuner.searchspace import Searchspace


def main():
    path = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent / "data" / "space10.json")
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    problem = json.loads(path.read_text())
    tune_params = {}
    for p in problem["ConfigurationSpace"]["TuningParameters"]:
        values = p["Values"]
        tune_params[p["Name"]] = list(eval(values, {"range": range})) if "range" in values else ast.literal_eval(values)
    shape = problem.get("Tilescope", {}).get("Shapes", [{}])[0]
    restrictions = []
    for c in problem["ConfigurationSpace"]["Conditions"]:
        expr = c["Expression"]
        for name, value in shape.items():
            expr = re.sub(rf"\b{name}\b", str(value), expr)
        restrictions.append(expr)
    times, size = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        space = Searchspace(tune_params, restrictions, max_threads=1 << 30)
        times.append(time.perf_counter() - start)
        size = space.size
    raw = 1
    for v in tune_params.values():
        raw *= len(v)
    print(f"problem           {path}")
    print(f"raw configs       {raw}")
    print(f"valid configs     {size}")
    print(f"Kernel Tuner      {statistics.median(times) * 1e3:.1f} ms (median of {repeats}; "
          f"min {min(times) * 1e3:.1f}, max {max(times) * 1e3:.1f})")


if __name__ == "__main__":
    main()
