#!/usr/bin/env python3
"""Triton's matrix-multiplication tutorial kernel (kernels/triton/matmul.py) tuned by
@triton.autotune and by `tilescope-cli triton`, beside cuBLAS, in one run on the GPU machine.

For each shape a small script defines the kernel under the tutorial's @triton.autotune (its eight
CUDA configs for fp16, key M, N, K) and calls it once, as the tutorial's `matmul` wrapper does. The
script runs twice with cold caches: under Python (Triton's autotuner compiles and benchmarks the
configs one after another) and under `tilescope-cli triton` (Tilescope compiles them in its pool and
measures them on its worker). Each run's first-call wall time and winner are printed; then both
winners and torch.matmul (cuBLAS) are timed with triton.testing.do_bench in one process.

    python3 tests/bench/triton_vs_autotune.py --cli build/release/app/tilescope-cli [--shapes 4096,4096,4096 ...]
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

DRIVER = r'''
import json, sys, time
sys.path.insert(0, {kernels!r})
import torch
import triton
import triton.language as tl
import matmul as tutorial


def get_cuda_autotune_config():
    return [
        triton.Config({{'BLOCK_SIZE_M': 128, 'BLOCK_SIZE_N': 256, 'BLOCK_SIZE_K': 64, 'GROUP_SIZE_M': 8}}, num_stages=3,
                      num_warps=8),
        triton.Config({{'BLOCK_SIZE_M': 64, 'BLOCK_SIZE_N': 256, 'BLOCK_SIZE_K': 32, 'GROUP_SIZE_M': 8}}, num_stages=4,
                      num_warps=4),
        triton.Config({{'BLOCK_SIZE_M': 128, 'BLOCK_SIZE_N': 128, 'BLOCK_SIZE_K': 32, 'GROUP_SIZE_M': 8}}, num_stages=4,
                      num_warps=4),
        triton.Config({{'BLOCK_SIZE_M': 128, 'BLOCK_SIZE_N': 64, 'BLOCK_SIZE_K': 32, 'GROUP_SIZE_M': 8}}, num_stages=4,
                      num_warps=4),
        triton.Config({{'BLOCK_SIZE_M': 64, 'BLOCK_SIZE_N': 128, 'BLOCK_SIZE_K': 32, 'GROUP_SIZE_M': 8}}, num_stages=4,
                      num_warps=4),
        triton.Config({{'BLOCK_SIZE_M': 128, 'BLOCK_SIZE_N': 32, 'BLOCK_SIZE_K': 32, 'GROUP_SIZE_M': 8}}, num_stages=4,
                      num_warps=4),
        triton.Config({{'BLOCK_SIZE_M': 64, 'BLOCK_SIZE_N': 32, 'BLOCK_SIZE_K': 32, 'GROUP_SIZE_M': 8}}, num_stages=5,
                      num_warps=2),
        triton.Config({{'BLOCK_SIZE_M': 32, 'BLOCK_SIZE_N': 64, 'BLOCK_SIZE_K': 32, 'GROUP_SIZE_M': 8}}, num_stages=5,
                      num_warps=2),
    ]


def get_wide_config():
    # The widened space of kernels/triton/matmul_wide.json: 108 configs.
    return [triton.Config({{'BLOCK_SIZE_M': m, 'BLOCK_SIZE_N': n, 'BLOCK_SIZE_K': k, 'GROUP_SIZE_M': 8}}, num_stages=s,
                          num_warps=w)
            for m in (64, 128, 256) for n in (64, 128, 256) for k in (32, 64) for s in (3, 4, 5) for w in (4, 8)]


CONFIGS = get_wide_config() if "--wide" in sys.argv else get_cuda_autotune_config()
matmul_kernel = triton.autotune(configs=CONFIGS, key=['M', 'N', 'K'])(tutorial.matmul_kernel)


def matmul(a, b, activation=""):
    M, K = a.shape
    K, N = b.shape
    c = torch.empty((M, N), device=a.device, dtype=torch.float16)
    grid = lambda META: (triton.cdiv(M, META['BLOCK_SIZE_M']) * triton.cdiv(N, META['BLOCK_SIZE_N']), )
    matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                        c.stride(1), ACTIVATION=activation)
    return c


M, N, K = (int(x) for x in sys.argv[1:4])
torch.manual_seed(0)
a = torch.randn((M, K), device="cuda", dtype=torch.float16)
b = torch.randn((K, N), device="cuda", dtype=torch.float16)
start = time.perf_counter()
c = matmul(a, b)
torch.cuda.synchronize()
first = time.perf_counter() - start
ref = torch.matmul(a, b)
best = matmul_kernel.best_config
print("RESULT " + json.dumps({{"first_call_s": first, "kwargs": best.kwargs, "num_warps": best.num_warps,
                              "num_stages": best.num_stages,
                              "max_error": float((c.float() - ref.float()).abs().max())}}), flush=True)
'''

TIMER = r'''
import json, sys
sys.path.insert(0, {kernels!r})
import torch
import triton
import matmul as tutorial

M, N, K = (int(x) for x in sys.argv[1:4])
configs = json.loads(sys.argv[4])
torch.manual_seed(0)
a = torch.randn((M, K), device="cuda", dtype=torch.float16)
b = torch.randn((K, N), device="cuda", dtype=torch.float16)
c = torch.empty((M, N), device="cuda", dtype=torch.float16)
flops = 2.0 * M * N * K
runs = {{}}
for name, cfg in configs.items():
    kw = dict(cfg["kwargs"])
    grid = (triton.cdiv(M, kw['BLOCK_SIZE_M']) * triton.cdiv(N, kw['BLOCK_SIZE_N']), )
    runs[name] = (lambda kw=kw, cfg=cfg, grid=grid: tutorial.matmul_kernel[grid](
        a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
        ACTIVATION="", num_warps=cfg["num_warps"], num_stages=cfg["num_stages"], **kw))
    runs[name]()
runs["cublas"] = lambda: torch.matmul(a, b)
# Interleaved rounds, each starting with another of them, the median of each: the GPU's clocks
# move under its power cap, and whichever was timed second in one pass would pay for it.
names = list(runs)
times = {{n: [] for n in names}}
for r in range({rounds}):
    for n in names[r % len(names):] + names[:r % len(names)]:
        times[n].append(triton.testing.do_bench(runs[n], rep=50))
out = {{n: flops / (sorted(t)[len(t) // 2] * 1e-3) / 1e12 for n, t in times.items()}}
# The rounds' spread of each, as TFLOP/s (the slowest round, the fastest): the noise to judge by.
spread = {{n: [flops / (max(t) * 1e-3) / 1e12, flops / (min(t) * 1e-3) / 1e12] for n, t in times.items()}}
print("SPREAD " + json.dumps(spread), flush=True)
print("RESULT " + json.dumps(out), flush=True)
'''


def result_of(text, tag="RESULT"):
    for line in text.splitlines():
        if line.startswith(tag + " "):
            return json.loads(line[len(tag) + 1:])
    raise RuntimeError(f"no {tag} in:\n" + text[-3000:])


def spread_line(text):
    """The timer's rounds, slowest to fastest, of each: "NAME 630.1-641.2, ..." TFLOP/s."""
    spread = result_of(text, "SPREAD")
    return "rounds' spread " + ", ".join(f"{n} {lo:.1f}-{hi:.1f}" for n, (lo, hi) in spread.items()) + " TFLOP/s"


