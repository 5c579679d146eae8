#!/usr/bin/env python3
"""Triton's tutorial scripts, run unchanged under Python (`@triton.autotune`) and under
`tilescope-cli triton`, each in a fresh copy of the folder with cold caches, on the GPU machine.

The scripts are Triton's own (python/tutorials of its repository; not part of this one), e.g.
03-matrix-multiplication.py and 02-fused-softmax.py, in one folder (--tutorials). Each side runs
every script with TRITON_PRINT_AUTOTUNING=1 (Triton's autotuner then prints each key it tunes and
the config it chose; Tilescope's stand-in prints the same line for the keys it tunes) and
matplotlib's Agg backend (the tutorials' `benchmark.run(show_plots=True, print_data=True)`).

    python3 tests/bench/triton_tutorials.py --tutorials DIR --cli build/release/app/tilescope-cli \\
        --side autotune --json autotune.json
    python3 tests/bench/triton_tutorials.py --tutorials DIR --cli build/release/app/tilescope-cli \\
        --side tilescope --json tilescope.json
    python3 tests/bench/triton_tutorials.py --report autotune.json tilescope.json

--side both runs the two one after the other. A side's JSON holds, per script: its exit status,
wall time, the tail of its output, each tuned key with its winner and the tables the script
printed (`print_data`). --report pairs two sides' JSON: per script, the keys both tuned and how
many winners agree, and per table column the values of each side and their ratio (the column
"Triton" of the matmul tutorial is the autotuned kernel's TFLOP/s at each size, timed by the
tutorial's own do_bench on the winner each autotuner chose).

Standard library only. Not part of the test suite.
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WINNER = re.compile(
    r"(Triton|Tilescope) autotuning for function (\w+),\s*with key as (\(.*?\)),\s*(.*?),\s*"
    r"best config selected: (.*?);", re.S)
TABLE_HEAD = re.compile(r"^([\w.-]+):\s*$")


def parse_tables(text):
    """The tables `print_data` printed: {name: {"columns": [...], "rows": [[x..., y...]]}}."""
    tables = {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = TABLE_HEAD.match(lines[i])
        if not m or i + 1 >= len(lines):
            i += 1
            continue
        columns = re.findall(r"\S+(?: \([^)]*\))?", lines[i + 1])  # "cuBLAS (TFLOPS)" is one column
        rows = []
        j = i + 2
        while j < len(lines):
            cells = lines[j].split()
            if len(cells) != len(columns) + 1:  # pandas prints the row index first
                break
            try:
                rows.append([float(c) for c in cells[1:]])
            except ValueError:
                break
            j += 1
        if rows:
            tables[m.group(1)] = {"columns": columns, "rows": rows}
        i = j if rows else i + 1
    return tables


def normalise(config):
    """A config's text without the fields Triton prints as None (Tilescope prints the same)."""
    parts = [p.strip() for p in config.split(",")]
    return ", ".join(p for p in parts if not p.endswith(": None"))


def config_pairs(text):
    """{name: value text} of a config as the autotuners print it ("BLOCK_SIZE_M: 128, num_warps: 4")."""
    pairs = {}
    for part in text.split(","):
        name, _, value = part.partition(":")
        if value:
            pairs[name.strip()] = value.strip()
    return pairs


def tilescope_times(cli, work, script):
    """Per tuned key (its repr), Tilescope's median time and stdev (ms) of every config it measured,
    from the script's database: so that where the two autotuners chose differently, the report
    says how far apart the two winners were in Tilescope's own measurement."""
    db = work / (script.stem + ".db")
    winners = work / (script.stem + ".triton") / "winners.json"
    if not db.exists() or not winners.exists():
        return {}
    entries = (json.loads(winners.read_text()).get("winners") or {}).values()  # {"winners": {digest: entry}}
    out = {}
    for e in entries:
        if not isinstance(e, dict) or "session" not in e or "key" not in e:
            continue
        done = subprocess.run([cli, "show", str(db), "--json", "--session", str(e["session"])], capture_output=True,
                              text=True)
        if done.returncode != 0:
            continue
        out[e["key"]] = [{"config": {k: str(v) for k, v in r["config"].items()}, "time_ms": r.get("time_ms"),
                          "stdev_ms": r.get("time_stdev_ms")} for r in json.loads(done.stdout)]
    return out


def time_of(measured, config_text):
    """Tilescope's (median, stdev) of the config an autotuner printed; None where it has none."""
    want = config_pairs(config_text)
    for r in measured or []:
        if all(want.get(k) == v for k, v in r["config"].items() if k in want) and r["time_ms"] is not None:
            return r["time_ms"], r["stdev_ms"]
    return None


