#!/usr/bin/env python3
"""Kernel Tuner as the oracle for launch geometry and source preparation: for every CUDA problem of
the T1 corpus and a sample of its valid configs, the thread block and grid Kernel Tuner launches
with, next to Tilescope's launch plan for the same config; and the source Kernel Tuner compiles
(util.prepare_kernel_string: the defines, loop_unroll_factor_*, #line 1, the kernel name with the
parameters' values), next to the source Tilescope compiles (`space --json --source`). Where Kernel Tuner's reading knows no block (no
GridDiv, no block_size_x/y/z parameter, a LocalSize of other names: it would launch 256 threads
whatever the file says), the oracle is the T1 format's rule, LocalSize and GlobalSize evaluated
here in Python.

Kernel Tuner's side is its own code: tune_kernel_T1's reading of the T1 file (ProblemSize,
GridDivX/Y/Z lists, no GridDiv as None), then util.check_block_size_params_names_list,
append_default_block_size_names and setup_block_and_grid, as its core calls them before a
launch. Tilescope's side is `tilescope-cli space --json`, whose "launches" are the worker's plan.

Kernel Tuner comes from PyPI into a throwaway virtual environment (made on the first run, in
--venv); it is never a dependency of Tilescope. Runs on a machine without a GPU:

    python3 tests/bench/kt_launch_oracle.py                       # 40 configs per problem
    python3 tests/bench/kt_launch_oracle.py --sample 200 --cli build/release/app/tilescope-cli

Prints a table (problem, configs compared, launches and sources that differ, the grid rule
Tilescope took) and the first mismatches; exits 1 on any mismatch, 2 when it cannot run.
"""

import argparse
import warnings
import glob
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
KERNEL_TUNER = "kernel_tuner==1.5.0"


