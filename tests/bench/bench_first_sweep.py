#!/usr/bin/env python3
"""A first sweep's pace: configs per second with a cold compile cache and with a warm one, how
busy the compile pool and the GPU were (the session's provenance, "pipeline"), for a problem.

    python3 tests/bench/bench_first_sweep.py --cli build/release/app/tilescope-cli \
        --problem kernels/sgemm/sgemm.json --configs 1000 [--backend cuda] [--shape 0]

Each run is `tilescope-cli tune PROBLEM --strategy random --seed S --budget N --confirm 0` in a
fresh database; the cold run gets an empty compile cache, the warm run the cache the cold run
left. With --backend analysis:sm_90 it measures the compile side alone, without a GPU.
"""
import argparse
import json
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def run(args, cache, db):
    cmd = [args.cli, "tune", args.problem, "--backend", args.backend, "--shape", str(args.shape),
           "--strategy", "random", "--seed", str(args.seed), "--budget", str(args.configs), "--confirm", "0",
           "--cache-dir", str(cache), "--db", str(db), *args.tune_arg]
    started = time.monotonic()
    done = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - started
    if done.returncode != 0:
        sys.exit(f"tune failed ({done.returncode}): {' '.join(cmd)}\n{done.stderr[-2000:]}")
    with sqlite3.connect(db) as con:
        provenance = json.loads(con.execute("select provenance from sessions order by id desc limit 1").fetchone()[0])
    pipeline = provenance.get("pipeline", {})
    configs = pipeline.get("configs", 0)
    seconds = pipeline.get("wall_seconds", wall)
    return {
        "configs": configs,
        "binaries_compiled": pipeline.get("binaries_compiled"),
        "seconds": round(seconds, 2),
        "configs_per_second": round(configs / seconds, 1) if seconds > 0 else None,
        "compile_pool_busy": pipeline.get("compile_pool_busy"),
        "gpu_busy": pipeline.get("gpu_busy"),
        "process_seconds": round(wall, 2),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", required=True)
    ap.add_argument("--problem", required=True)
    ap.add_argument("--backend", default="cuda")
    ap.add_argument("--shape", type=int, default=0)
    ap.add_argument("--configs", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--tune-arg", action="append", default=[],
                    help="pass this argument on to tune (repeat: --tune-arg=--metrics --tune-arg=none)")
    ap.add_argument("--json", help="also write the figures as JSON to FILE")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        rows = {"cold": run(args, tmp / "cache", tmp / "cold.db"), "warm": run(args, tmp / "cache", tmp / "warm.db")}
    pct = lambda v: "-" if v is None else f"{100 * v:.0f} %"
    print(f"{args.problem} shape {args.shape} on {args.backend}, {args.configs} random configs (seed {args.seed})"
          f"{' ' + ' '.join(args.tune_arg) if args.tune_arg else ''}")
    print("| cache | configs | binaries compiled | seconds | configs/s | compile pool busy | GPU busy |")
    print("|---|---|---|---|---|---|---|")
    for name, r in rows.items():
        print(f"| {name} | {r['configs']} | {r['binaries_compiled']} | {r['seconds']} | {r['configs_per_second']} | "
              f"{pct(r['compile_pool_busy'])} | {pct(r['gpu_busy'])} |")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