def run_side(side, tutorials, cli, python, timeout, only, tune_args):
    results = {}
    for script in sorted(Path(tutorials).glob("*.py")):
        if only and not any(o in script.name for o in only):
            continue
        work = Path(tempfile.mkdtemp(prefix=f"tutorial-{side}-"))
        for f in Path(tutorials).iterdir():
            if f.is_file():
                shutil.copy(f, work / f.name)
        env = dict(os.environ, TRITON_CACHE_DIR=str(work / "triton-cache"), XDG_CACHE_HOME=str(work / "cache"),
                   TRITON_PRINT_AUTOTUNING="1", MPLBACKEND="Agg", PYTHONUNBUFFERED="1")
        if side == "autotune":
            command = [python, script.name]
        else:
            command = [cli, "triton", "--python", python] + [f"--tune-arg={a}" for a in tune_args] + [script.name]
        start = time.perf_counter()
        try:
            done = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True, timeout=timeout)
            rc, out, err = done.returncode, done.stdout, done.stderr
        except subprocess.TimeoutExpired as e:
            rc = "timeout"
            out = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
            err = (e.stderr or b"").decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
        wall = time.perf_counter() - start
        text = out + "\n" + err
        winners = [{"kernel": m.group(2), "key": m.group(3), "how": " ".join(m.group(4).split()),
                    "config": normalise(" ".join(m.group(5).split()))} for m in WINNER.finditer(text)]
        measured = tilescope_times(cli, work, script) if side == "tilescope" else {}
        results[script.name] = {"rc": rc, "wall_s": round(wall, 2), "winners": winners, "measured": measured,
                                "tables": parse_tables(out), "tail": text[-2500:], "stdout": out[-200000:]}
        print(f"{side} {script.name}: exit {rc}, {wall:.1f} s, {len(winners)} keys tuned", flush=True)
        shutil.rmtree(work, ignore_errors=True)
    return results


def report(a_path, b_path):
    a, b = (json.loads(Path(p).read_text()) for p in (a_path, b_path))
    na, nb = a.get("side", "A"), b.get("side", "B")
    for script in sorted(set(a["scripts"]) & set(b["scripts"])):
        ra, rb = a["scripts"][script], b["scripts"][script]
        print(f"## {script}\n")
        print(f"- exit status {na} {ra['rc']}, {nb} {rb['rc']}; wall time {ra['wall_s']} s / {rb['wall_s']} s "
              f"({rb['wall_s'] / ra['wall_s']:.2f})")
        wa = {(w["kernel"], w["key"]): w["config"] for w in ra["winners"]}
        wb = {(w["kernel"], w["key"]): w["config"] for w in rb["winners"]}
        both = sorted(set(wa) & set(wb))
        same = [k for k in both if wa[k] == wb[k]]
        print(f"- keys tuned: {na} {len(wa)}, {nb} {len(wb)}, both {len(both)}; the same winner for {len(same)}")
        measured = ra.get("measured") or rb.get("measured") or {}
        for k in both:
            if wa[k] != wb[k]:
                print(f"  - {k[0]} {k[1]}: {na} {wa[k]} | {nb} {wb[k]}")
                ta, tb = time_of(measured.get(k[1]), wa[k]), time_of(measured.get(k[1]), wb[k])
                if ta and tb:
                    print(f"    Tilescope's measure: {na}'s winner {ta[0]:.4g} ms (stdev {ta[1] or 0:.2g}), "
                          f"{nb}'s {tb[0]:.4g} ms (stdev {tb[1] or 0:.2g}): {ta[0] / tb[0]:.3f}")
        for name in sorted(set(ra["tables"]) & set(rb["tables"])):
            ta, tb = ra["tables"][name], rb["tables"][name]
            if ta["columns"] != tb["columns"] or len(ta["rows"]) != len(tb["rows"]):
                print(f"- table {name}: the sides printed different tables")
                continue
            cols = ta["columns"]
            # The x columns lead (the sizes); the measured ones follow, named with their unit.
            nx = 1
            while nx < len(cols) - 1 and " (" not in cols[nx] and all(
                    x[nx] == y[nx] for x, y in zip(ta["rows"], tb["rows"])):
                nx += 1
            print(f"\n{name}: each column's values ({na} / {nb}) and the median ratio {nb} / {na}\n")
            print("| " + " | ".join(cols) + " |")
            print("|" + "---|" * len(cols))
            for x, y in zip(ta["rows"], tb["rows"]):
                cells = [f"{v:g}" for v in x[:nx]] + [f"{u:.4g} / {v:.4g}" for u, v in zip(x[nx:], y[nx:])]
                print("| " + " | ".join(cells) + " |")
            for c in range(nx, len(cols)):
                ratios = [y[c] / x[c] for x, y in zip(ta["rows"], tb["rows"]) if x[c] > 0]
                if ratios:
                    print(f"\n- {cols[c]}: median ratio {statistics.median(ratios):.3f}, "
                          f"range {min(ratios):.3f}-{max(ratios):.3f} over {len(ratios)} rows")
        print()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tutorials", help="the folder of Triton's tutorial scripts")
    parser.add_argument("--cli", help="tilescope-cli")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--side", choices=["autotune", "tilescope", "both"], default="both")
    parser.add_argument("--only", nargs="*", help="scripts whose names contain one of these")
    parser.add_argument("--timeout", type=float, default=1800)
    parser.add_argument("--tune-arg", action="append", default=[],
                        help="an argument for every tune of the tilescope side (e.g. --tune-arg=--metrics --tune-arg=none)")
    parser.add_argument("--json", help="write the side's results here")
    parser.add_argument("--report", nargs=2, metavar=("A.json", "B.json"), help="compare two sides' results")
    args = parser.parse_args()
    if args.report:
        report(*args.report)
        return 0
    if not args.tutorials or (args.side != "autotune" and not args.cli):
        parser.error("--tutorials (and --cli for the tilescope side) are needed")
    cli = str(Path(args.cli).resolve()) if args.cli else None
    sides = ["autotune", "tilescope"] if args.side == "both" else [args.side]
    for side in sides:
        data = {"side": side, "scripts": run_side(side, args.tutorials, cli, args.python, args.timeout, args.only,
                                                                args.tune_arg)}
        path = args.json if len(sides) == 1 else (Path(args.json or "tutorials.json").with_suffix(f".{side}.json"))
        if path:
            Path(path).write_text(json.dumps(data, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