def winner_of(cli, db):
    """The best config of the database's session, as the timer takes it."""
    shown = subprocess.run([cli, "show", str(db), "--json", "--top", "1"], capture_output=True, text=True, check=True)
    rows = json.loads(shown.stdout)
    best = rows[0] if isinstance(rows, list) else rows["results"][0]
    config = best.get("config", best)
    kwargs = {k: int(config[k]) for k in ("BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "GROUP_SIZE_M")}
    return {"kwargs": kwargs, "num_warps": int(config["num_warps"]), "num_stages": int(config["num_stages"])}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cli", required=True, help="tilescope-cli")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--shapes", nargs="*", default=["4096,4096,4096", "8192,8192,8192", "8192,8192,1024"])
    parser.add_argument("--work", help="a folder for the scripts and databases (default: a temporary one)")
    parser.add_argument("--wide", action="store_true",
                        help="the widened space (kernels/triton/matmul_wide.json, 108 configs): triton.autotune over "
                             "all of it against Tilescope's Bayesian search with a quarter of the configs")
    parser.add_argument("--budget", type=int, default=27, help="--wide: Tilescope's configs (default 27)")
    parser.add_argument("--rounds", type=int, default=7,
                        help="interleaved rounds of do_bench when the winners are timed side by side (default 7)")
    parser.add_argument("--time", metavar="JSON",
                        help="only time these winners side by side: {\"M,N,K\": {\"NAME\": {\"kwargs\": {...}, "
                             "\"num_warps\": W, \"num_stages\": S}}}")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    args.cli = str(Path(args.cli).resolve())  # the runs start in the work folder
    work = Path(args.work or tempfile.mkdtemp(prefix="triton-vs-autotune-"))
    work.mkdir(parents=True, exist_ok=True)
    kernels = str(REPO / "kernels" / "triton")
    (work / "driver.py").write_text(DRIVER.format(kernels=kernels))
    (work / "timer.py").write_text(TIMER.format(kernels=kernels, rounds=args.rounds))
    rows = []
    if args.time:
        for shape, winners in json.loads(Path(args.time).read_text()).items():
            M, N, K = shape.split(",")
            timed = subprocess.run([args.python, str(work / "timer.py"), M, N, K, json.dumps(winners)],
                                   capture_output=True, text=True, cwd=work)
            if timed.returncode != 0:
                print(timed.stdout[-3000:], timed.stderr[-3000:])
                return 1
            tflops = result_of(timed.stdout)
            print(f"{shape}: TFLOP/s " + ", ".join(f"{n} {v:.1f} ({v / tflops['cublas']:.3f} of cuBLAS)"
                                                  for n, v in tflops.items()), flush=True)
            print(f"{shape}: {spread_line(timed.stdout)}", flush=True)
        return 0
    for shape in args.shapes:
        M, N, K = shape.split(",")
        runs = {}
        for who in ("triton.autotune", "tilescope"):
            env = dict(os.environ)
            cache = work / f"cache-{who}-{shape.replace(',', 'x')}"
            shutil.rmtree(cache, ignore_errors=True)
            env["TRITON_CACHE_DIR"] = str(cache / "triton")
            if who == "triton.autotune":
                command = [args.python, str(work / "driver.py"), M, N, K] + (["--wide"] if args.wide else [])
            elif args.wide:
                db = work / f"wide-{shape.replace(',', 'x')}.db"
                if db.exists():
                    db.unlink()
                shape_index = {"4096,4096,4096": 0, "8192,8192,8192": 1, "8192,8192,1024": 2}[shape]
                command = [args.cli, "tune", str(REPO / "kernels/triton/matmul_wide.json"), "--shape",
                           str(shape_index), "--backend", "cuda:0", "--strategy", "bayes", "--budget",
                           str(args.budget), "--seed", "1", "--metrics", "none", "--cache-dir",
                           str(cache / "tilescope"), "--db", str(db)]
                env["TILESCOPE_PYTHON"] = args.python
            else:
                db = work / f"tilescope-{shape.replace(',', 'x')}.db"
                for stale in work.glob(db.name + "*"):
                    if stale.is_dir():
                        shutil.rmtree(stale)
                    else:
                        stale.unlink()
                command = [args.cli, "triton", "--backend", "cuda:0", "--db", str(db), "--python", args.python,
                           "--tune-arg=--cache-dir", f"--tune-arg={cache / 'tilescope'}", "--tune-arg=--metrics",
                           "--tune-arg=none", str(work / "driver.py"), M, N, K]
            start = time.perf_counter()
            done = subprocess.run(command, env=env, capture_output=True, text=True, cwd=work)
            wall = time.perf_counter() - start
            if done.returncode != 0:
                print(f"{who} at {shape} failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
                return 1
            if who == "tilescope" and args.wide:
                runs[who] = winner_of(args.cli, db) | {"first_call_s": wall, "max_error": float("nan")}
                print(done.stdout[-1500:])
            else:
                runs[who] = result_of(done.stdout)
            runs[who]["process_s"] = wall
            print(f"{shape} {who}: first call {runs[who]['first_call_s']:.1f} s (process {wall:.1f} s), winner "
                  f"{runs[who]['kwargs']} warps {runs[who]['num_warps']} stages {runs[who]['num_stages']}, "
                  f"max |C - cuBLAS| {runs[who]['max_error']:.3g}", flush=True)
        timed = subprocess.run([args.python, str(work / "timer.py"), M, N, K, json.dumps(runs)], capture_output=True,
                               text=True, cwd=work)
        if timed.returncode != 0:
            print(timed.stdout[-3000:], timed.stderr[-3000:])
            return 1
        tflops = result_of(timed.stdout)
        rows.append((shape, runs, tflops))
        print(f"{shape}: TFLOP/s triton.autotune's winner {tflops['triton.autotune']:.1f}, Tilescope's "
              f"{tflops['tilescope']:.1f}, cuBLAS {tflops['cublas']:.1f} "
              f"({tflops['triton.autotune'] / tflops['cublas']:.2f} / {tflops['tilescope'] / tflops['cublas']:.2f} "
              f"of cuBLAS)", flush=True)
        print(f"{shape}: {spread_line(timed.stdout)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