def ensure_venv(venv):
    python = os.path.join(venv, "bin", "python")
    if not os.path.exists(python):
        print(f"kt_launch_oracle: making {venv} with {KERNEL_TUNER} from PyPI", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        subprocess.run([python, "-m", "pip", "install", "-q", KERNEL_TUNER], check=True)
    return python


def kernel_tuner_launch(util, kernelspec, tune_params, params):
    """Kernel Tuner's (threads, grid) for `params`, as tune_kernel_T1 and its core compute them."""
    grid_div = []
    for name in ("GridDivX", "GridDivY", "GridDivZ"):
        grid_div.append(kernelspec[name] if name in kernelspec and len(kernelspec[name]) > 0 else None)
    block_size_names = util.check_block_size_params_names_list(None, tune_params)
    util.append_default_block_size_names(block_size_names)
    if not block_size_names:
        block_size_names = util.default_block_size_names
    threads, grid = util.setup_block_and_grid(kernelspec["ProblemSize"], tuple(grid_div), params, block_size_names)
    return [int(t) for t in threads], [int(g) for g in grid]


def t1_launch(kernelspec, params):
    """The T1 format's own reading of LocalSize and GlobalSize, evaluated here in Python: the block
    is LocalSize; GlobalSize counts blocks with GlobalSizeType CUDA, else threads, divided by the
    block and rounded up; block_size_x/y/z that are not tuned are Kernel Tuner's defaults. Used
    where Kernel Tuner's reading knows no block."""
    env = {"block_size_x": 256, "block_size_y": 1, "block_size_z": 1}  # Kernel Tuner's default block
    env.update(params)
    env["ProblemSize"] = kernelspec["ProblemSize"]
    names = {"__builtins__": {}, "max": max, "min": min, "int": int}

    def value(e):
        return int(eval(str(e), names, env))  # noqa: S307 - the corpus's own expressions

    local, global_size = kernelspec.get("LocalSize", {}), kernelspec["GlobalSize"]
    block = [value(local.get(axis, 1)) for axis in "XYZ"]
    sizes = [value(global_size.get(axis, 1)) for axis in "XYZ"]
    if str(kernelspec.get("GlobalSizeType", "OpenCL")).upper() == "CUDA":
        return block, sizes
    return block, [-(-g // b) for g, b in zip(sizes, block)]


def kernel_tuner_source(util, kernelspec, problem_path, params, threads, grid):
    """The (kernel name, source) Kernel Tuner compiles for `params` launched as (threads, grid):
    its own prepare_kernel_string, as its core calls it (the default block size names, no
    user defines), on the kernel file read as Kernel Tuner reads it."""
    path = os.path.join(os.path.dirname(problem_path), kernelspec["KernelFile"])
    with open(path) as f:
        kernel_string = f.read()
    return util.prepare_kernel_string(kernelspec["KernelName"], kernel_string, params, tuple(grid), tuple(threads),
                                      util.default_block_size_names, "CUDA", None)


def first_difference(a, b):
    """A short account of where two texts part."""
    at = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    line = a.count("\n", 0, at) + 1
    return f"line {line}: Kernel Tuner {a[max(0, at - 30):at + 30]!r}, Tilescope {b[max(0, at - 30):at + 30]!r}"


def compare(args):
    import kernel_tuner.util as util  # noqa: E402 - only inside the virtual environment

    warnings.simplefilter("ignore", UserWarning)  # "None of the tunable parameters specify thread block dimensions!"

    problems = sorted(glob.glob(os.path.join(ROOT, "tests/data/t1corpus/*.json")))
    rows, mismatches, total, compared_t1, sources = [], [], 0, 0, 0
    for path in problems:
        with open(path) as f:
            t1 = json.load(f)
        kernelspec = t1.get("KernelSpecification")
        if not kernelspec or kernelspec.get("Language") != "CUDA" or "ProblemSize" not in kernelspec:
            continue
        name = os.path.relpath(path, ROOT)
        # Where the kernel file is missing, Kernel Tuner compiles nothing either: launches only.
        has_kernel = os.path.isfile(os.path.join(os.path.dirname(path), kernelspec.get("KernelFile", "")))
        out = subprocess.run([args.cli, "space", path, "--json", "--sample", str(args.sample), "--seed",
                              str(args.seed)] + (["--source"] if has_kernel else []), capture_output=True, text=True)
        if out.returncode != 0:
            rows.append((name, 0, 0, 0, "space failed: " + out.stderr.strip().splitlines()[-1]))
            mismatches.append((name, None, "tilescope-cli space failed", out.stderr.strip()))
            continue
        space = json.loads(out.stdout)
        if "launches" not in space:
            rows.append((name, 0, 0, 0, "no launch plan: " + space.get("launch_error", "")))
            mismatches.append((name, None, "no launch plan", space.get("launch_error", "")))
            continue
        tune_params = {p["name"]: p["values"] for p in space["parameters"]}
        # Without GridDiv and without its block size names among the parameters, Kernel Tuner's
        # reading knows no block (it would launch 256 threads and ProblemSize blocks, ignoring the
        # file's LocalSize and GlobalSize): there the oracle is the T1 format's own rule.
        knows_block = any(kernelspec.get(g) for g in ("GridDivX", "GridDivY", "GridDivZ")) or any(
            n.lower() in util.default_block_size_names for n in tune_params)
        by_t1 = not knows_block and "LocalSize" in kernelspec and "GlobalSize" in kernelspec
        wrong = 0
        wrong_source = 0
        undefined = ""
        supplied = {}
        prepared_list = space.get("prepared", [None] * len(space["samples"]))
        for params, launch, prepared in zip(space["samples"], space["launches"], prepared_list):
            try:
                if by_t1:
                    threads, grid = t1_launch(kernelspec, params)
                else:
                    try:
                        threads, grid = kernel_tuner_launch(util, kernelspec, tune_params, params)
                    except NameError as e:
                        # A GridDiv naming block_size_x that is not tuned: Kernel Tuner stops with
                        # a NameError; given its own default block (256, 1, 1) for that name, it
                        # launches as Tilescope does.
                        missing = str(e).split("'")[1] if "'" in str(e) else ""
                        if missing not in util.default_block_size_names:
                            raise
                        defaults = dict(zip(util.default_block_size_names, (256, 1, 1)))
                        supplied[missing] = defaults[missing]
                        threads, grid = kernel_tuner_launch(util, kernelspec, tune_params, {**params, **supplied})
            except Exception as e:  # noqa: BLE001 - Kernel Tuner cannot launch this problem at all
                undefined = f"{type(e).__name__}: {e}"
                break
            ours = (launch["block"], launch["grid"])
            if ours != (threads, grid):
                wrong += 1
                oracle = "T1 rule" if by_t1 else "Kernel Tuner"
                mismatches.append((name, params, f"{oracle} block {threads} grid {grid}",
                                   f"Tilescope block {launch['block']} grid {launch['grid']}"))
            # The source for the launch Tilescope makes (where the two launches agree, Kernel
            # Tuner's own): Kernel Tuner's defines carry the launch's grid and block.
            if prepared is None:
                continue
            kt_name, kt_source = kernel_tuner_source(util, kernelspec, path, params, launch["block"], launch["grid"])
            if (kt_name, kt_source) != (prepared["kernel_name"], prepared["source"]):
                wrong_source += 1
                theirs = f"Kernel Tuner kernel {kt_name}" if kt_name != prepared["kernel_name"] else "source"
                mismatches.append((name, params, theirs, first_difference(kt_source, prepared["source"])
                                   if kt_source != prepared["source"] else f"Tilescope kernel {prepared['kernel_name']}"))
        if undefined:
            # Kernel Tuner defines no launch for it (it fails before launching): nothing to compare.
            rows.append((name, 0, 0, 0, f"not comparable: Kernel Tuner fails ({undefined})"))
            continue
        sources += len(space["samples"]) if "prepared" in space else 0
        if by_t1:
            compared_t1 += len(space["samples"])
            rows.append((name, len(space["samples"]), wrong, wrong_source,
                         f"{space['launch_rule']}; oracle: the T1 rule (Kernel Tuner knows no block here)"))
            continue
        total += len(space["samples"])
        given = "".join(f"; Kernel Tuner given its default {k}={v}" for k, v in supplied.items())
        rows.append((name, len(space["samples"]), wrong, wrong_source, space["launch_rule"] + given))

    width = max(len(r[0]) for r in rows)
    print(f"{'problem':<{width}}  {'configs':>7}  {'launch':>6}  {'source':>6}  Tilescope's grid rule")
    for name, n, wrong, wrong_source, rule in rows:
        print(f"{name:<{width}}  {n:>7}  {wrong:>6}  {wrong_source:>6}  {rule}")
    print(f"\n{len(rows)} CUDA problems, {total} configs' launches compared with Kernel Tuner, {compared_t1} with "
          f"the T1 rule; {sources} prepared sources compared with Kernel Tuner's; {len(mismatches)} differ")
    for name, params, theirs, ours in mismatches[:20]:
        print(f"  {name}: {json.dumps(params)}\n    {theirs}\n    {ours}")
    return 1 if mismatches else 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cli", default=os.path.join(ROOT, "build/release/app/tilescope-cli"), help="tilescope-cli to ask")
    p.add_argument("--sample", type=int, default=40, help="configs per problem (default 40)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--venv", default=os.path.join(ROOT, "build/kt-oracle-venv"),
                   help="the throwaway virtual environment with Kernel Tuner (made when missing)")
    p.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if not os.path.exists(args.cli):
        print(f"kt_launch_oracle: no {args.cli}; build first (README's quick start)", file=sys.stderr)
        return 2
    if args.inside:
        return compare(args)
    python = ensure_venv(args.venv)
    forwarded = ["--cli", args.cli, "--sample", str(args.sample), "--seed", str(args.seed), "--inside"]
    return subprocess.run([python, os.path.abspath(__file__)] + forwarded).returncode


if __name__ == "__main__":
    sys.exit(main())
