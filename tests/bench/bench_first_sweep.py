#!/usr/bin/env python3
r"""A first sweep's pace: configs per second with a cold compile cache and with a warm one, how
busy the compile pool and the GPU were (the session's provenance, "pipeline"), for a problem.

    python3 tests/bench/bench_first_sweep.py --cli build/release/app/tilescope-cli \
        --problem kernels/sgemm/sgemm.json --configs 1000 [--backend cuda] [--shape 0]

Each run is `tilescope-cli tune PROBLEM --strategy random --seed S --budget N --confirm 0` in a
fresh database; the cold run gets an empty compile cache, the warm run the cache the cold run
left. With --backend analysis:sm_90 it measures the compile side alone, without a GPU.

A cold sweep on N ranks, simulated from a recording's per-config compile and benchmark seconds:

    python3 tests/bench/bench_first_sweep.py --simulate tests/bench/data/lab/sgemm-h200-4096.t4.json.gz \
        --configs 1000 --ranks 8 --threads 16

This is a discrete-event simulation in Python, not a run of Tilescope: it takes N random configs
of the recording (a T4 file, gzip-compressed or not, or a Tilescope database), gives each the
compile time and the benchmark time it was recorded with (the compile time times --compile-scale,
the benchmark time times --pace, the rule of `tune --replay-pace`: a replayed config takes its
recorded benchmark time), and plays the session's
pipeline as TuningSession and the MPI backend run it: the strategy's configs are submitted to a
compile pool first in, first out, up to batch + 2 x threads ahead of measurement (a batch is
max(2 per GPU, 4 per slot), as the MPI backend asks); each GPU, as soon as it is idle, takes the
next config whose compile is done, in the order they were proposed (the backend's feed).
Set-ups:

- one rank: one GPU, one pool of --threads;
- old model, N ranks: rank 0 compiles every config on its --threads, the N ranks' GPUs measure,
  in batches that each wait for their slowest config (the session before 2026-12-04);
- ranks compile, N ranks, batch barrier: each rank's --threads compile (rank 0 hands each compile
  to the rank with the most idle threads: one pool of N x --threads), the N GPUs measure in
  batches (the session of 2026-12-03);
- ranks compile, N ranks: the same, each GPU taking the next ready config when idle (the session
  now).

It prints each one's wall time, configs/s over the whole sweep and at steady state (the middle
90 % of measurement ends, as cluster_scaling.py counts), and their ratio to N x one rank (the
goal for ranks compiling: 0.9 or more). Left out: the transfer of a compile's result and its cubin
(tens of kB each way), rank 0's bookkeeping (about 0.3 ms a config), and configs that share a
binary (a recording gives each its own compile time).
"""
import argparse
import gzip
import heapq
import json
import random
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
        session, text = con.execute("select id, provenance from sessions order by id desc limit 1").fetchone()
        provenance = json.loads(text)
        nvrtc = con.execute("select avg(compile_s) from results where session_id = ? and compile_s > 0",
                            (session,)).fetchone()[0]
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
        "nvrtc_seconds_a_config": round(nvrtc, 3) if nvrtc is not None else None,
        # What the compile threads allow on this machine: the pool's busy fraction is the share of
        # it the sweep reached (its compile seconds over threads x wall).
        "compile_ceiling_configs_per_second": round(configs / (seconds * busy), 1)
        if seconds > 0 and (busy := pipeline.get("compile_pool_busy")) else None,
        "process_seconds": round(wall, 2),
        # Where a measured config's benchmark time went (ms), and where its outputs were compared.
        "benchmark_ms_a_config": pipeline.get("benchmark_ms_a_config"),
        "outputs_compared_on_gpu": pipeline.get("outputs_compared_on_gpu"),
        "outputs_downloaded": pipeline.get("outputs_downloaded"),
        # The configs the race stopped early and those profiled (the leaders), of the measured.
        "configs_raced": pipeline.get("configs_raced"),
        "configs_profiled": pipeline.get("configs_profiled"),
    }


def recorded_times(path):
    """(compile seconds, benchmark seconds) of every config of a recording: a T4 file (gzip or
    not) or a Tilescope database."""
    path = Path(path)
    if path.suffix == ".db":
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as con:  # leaves its WAL files as they are
            session = con.execute("select id from sessions order by id desc limit 1").fetchone()[0]
            return [(c, b) for c, b in con.execute(
                "select compile_s, benchmark_s from results where session_id = ?", (session,))]
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        doc = json.load(f)
    times = []
    for r in doc["results"]:
        ours = r.get("tilescope", {})
        recorded = r.get("times", {})
        compile_s = ours.get("compile_s", recorded.get("compilation_time", 0) / 1000)
        benchmark_s = ours.get("benchmark_s", recorded.get("benchmark", 0) / 1000)
        times.append((compile_s, benchmark_s))
    return times


