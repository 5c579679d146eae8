#!/usr/bin/env python3
"""How a session scales with workers, simulated: a recorded session replayed on N workers that
each spend the recorded benchmark time of every config (tune --replay-pace 1), as N ranks of an
MPI job (mpirun --oversubscribe: one replay slot per rank) or as N slots of one rank (threads).
Prints configs per second at steady state (the middle 90 % of results, from their commit times)
against N, the speed-up over one worker and the efficiency (the goal: 0.9 N up to 8).

    tests/bench/cluster_scaling.py --cli build/release/app/tilescope-cli \
        --recording tests/bench/data/scaling/sgemm-h200-1000.db --problem kernels/sgemm/sgemm.json \
        --shape 1 --seed 11 --budget 1000 --ranks 1,2,4,8 --slots 1,2,4,8,16,32,64
"""
import argparse
import datetime
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import time


def steady_rate(db):
    con = sqlite3.connect(db)
    stamps = sorted(datetime.datetime.fromisoformat(r[0].replace("Z", "+00:00")).timestamp()
                    for r in con.execute("select recorded_at from results"))
    con.close()
    n = len(stamps)
    lo, hi = int(0.05 * n), int(0.95 * n) - 1
    if hi <= lo or stamps[hi] <= stamps[lo]:
        return n, float("nan")
    return n, (hi - lo) / (stamps[hi] - stamps[lo])


def run(args, ranks, slots, tmp):
    db = os.path.join(tmp, f"ranks{ranks}-slots{slots}-{time.monotonic_ns()}.db")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    command = ["mpirun", "--oversubscribe", "-n", str(ranks), args.cli, "tune", args.problem, "--mpi",
               "--backend", "replay:" + args.recording, "--shape", str(args.shape), "--strategy", "random",
               "--seed", str(args.seed), "--budget", str(args.budget), "--replay-pace", str(args.pace),
               "--replay-slots", str(slots), "--db", db]
    start = time.monotonic()
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    wall = time.monotonic() - start
    if done.returncode != 0:
        sys.exit(f"failed ({done.returncode}): {' '.join(command)}\n{done.stderr[-2000:]}")
    n, rate = steady_rate(db)
    return n, rate, wall


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cli", required=True)
    p.add_argument("--recording", required=True)
    p.add_argument("--problem", required=True)
    p.add_argument("--shape", type=int, default=0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--budget", type=int, required=True)
    p.add_argument("--pace", type=float, default=1.0)
    p.add_argument("--ranks", default="1,2,4,8", help="ranks of one slot each")
    p.add_argument("--slots", default="", help="slots of one rank")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for label, sizes, make in (("ranks", args.ranks, lambda n: (n, 1)), ("slots of rank 0", args.slots,
                                                                              lambda n: (1, n))):
            if not sizes:
                continue
            print(f"\nN {label} | results | configs/s (steady) | speed-up | efficiency | wall")
            print("---|---|---|---|---|---")
            base = None
            for n in [int(x) for x in sizes.split(",")]:
                count, rate, wall = run(args, *make(n), tmp)
                base = base or rate
                print(f"{n} | {count} | {rate:.1f} | {rate / base:.2f} | {rate / (n * base):.2f} | {wall:.1f} s",
                      flush=True)


if __name__ == "__main__":
    main()
