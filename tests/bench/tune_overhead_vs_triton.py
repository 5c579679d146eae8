#!/usr/bin/env python3
"""Tuning overhead per config, Tilescope against triton.autotune, measured in one run.

Both tune an FP32 GEMM at 2048^3 over the same number of configs on the same GPU:

- triton.autotune: a Triton matmul (fp32 inputs, IEEE fp32 dot, fp32 accumulation) over a
  seeded sample of N configs (BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages); the wall
  time of the first call, which compiles and benchmarks every config. Cold: an empty Triton
  cache. Warm: a new process over the cache the cold run filled (autotune benchmarks again).
- Tilescope: `bench_tune_cuda kernels/sgemm/sgemm.json 1 N SESSIONS`: a seeded random sample
  of N sgemm configs, the first session with an empty compile cache (cold), the others warm.

The figure is wall time per config (compile + benchmark + bookkeeping), not kernel speed: the
kernels differ. Each tuner's result is checked (Triton's winner against torch in float64,
Tilescope verifies every config against its reference). Exits 1 when Tilescope is not faster
per config both cold and warm, 2 on an error.

    python3 tests/bench/tune_overhead_vs_triton.py --bench build/release/tests/bench/bench_tune_cuda \
        --worker build/release/app/tilescope-worker --configs 64

Needs PyTorch and Triton (the GPU machine has them); never a dependency of Tilescope.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

TRITON_CHILD = r'''
import json, random, sys, time
import torch, triton, triton.language as tl

@triton.jit
def matmul(a, b, c, M, N, K, sam, sak, sbk, sbn, scm, scn,
           BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pn * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        kk = k * BLOCK_K + rk
        x = tl.load(a + rm[:, None] * sam + kk[None, :] * sak, mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        y = tl.load(b + kk[:, None] * sbk + rn[None, :] * sbn, mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(x, y, acc, input_precision="ieee")
    tl.store(c + rm[:, None] * scm + rn[None, :] * scn, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))

n, seed, size = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
space = [(bm, bn, bk, w, s) for bm in (32, 64, 128, 256) for bn in (32, 64, 128, 256) for bk in (16, 32, 64)
         for w in (4, 8) for s in (2, 3, 4)]
random.Random(seed).shuffle(space)
configs = [triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk}, num_warps=w, num_stages=s)
           for bm, bn, bk, w, s in space[:n]]
tuned = triton.autotune(configs=configs, key=["M", "N", "K"])(matmul)

torch.manual_seed(seed)
a = torch.randn(size, size, device="cuda", dtype=torch.float32)
b = torch.randn(size, size, device="cuda", dtype=torch.float32)
c = torch.full((size, size), float("nan"), device="cuda", dtype=torch.float32)
grid = lambda meta: (triton.cdiv(size, meta["BLOCK_M"]), triton.cdiv(size, meta["BLOCK_N"]))
torch.cuda.synchronize()
start = time.perf_counter()
tuned[grid](a, b, c, size, size, size, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))
torch.cuda.synchronize()
wall = time.perf_counter() - start
ref = a.double() @ b.double()
err = ((c.double() - ref).norm() / ref.norm()).item()
best = tuned.best_config
ms = triton.testing.do_bench(lambda: tuned[grid](a, b, c, size, size, size, a.stride(0), a.stride(1), b.stride(0),
                                                  b.stride(1), c.stride(0), c.stride(1)), return_mode="median")
print(json.dumps({"configs": len(configs), "wall_s": wall, "rel_err": err, "best": str(best), "best_ms": ms,
                  "tflops": 2 * size ** 3 / ms / 1e9, "triton": triton.__version__, "torch": torch.__version__,
                  "device": torch.cuda.get_device_name()}))
'''


def run_triton(configs, seed, size, cache_dir):
    env = dict(os.environ, TRITON_CACHE_DIR=os.path.join(cache_dir, "triton"))
    child = os.path.join(cache_dir, "triton_matmul.py")  # Triton reads a jit function's source from its file
    with open(child, "w") as f:
        f.write(TRITON_CHILD)
    out = subprocess.run([sys.executable, child, str(configs), str(seed), str(size)], env=env, capture_output=True,
                         text=True)
    if out.returncode != 0:
        raise RuntimeError("the Triton run failed:\n" + out.stderr[-4000:])
    result = json.loads(out.stdout.strip().splitlines()[-1])
    if not result["rel_err"] < 1e-4:  # also false for NaN (an output left unwritten)
        raise RuntimeError(f"Triton's winner is wrong: relative error {result['rel_err']}")
    return result


def run_tilescope(bench, worker, problem, configs, sessions):
    env = dict(os.environ, TILESCOPE_WORKER=worker)
    out = subprocess.run([bench, problem, "1", str(configs), str(sessions)], env=env, capture_output=True, text=True)
    sys.stderr.write(out.stdout)
    m = re.search(r"wall per config: cold cache ([\d.]+) ms, warm cache ([\d.]+) ms", out.stdout)
    if not m:
        raise RuntimeError("bench_tune_cuda did not report its times:\n" + out.stdout[-2000:] + out.stderr[-2000:])
    ok = re.search(r"session 1 \(cold cache\): (\d+) configs .* ok (\d+);", out.stdout)
    return {"cold_ms": float(m.group(1)), "warm_ms": float(m.group(2)), "goals": out.returncode == 0,
            "configs": int(ok.group(1)) if ok else None, "ok": int(ok.group(2)) if ok else None}


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bench", default=os.path.join(root, "build/release/tests/bench/bench_tune_cuda"))
    p.add_argument("--worker", default=os.path.join(root, "build/release/app/tilescope-worker"))
    p.add_argument("--problem", default=os.path.join(root, "kernels/sgemm/sgemm.json"))
    p.add_argument("--configs", type=int, default=64, help="configs each tuner tunes (default 64)")
    p.add_argument("--sessions", type=int, default=3, help="Tilescope sessions, the first cold (default 3)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--size", type=int, default=2048, help="M = N = K (default 2048, sgemm's shape 1)")
    args = p.parse_args()
    if args.configs < 1 or args.sessions < 2:
        p.error("--configs must be at least 1 and --sessions at least 2 (one cold, one warm)")
    try:
        with tempfile.TemporaryDirectory() as cache:
            cold = run_triton(args.configs, args.seed, args.size, cache)
            warm = run_triton(args.configs, args.seed, args.size, cache)
        tile = run_tilescope(args.bench, args.worker, args.problem, args.configs, args.sessions)
    except (RuntimeError, OSError) as e:
        print(f"tune_overhead_vs_triton: {e}", file=sys.stderr)
        return 2
    tc, tw = 1e3 * cold["wall_s"] / cold["configs"], 1e3 * warm["wall_s"] / warm["configs"]
    print(f"\n{cold['device']}, {args.configs} configs each, FP32 GEMM {args.size}^3; "
          f"Triton {cold['triton']}, PyTorch {cold['torch']}")
    print("| tuner | cold: ms per config | warm: ms per config |")
    print("|---|---|---|")
    print(f"| triton.autotune | {tc:.0f} | {tw:.0f} |")
    print(f"| Tilescope (tune, NVRTC pool, worker) | {tile['cold_ms']:.0f} | {tile['warm_ms']:.0f} |")
    print(f"| ratio | {tc / tile['cold_ms']:.1f}x | {tw / tile['warm_ms']:.1f}x |")
    print(f"Triton's winner {cold['best']}: {cold['best_ms']:.3f} ms, {cold['tflops']:.1f} TFLOP/s, "
          f"relative error {cold['rel_err']:.1e}; Tilescope: {tile['ok']} of {tile['configs']} configs verified "
          f"in the cold session")
    faster = tile["cold_ms"] < tc and tile["warm_ms"] < tw
    print("goal (Tilescope faster per config, cold and warm): " + ("met" if faster else "NOT met"))
    return 0 if faster else 1


if __name__ == "__main__":
    sys.exit(main())