def steady_rate(ends):
    """Configs per second from the middle 90 % of the measurement ends (as cluster_scaling.py)."""
    ends = sorted(ends)
    lo, hi = int(0.05 * len(ends)), int(0.95 * len(ends)) - 1
    return (hi - lo) / (ends[hi] - ends[lo]) if hi > lo and ends[hi] > ends[lo] else float("nan")


def simulate(configs, pool_threads, gpus, barrier=False):
    """Wall seconds, GPU seconds and each config's measurement end of a session that compiles on
    `pool_threads` threads and measures on `gpus` GPUs; `configs` is [(compile s, benchmark s)]
    in the order the strategy proposes them. `barrier`: measured in batches, as the session did
    until 2026-12-03 (each batch ends with its last config); else each GPU takes the next config
    whose compile is done as soon as it is idle, as the session does now."""
    batch = 4 * gpus
    ahead = batch + 2 * pool_threads
    free = [0.0] * pool_threads  # when each compile thread is next free
    done_at = []                 # each config's compile end
    queue = []                   # proposed, not yet measured
    nxt = 0
    busy = 0.0
    ends = []

    def propose(t):
        nonlocal nxt
        while len(queue) < ahead and nxt < len(configs):
            start = max(t, heapq.heappop(free))
            end = start + configs[nxt][0]
            heapq.heappush(free, end)
            done_at.append(end)
            queue.append(nxt)
            nxt += 1

    propose(0.0)
    if not barrier:
        gpu = [0.0] * gpus
        while queue:
            t = heapq.heappop(gpu)
            t = max(t, min(done_at[i] for i in queue))
            propose(t)
            i = next(i for i in queue if done_at[i] <= t)
            queue.remove(i)
            heapq.heappush(gpu, t + configs[i][1])
            busy += configs[i][1]
            ends.append(t + configs[i][1])
            propose(t)
        return max(ends), busy, ends
    t = 0.0
    while queue:
        ready = [i for i in queue if done_at[i] <= t][:batch]
        if not ready:
            t = min(done_at[i] for i in queue)  # waits for whichever compile finishes first
            propose(t)
            continue
        taken = set(ready)
        queue[:] = [i for i in queue if i not in taken]
        gpu = [t] * gpus
        for i in ready:
            start = heapq.heappop(gpu)
            heapq.heappush(gpu, start + configs[i][1])
            busy += configs[i][1]
            ends.append(start + configs[i][1])
        t = max(gpu)  # the batch ends with its last config
        propose(t)
    return t, busy, ends


def simulate_ranks(args):
    times = recorded_times(args.simulate)
    rng = random.Random(args.seed)
    picked = rng.sample(times, min(args.configs, len(times)))
    configs = [(c * args.compile_scale, b * args.pace) for c, b in picked]
    n, threads = args.ranks, args.threads
    gpus = args.gpus_per_rank
    rows = [
        ("one rank", 1, threads, gpus, False),
        (f"old model: rank 0 compiles, {n} ranks, batch barrier", n, threads, n * gpus, True),
        (f"ranks compile, {n} ranks, batch barrier", n, n * threads, n * gpus, True),
        (f"ranks compile, {n} ranks", n, n * threads, n * gpus, False),
    ]
    mean_compile = sum(c for c, _ in configs) / len(configs)
    mean_bench = sum(b for _, b in configs) / len(configs)
    print(f"{args.simulate}: {len(configs)} random configs (seed {args.seed}), compile {mean_compile:.3f} s and "
          f"benchmark {mean_bench:.3f} s a config on average; {threads} compile threads and {gpus} GPU a rank")
    print("| set-up | compile threads | GPUs | wall | configs/s | GPUs busy | vs ranks x one rank | "
          "steady configs/s | vs ranks x one rank |")
    print("|---|---|---|---|---|---|---|---|---|")
    one = None
    out = {}
    for name, ranks, pool, g, barrier in rows:
        wall, busy, ends = simulate(configs, pool, g, barrier)
        rate, steady = len(configs) / wall, steady_rate(ends)
        if one is None:
            one = (rate, steady)
        out[name] = {"ranks": ranks, "compile_threads": pool, "gpus": g, "wall_seconds": round(wall, 2),
                     "configs_per_second": round(rate, 1), "gpu_busy": round(busy / (wall * g), 3),
                     "ratio": round(rate / (ranks * one[0]), 3), "steady_configs_per_second": round(steady, 1),
                     "steady_ratio": round(steady / (ranks * one[1]), 3)}
        r = out[name]
        print(f"| {name} | {pool} | {g} | {wall:.1f} s | {rate:.1f} | {100 * r['gpu_busy']:.0f} % | "
              f"{r['ratio']:.2f} | {steady:.1f} | {r['steady_ratio']:.2f} |")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli")
    ap.add_argument("--problem")
    ap.add_argument("--simulate", metavar="RECORDING",
                    help="simulate a cold sweep on --ranks ranks from this recording's compile and benchmark times")
    ap.add_argument("--ranks", type=int, default=8)
    ap.add_argument("--threads", type=int, default=16, help="compile threads a rank (with --simulate)")
    ap.add_argument("--gpus-per-rank", type=int, default=1)
    ap.add_argument("--pace", type=float, default=1.0,
                    help="with --simulate: a config's GPU time in recorded benchmark times (tune --replay-pace)")
    ap.add_argument("--compile-scale", type=float, default=1.0,
                    help="with --simulate: a config's compile time in recorded compile times (a lighter or heavier "
                         "kernel with the same spread)")
    ap.add_argument("--backend", default="cuda")
    ap.add_argument("--shape", type=int, default=0)
    ap.add_argument("--configs", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--tune-arg", action="append", default=[],
                    help="pass this argument on to tune (repeat: --tune-arg=--metrics --tune-arg=none)")
    ap.add_argument("--cold-only", action="store_true", help="run the cold sweep only")
    ap.add_argument("--json", help="also write the figures as JSON to FILE")
    ap.add_argument("--db-dir", help="keep the sessions' databases (cold.db, warm.db) in this folder")
    args = ap.parse_args()
    if args.simulate:
        simulate_ranks(args)
        return
    if not args.cli or not args.problem:
        ap.error("--cli and --problem are needed (or --simulate RECORDING)")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        # The databases fill as results arrive: in --db-dir, a run cut short still leaves its figures.
        dbs = Path(args.db_dir) if args.db_dir else tmp
        dbs.mkdir(parents=True, exist_ok=True)
        rows = {"cold": run(args, tmp / "cache", dbs / "cold.db")}
        if not args.cold_only:
            rows["warm"] = run(args, tmp / "cache", dbs / "warm.db")
    pct = lambda v: "-" if v is None else f"{100 * v:.0f} %"
    print(f"{args.problem} shape {args.shape} on {args.backend}, {args.configs} random configs (seed {args.seed})"
          f"{' ' + ' '.join(args.tune_arg) if args.tune_arg else ''}")
    print("| cache | configs | binaries compiled | NVRTC a config | seconds | configs/s | compile ceiling, configs/s | "
          "compile pool busy | GPU busy |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, r in rows.items():
        # A cache hit keeps the compile time of the binary it found: only a sweep that compiled says.
        compiled = r["nvrtc_seconds_a_config"] is not None and r["binaries_compiled"]
        nvrtc = f"{r['nvrtc_seconds_a_config']} s" if compiled else "-"
        ceiling = r["compile_ceiling_configs_per_second"] if compiled else None
        print(f"| {name} | {r['configs']} | {r['binaries_compiled']} | {nvrtc} | {r['seconds']} | "
              f"{r['configs_per_second']} | {'-' if ceiling is None else ceiling} | {pct(r['compile_pool_busy'])} | "
              f"{pct(r['gpu_busy'])} |")
    parted = {name: r for name, r in rows.items() if r.get("benchmark_ms_a_config")}
    if parted:
        print("\n| cache | a config's benchmark, ms | checking the outputs | timing | counters | energy | "
              "loading and the rest | outputs compared on the GPU / downloaded | configs raced | configs profiled |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for name, r in parted.items():
            b = r["benchmark_ms_a_config"]
            rest = b["all"] - b["check"] - b["timing"] - b["counters"] - b["energy"]
            print(f"| {name} | {b['all']:.3g} | {b['check']:.3g} | {b['timing']:.3g} | {b['counters']:.3g} | "
                  f"{b['energy']:.3g} | {rest:.3g} | {r['outputs_compared_on_gpu']} / {r['outputs_downloaded']} | "
                  f"{'-' if r.get('configs_raced') is None else r['configs_raced']} | "
                  f"{'-' if r.get('configs_profiled') is None else r['configs_profiled']} |")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
