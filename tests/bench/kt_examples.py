#!/usr/bin/env python3
"""Kernel Tuner's own CUDA example scripts, run unchanged under Kernel Tuner and under
`tilescope-cli kt`, side by side on the same GPU.

For each example script in a folder (--examples: Kernel Tuner's examples/cuda files, the .py
scripts with the .cu files they read; they are not part of this repository), the script runs
twice, each time in a fresh copy of that folder (scripts write their JSON and CSV outputs to the
current folder):

  (a) under Kernel Tuner 1.5.0 itself, and
  (b) under `tilescope-cli kt --backend cuda --db DB SCRIPT`, whose kernel_tuner stand-in sends
      each tune_kernel call through `tune`.

Both runs go through one small runner (written into the work folder, never into the copy): it
imports kernel_tuner (the real package in (a), the stand-in in (b)), wraps tune_kernel and
run_kernel, patches kernel_tuner.* and kernel_tuner.interface.* with the wrappers, seeds Python's
and NumPy's global generators with --seed, and runs the script with runpy as __main__ (cwd = the
copy, sys.argv = [script], sys.path[0] = the copy). The seed makes both runs see the same input
data: the examples draw theirs from numpy.random after their imports. In (b) the runner is the
SCRIPT that `kt` starts and the example its argument (`kt` runs `PYTHON SCRIPT ARGS...` with its
stand-in first on PYTHONPATH), so the same seeding and recording happen inside Tilescope's run.

In (a) the wrapper also chooses Kernel Tuner's backend: a call that names no language, or names
"CUDA" (which in Kernel Tuner 1.5.0 means "whichever CUDA backend is installed": cuda-python, then
CuPy, then PyCUDA), runs with lang=--kt-lang (CUPY by default: Kernel Tuner's CuPy backend, NVRTC
through CuPy; NVCUDA picks the cuda-python backend; "auto" leaves Kernel Tuner's own choice).
Other languages (lang="C" host code) are left as the script gave them.

Each wrapped tune_kernel call records, as one JSON line in the file named by the environment
variable TILESCOPE_KTEX_RECORD: the kernel, the tunable parameters' names, the objective and its
direction, every result's config and objective value (or its error: Kernel Tuner 1.5.0 marks a
failed config with an "__error__" entry, InvalidConfig, CompilationFailedConfig or
RuntimeFailedConfig, and keeps it in the results list; older versions put the error in "time"),
the best config by the call's objective, and the call's wall time. A call that raises is recorded
with its error (and the error still reaches the script, as it would without the wrapper).

The harness then prints, per script and per tune_kernel call (the calls are paired in order):
configs Kernel Tuner returned / configs Tilescope returned / whether the sets of configs match;
Kernel Tuner's best (config, value) and Tilescope's best; the ratio Tilescope best / Kernel Tuner
best; Kernel Tuner's value of Tilescope's best config and Tilescope's value of Kernel Tuner's best
config (where both measured it: both ran on the same GPU, so these separate a different choice
from a different measurement); and the wall time of the call on each side. Per script: each
run's exit status, wall time and the tail of its stderr. A run that fails shows its error; the
harness goes on with the next.

Before the runs, each script is read for what it needs beyond NumPy (PyCUDA, CuPy, pandas, Jinja2,
pytest, lang="C" host code, Kernel Tuner modules besides tune_kernel/run_kernel, CUB headers or
the pre-CUDA-9 __shfl_down in the .cu files it names): the table shows it beside the script, as the
likely reason when a side refuses or fails.

On a machine with an NVIDIA GPU and no network: carry Kernel Tuner 1.5.0 and its dependencies as
wheels (those the machine lacks) and the examples folder, then

    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \\
        --target /tmp/site .whl/*.whl
    export PYTHONPATH=/tmp/site
    python3 tests/bench/kt_examples.py --examples .ktex --cli build/release/app/tilescope-cli \\
        --timeout 600 --json kt_examples.json --markdown kt_examples.md

(--only vector_add,matmul picks scripts; --sample 60 has each brute-force call take 60 random configs
on both sides, which makes convolution.py's space of millions tunable; --kt-arg passes an option to `tilescope-cli kt`, e.g.
--kt-arg=--jobs=8; --workdir keeps each run's copy, stdout, stderr, records and Tilescope's
database where you say, else in a new temporary folder). Kernel Tuner's brute force over
convolution.py's and sepconv.py's spaces (about 2.4 million configs, and twice 0.9 million, after
their restrictions) does not finish in any sensible --timeout; a run that times out is
shown as such, with the calls it finished.

Without a GPU, --tilescope-only --backend analysis:sm_90 runs only side (b), which checks the
plumbing (the runner, the records, the table) without measuring anything.

Standard library only (the runner it writes needs NumPy, as the examples do). Not part of the test
suite.
"""

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KERNEL_TUNER_VERSION = "1.5.0"
SIDES = ("kt", "tilescope")
SIDE_NAMES = {"kt": "Kernel Tuner", "tilescope": "Tilescope"}


def log(*args):
    print(*args, file=sys.stderr, flush=True)


# The runner: written into the work folder, started as `PYTHON RUNNER EXAMPLE.py` for Kernel
# Tuner and as `tilescope-cli kt ... RUNNER EXAMPLE.py` for Tilescope.

RUNNER = r'''
"""Runs a Kernel Tuner script unchanged, recording its tune_kernel calls (see kt_examples.py)."""
import functools
import inspect
import json
import math
import os
import runpy
import sys
import time
import traceback

RECORD = os.environ.get("TILESCOPE_KTEX_RECORD", "")
SEED = int(os.environ.get("TILESCOPE_KTEX_SEED", "1"))
LANG = os.environ.get("TILESCOPE_KTEX_LANG", "")  # set for the Kernel Tuner run only
SIDE = os.environ.get("TILESCOPE_KTEX_SIDE", "")
FEVALS = int(os.environ.get("TILESCOPE_KTEX_FEVALS", "0") or 0)  # > 0: a random sample of this many configs
HIGHER_IS_BETTER = {"time": False, "energy": False, "GFLOP/s": True, "GFLOPS": True, "TFLOP/s": True,
                    "GB/s": True, "TB/s": True, "GFLOPS/W": True, "GFLOP/J": True}
_calls = [0]


def emit(obj):
    if not RECORD:
        return
    with open(RECORD, "a") as f:
        f.write(json.dumps(obj, default=str) + "\n")


def plain(v):
    """A JSON value for a config value or measurement (NumPy scalars as Python ones)."""
    if hasattr(v, "item") and not isinstance(v, (list, tuple, dict)):
        try:
            v = v.item()
        except Exception:
            pass
    if isinstance(v, bool) or v is None or isinstance(v, (int, str)):
        return v
    if isinstance(v, float):
        return int(v) if math.isfinite(v) and v.is_integer() else v
    return str(v)


def measured(r, objective):
    """(value, error) of one result: error is a string when the config failed."""
    if r is None:
        return None, "no result"
    if isinstance(r, dict) and "__error__" in r:
        return None, str(r["__error__"])
    v = r.get(objective) if isinstance(r, dict) else None
    if hasattr(v, "item") and not isinstance(v, str):
        try:
            v = v.item()
        except Exception:
            pass
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None, ("no " + objective) if v is None else str(v)
    if not math.isfinite(v):
        return None, str(v)
    return float(v), None


def bind(fn, args, kwargs):
    try:
        b = inspect.signature(fn).bind(*args, **kwargs)
        return b
    except (TypeError, ValueError):
        return None


def arg(bound, args, kwargs, name, position):
    if bound is not None and name in bound.arguments:
        return bound.arguments[name]
    if name in kwargs:
        return kwargs[name]
    return args[position] if len(args) > position else None


def choose_lang(fn, args, kwargs, position):
    """For the Kernel Tuner run: lang=LANG where the call gave none or gave "CUDA"."""
    if not LANG:
        return args, kwargs
    b = bind(fn, args, kwargs)
    given = arg(b, args, kwargs, "lang", position)
    if given is not None and str(given).upper() != "CUDA":
        return args, kwargs
    if b is not None:
        b.arguments["lang"] = LANG
        return b.args, b.kwargs
    kwargs = dict(kwargs)
    if len(args) > position:
        args = list(args)
        args[position] = LANG
    else:
        kwargs["lang"] = LANG
    return tuple(args), kwargs


def objective_of(b, args, kwargs):
    objectives = arg(b, args, kwargs, "objectives", 10**6)
    if isinstance(objectives, dict) and objectives:
        name = list(objectives)[0]
        return name, bool(objectives[name])
    name = arg(b, args, kwargs, "objective", 10**6) or "time"
    if isinstance(name, (list, tuple)):
        name = name[0]
    higher = arg(b, args, kwargs, "objective_higher_is_better", 10**6)
    if isinstance(higher, (list, tuple)):
        higher = higher[0]
    if higher is None:
        higher = HIGHER_IS_BETTER.get(name)
        if higher is None:
            try:
                from kernel_tuner.util import objective_default_map
                higher = objective_default_map.get(name, False)
            except Exception:
                higher = False
    return str(name), bool(higher)


def sample_configs(fn, args, kwargs):
    """With FEVALS: strategy="random_sample" with max_fevals=FEVALS where the call chose brute force
    (no strategy); a call that chose its own strategy keeps it."""
    if FEVALS <= 0:
        return args, kwargs
    b = bind(fn, args, kwargs)
    if b is None or b.arguments.get("strategy") not in (None, "brute_force"):
        return args, kwargs
    b.arguments["strategy"] = "random_sample"
    options = dict(b.arguments.get("strategy_options") or {})
    options["max_fevals"] = FEVALS
    b.arguments["strategy_options"] = options
    return b.args, b.kwargs


def wrap_tune(orig):
    @functools.wraps(orig)
    def tune_kernel(*args, **kwargs):
        args, kwargs = choose_lang(orig, args, kwargs, 13)
        args, kwargs = sample_configs(orig, args, kwargs)
        b = bind(orig, args, kwargs)
        index = _calls[0] = _calls[0] + 1
        kernel = arg(b, args, kwargs, "kernel_name", 0)
        tune_params = arg(b, args, kwargs, "tune_params", 4) or {}
        keys = [str(k) for k in tune_params]
        objective, higher = objective_of(b, args, kwargs)
        lang = arg(b, args, kwargs, "lang", 13)
        head = {"event": "call", "side": SIDE, "index": index, "kernel": str(kernel), "keys": keys,
                "objective": objective, "higher_is_better": higher, "lang": None if lang is None else str(lang)}
        emit(dict(head, event="call_start"))
        start = time.perf_counter()
        try:
            ret = orig(*args, **kwargs)
        except BaseException as e:
            emit(dict(head, seconds=time.perf_counter() - start, error=f"{type(e).__name__}: {e}"[:2000]))
            raise
        seconds = time.perf_counter() - start
        results, env = (ret[0], ret[1]) if isinstance(ret, tuple) and len(ret) == 2 else (ret, None)
        rows, best, failed = [], None, 0
        for r in (results or []):
            config = [plain(r.get(k)) if isinstance(r, dict) else None for k in tune_params]
            value, error = measured(r, objective)
            failed += error is not None
            rows.append([config, value, error])
            if value is not None and (best is None or (value > best[1] if higher else value < best[1])):
                best = (config, value)
        info = {}
        if isinstance(env, dict):
            for k in ("device_name", "compute_capability", "cuda_version", "backend", "lang", "iterations"):
                if k in env:
                    info[k] = plain(env[k]) if not isinstance(env[k], (list, tuple)) else [plain(x) for x in env[k]]
        emit(dict(head, seconds=seconds, error=None, n_results=len(rows), n_failed=failed, results=rows,
                  best=None if best is None else {"config": best[0], "value": best[1]}, env=info))
        return ret
    return tune_kernel


def wrap_run(orig):
    @functools.wraps(orig)
    def run_kernel(*args, **kwargs):
        args, kwargs = choose_lang(orig, args, kwargs, 8)
        b = bind(orig, args, kwargs)
        kernel = arg(b, args, kwargs, "kernel_name", 0)
        start = time.perf_counter()
        try:
            ret = orig(*args, **kwargs)
        except BaseException as e:
            emit({"event": "run_kernel", "side": SIDE, "kernel": str(kernel),
                  "seconds": time.perf_counter() - start, "error": f"{type(e).__name__}: {e}"[:2000]})
            raise
        emit({"event": "run_kernel", "side": SIDE, "kernel": str(kernel),
              "seconds": time.perf_counter() - start, "error": None})
        return ret
    return run_kernel


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: runner.py EXAMPLE.py [ARGS...]")
    script = os.path.abspath(sys.argv[1])
    start = time.perf_counter()
    status, error = 0, None
    try:
        import kernel_tuner
        targets = [kernel_tuner]
        try:
            import kernel_tuner.interface
            targets.append(kernel_tuner.interface)
        except ImportError:
            pass
        emit({"event": "begin", "side": SIDE, "script": os.path.basename(script),
              "kernel_tuner": os.path.dirname(getattr(kernel_tuner, "__file__", "") or ""),
              "version": str(getattr(kernel_tuner, "__version__", "")), "lang": LANG or None, "seed": SEED})
        for name, wrap in (("tune_kernel", wrap_tune), ("run_kernel", wrap_run)):
            orig = getattr(kernel_tuner, name, None) or getattr(targets[-1], name, None)
            if orig is None:
                continue
            wrapped = wrap(orig)
            for module in targets:
                setattr(module, name, wrapped)
        import random
        random.seed(SEED)
        try:
            import numpy
            numpy.random.seed(SEED)
        except ImportError:
            pass
        sys.argv = [script] + sys.argv[2:]
        sys.path[0] = os.path.dirname(script)
        runpy.run_path(script, run_name="__main__")
    except SystemExit as e:
        code = e.code
        status = code if isinstance(code, int) else (0 if code is None else 1)
        if not isinstance(code, int) and code is not None:
            print(code, file=sys.stderr)
            error = str(code)
    except BaseException as e:
        traceback.print_exc()
        status, error = 1, f"{type(e).__name__}: {e}"[:2000]
    emit({"event": "end", "side": SIDE, "status": status, "seconds": time.perf_counter() - start, "error": error})
    sys.stdout.flush()
    sys.stderr.flush()
    sys.exit(status)


main()
'''


# What a script needs beyond NumPy, read from its text and the .cu files it names

NEEDS = [
    (r"^\s*(import|from)\s+pycuda\b", "PyCUDA"),
    (r"^\s*(import|from)\s+cupy\b", "CuPy"),
    (r"^\s*(import|from)\s+pandas\b", "pandas"),
    (r"^\s*(import|from)\s+jinja2\b", "Jinja2"),
    (r"^\s*(import|from)\s+pytest\b", "pytest"),
    (r"^\s*(import|from)\s+matplotlib\b", "matplotlib"),
    (r"""\blang\s*=\s*["']C["']""", 'lang="C" host code'),
    (r"kernel_tuner\.kernelbuilder\b", "kernel_tuner.kernelbuilder"),
    (r"kernel_tuner\.cuda\b", "kernel_tuner.cuda (gone since Kernel Tuner 1.0)"),
    (r"kernel_tuner\.file_utils\b", "kernel_tuner.file_utils"),
    (r"kernel_tuner\.util\b|from\s+kernel_tuner\s+import\s+.*\butil\b", "kernel_tuner.util"),
    (r"kernel_tuner\.integration\b|store_results|create_device_targets", "kernel_tuner.integration"),
    (r"kernel_tuner\.observers\b|observers\s*=", "observers"),
    (r"""\blang\s*=\s*["']CUDA["']""", 'lang="CUDA"'),
    (r"\bstrategy\s*=", "a search strategy"),
]
CU_NEEDS = [
    (r"#\s*include\s*[<\"]cub/", "CUB headers"),
    (r"\b__shfl_down\s*\(", "__shfl_down (no such intrinsic for sm_70 and later)"),
    (r"\b__shfl_xor\s*\(|\b__shfl\s*\(", "__shfl/__shfl_xor (no such intrinsic for sm_70 and later)"),
]


def script_needs(path):
    with open(path, errors="replace") as f:
        text = f.read()
    needs = [label for pattern, label in NEEDS if re.search(pattern, text, re.M)]
    if not re.search(r"\btune_kernel\s*\(", text):
        needs.append("no tune_kernel call")
    folder = os.path.dirname(path)
    for cu in sorted(set(re.findall(r"[\w.-]+\.cu\b", text))):
        cu_path = os.path.join(folder, cu)
        if not os.path.exists(cu_path):
            needs.append(f"{cu} (missing)")
            continue
        with open(cu_path, errors="replace") as f:
            cu_text = f.read()
        needs += [f"{label} in {cu}" for pattern, label in CU_NEEDS if re.search(pattern, cu_text)]
    return needs


# Running one side


def read_records(path):
    records = []
    if not os.path.exists(path):
        return records
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                try:
                    records.append(json.loads(line))
                except json.JSONDecodeError:
                    pass  # a line cut short by a timeout
    return records


def tail(path, lines=12, chars=3000):
    try:
        with open(path, errors="replace") as f:
            text = f.read()
    except OSError:
        return ""
    text = "\n".join(text.rstrip().splitlines()[-lines:])
    return text[-chars:]


def last_error_line(text):
    """The line of a stderr tail most likely to say why: the last exception line, else the last line."""
    lines = [l for l in text.splitlines() if l.strip()]
    for l in reversed(lines):
        if re.match(r"^[A-Za-z_.]*(Error|Exception|Exit|Interrupt)\b.*:", l.strip()) or "error" in l.lower():
            return l.strip()[:300]
    return lines[-1].strip()[:300] if lines else ""


def run_side(side, script, args, workdir, runner):
    """Runs one script on one side in a fresh copy of the examples folder; a dict of what happened."""
    stem = os.path.splitext(os.path.basename(script))[0]
    base = os.path.join(workdir, stem)
    copy = os.path.join(base, side)
    if os.path.exists(copy):
        shutil.rmtree(copy)
    shutil.copytree(args.examples, copy, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    record = os.path.join(base, side + ".jsonl")
    stdout_path = os.path.join(base, side + ".stdout")
    stderr_path = os.path.join(base, side + ".stderr")
    if os.path.exists(record):
        os.remove(record)
    example = os.path.join(copy, os.path.basename(script))

    env = dict(os.environ)
    env.update(
        {
            "TILESCOPE_KTEX_RECORD": record,
            "TILESCOPE_KTEX_SEED": str(args.seed),
            "TILESCOPE_KTEX_SIDE": side,
            "TILESCOPE_KTEX_FEVALS": str(args.sample or 0),
            "PYTHONUNBUFFERED": "1",
            "PYTHONDONTWRITEBYTECODE": "1",
        }
    )
    env.pop("TILESCOPE_KTEX_LANG", None)
    if side == "kt":
        if args.kt_lang.lower() != "auto":
            env["TILESCOPE_KTEX_LANG"] = args.kt_lang.upper()
        argv = [args.python, runner, example]
    else:
        db = os.path.join(base, "tilescope.db")
        argv = [args.cli, "kt", "--backend", args.backend, "--db", db, "--python", args.python]
        argv += args.kt_arg + [runner, example]

    log(f"[{stem}] {SIDE_NAMES[side]}: {' '.join(argv)}")
    start = time.perf_counter()
    timed_out = False
    with open(stdout_path, "w") as out, open(stderr_path, "w") as err:
        try:
            proc = subprocess.Popen(argv, cwd=copy, env=env, stdout=out, stderr=err, start_new_session=True)
        except OSError as e:
            return {
                "side": side,
                "status": None,
                "wall": 0.0,
                "timed_out": False,
                "error": f"cannot start {argv[0]}: {e}",
                "stderr_tail": "",
                "calls": [],
                "run_kernel": [],
                "begin": None,
                "end": None,
                "dir": base,
            }
        try:
            status = proc.wait(timeout=args.timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            for sig, grace in ((signal.SIGTERM, 10), (signal.SIGKILL, 10)):
                try:
                    os.killpg(proc.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    proc.wait(timeout=grace)
                    break
                except subprocess.TimeoutExpired:
                    continue
            status = proc.returncode
    wall = time.perf_counter() - start

    records = read_records(record)
    begin = next((r for r in records if r.get("event") == "begin"), None)
    end = next((r for r in records if r.get("event") == "end"), None)
    finished = [r for r in records if r.get("event") == "call"]
    done = {r["index"] for r in finished}
    unfinished = [
        dict(r, error="did not finish") for r in records if r.get("event") == "call_start" and r["index"] not in done
    ]
    calls = sorted(finished + unfinished, key=lambda r: r["index"])
    stderr_tail = tail(stderr_path)
    error = None
    if timed_out:
        error = f"timed out after {args.timeout:g} s"
    elif status != 0:
        error = (end or {}).get("error") or last_error_line(stderr_tail) or f"exit status {status}"
    return {
        "side": side,
        "status": status,
        "wall": wall,
        "timed_out": timed_out,
        "error": error,
        "stderr_tail": stderr_tail,
        "calls": calls,
        "run_kernel": [r for r in records if r.get("event") == "run_kernel"],
        "begin": begin,
        "end": end,
        "dir": base,
    }


# Comparing


def config_key(config):
    return json.dumps(config)


def config_text(keys, config):
    if config is None:
        return "-"
    return " ".join(f"{k}={v}" for k, v in zip(keys, config))


def value_map(call):
    return {config_key(c): v for c, v, e in call.get("results") or [] if v is not None}


def compare_call(kt, ts):
    """One pair of tune_kernel calls (either may be None): the table's row as a dict."""
    row = {"index": (kt or ts)["index"], "kernel": (kt or ts).get("kernel"), "keys": (kt or ts).get("keys", [])}
    row["objective"] = (kt or ts).get("objective", "time")
    row["higher_is_better"] = (kt or ts).get("higher_is_better", False)
    for side, call in (("kt", kt), ("tilescope", ts)):
        if call is None:
            row[side] = {"error": "no such call"}
            continue
        best = call.get("best")
        row[side] = {
            "error": call.get("error"),
            "configs": call.get("n_results"),
            "failed": call.get("n_failed"),
            "best_config": best["config"] if best else None,
            "best": best["value"] if best else None,
            "wall": call.get("seconds"),
            "keys": call.get("keys"),
            "env": call.get("env"),
        }
    if kt and ts and kt.get("results") is not None and ts.get("results") is not None:
        if kt.get("keys") != ts.get("keys"):
            row["same_set"] = "params differ"
        else:
            a = {config_key(c) for c, v, e in kt["results"]}
            b = {config_key(c) for c, v, e in ts["results"]}
            row["same_set"] = "yes" if a == b else f"no: {len(a - b)} only KT, {len(b - a)} only TS"
        kt_values, ts_values = value_map(kt), value_map(ts)
        if row["kt"]["best_config"] is not None:
            row["tilescope"]["at_other_best"] = ts_values.get(config_key(row["kt"]["best_config"]))
        if row["tilescope"]["best_config"] is not None:
            row["kt"]["at_other_best"] = kt_values.get(config_key(row["tilescope"]["best_config"]))
        if row["kt"]["best"] and row["tilescope"]["best"] is not None:
            row["ratio"] = row["tilescope"]["best"] / row["kt"]["best"]
    return row


def compare_script(script, needs, runs):
    kt_calls = {c["index"]: c for c in runs.get("kt", {}).get("calls", [])}
    ts_calls = {c["index"]: c for c in runs.get("tilescope", {}).get("calls", [])}
    rows = [compare_call(kt_calls.get(i), ts_calls.get(i)) for i in sorted(set(kt_calls) | set(ts_calls))]
    return {"script": script, "needs": needs, "runs": runs, "calls": rows}


# Printing


def fmt(v, digits=4):
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.{digits}g}"
    return str(v)


def unit(row):
    return " ms" if row["objective"] == "time" else ""


def run_line(run):
    if run is None:
        return "not run"
    status = "timed out" if run["timed_out"] else f"exit {run['status']}"
    n = len(run["calls"])
    text = f"{status}, wall {run['wall']:.1f} s, {n} tune_kernel call{'s' if n != 1 else ''}"
    if run.get("begin") and run["begin"].get("version"):
        text += f", kernel_tuner {run['begin']['version']}"
    if run["error"]:
        text += f"\n      error: {run['error']}"
    return text


def print_script(entry, sides):
    print(f"\n== {entry['script']}" + (f"   [needs: {', '.join(entry['needs'])}]" if entry["needs"] else ""))
    for side in sides:
        print(f"  {SIDE_NAMES[side]:<13}{run_line(entry['runs'].get(side))}")
    for row in entry["calls"]:
        direction = "higher" if row["higher_is_better"] else "lower"
        print(f"  call {row['index']}: {row['kernel']} (objective {row['objective']}, {direction} is better)")
        parts = []
        for side in sides:
            s = row[side]
            if s.get("error") and s.get("configs") is None:
                parts.append(f"{SIDE_NAMES[side]} -")
            else:
                parts.append(f"{SIDE_NAMES[side]} {fmt(s.get('configs'))} ({fmt(s.get('failed'))} failed)")
        same = row.get("same_set")
        print("    configs      " + "   ".join(parts) + (f"   same set: {same}" if same else ""))
        u = unit(row)
        for side in sides:
            s = row[side]
            if s.get("error"):
                print(f"    {SIDE_NAMES[side]:<13}error: {s['error']}")
            if s.get("best_config") is not None:
                other = [o for o in sides if o != side]
                measured = ""
                if other and row[other[0]].get("at_other_best") is not None:
                    measured = f"   ({SIDE_NAMES[other[0]]} measured it at {fmt(row[other[0]]['at_other_best'])}{u})"
                elif other and row[other[0]].get("configs") is not None:
                    measured = f"   ({SIDE_NAMES[other[0]]} has no value for it)"
                label = "KT best" if side == "kt" else "TS best"
                print(f"    {label:<13}{config_text(row['keys'], s['best_config'])}   {fmt(s['best'])}{u}{measured}")
        if row.get("ratio") is not None:
            print(f"    TS best / KT best  {row['ratio']:.3f}")
        walls = [
            f"{SIDE_NAMES[side]} {fmt(row[side].get('wall'), 3)} s"
            for side in sides
            if row[side].get("wall") is not None
        ]
        if walls:
            print("    wall         " + "   ".join(walls))
    for side in sides:
        run = entry["runs"].get(side)
        if run and run["error"] and run["stderr_tail"]:
            print(f"  {SIDE_NAMES[side]} stderr (tail):")
            for line in run["stderr_tail"].splitlines()[-8:]:
                print("      " + line)


def md_cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def markdown(entries, sides, meta):
    out = ["# Kernel Tuner's CUDA examples: Kernel Tuner and Tilescope side by side", ""]
    for k, v in meta.items():
        out.append(f"- {k}: {md_cell(v)}")
    out += ["", "## Runs", "", "| script | needs | " + " | ".join(f"{SIDE_NAMES[s]}" for s in sides) + " |"]
    out.append("|---|---|" + "---|" * len(sides))
    for e in entries:
        cells = []
        for s in sides:
            run = e["runs"].get(s)
            if run is None:
                cells.append("not run")
                continue
            status = "timed out" if run["timed_out"] else f"exit {run['status']}"
            n = len(run["calls"])
            cell = f"{status}, {run['wall']:.1f} s, {n} call{'s' if n != 1 else ''}"
            if run["error"]:
                cell += f"; {run['error']}"
            cells.append(md_cell(cell))
        out.append(f"| {e['script']} | {md_cell(', '.join(e['needs']) or '-')} | " + " | ".join(cells) + " |")
    out += ["", "## tune_kernel calls", ""]
    head = ["script", "call", "kernel", "objective"]
    for s in sides:
        head.append(f"configs {'KT' if s == 'kt' else 'TS'} (failed)")
    if len(sides) == 2:
        head.append("same set")
    for s in sides:
        tag = "KT" if s == "kt" else "TS"
        head += [f"{tag} best", f"{tag} best value"]
    if len(sides) == 2:
        head += ["TS/KT", "KT at TS best", "TS at KT best"]
    head += [f"wall {'KT' if s == 'kt' else 'TS'} (s)" for s in sides]
    out.append("| " + " | ".join(head) + " |")
    out.append("|" + "---|" * len(head))
    for e in entries:
        for row in e["calls"]:
            cells = [e["script"], str(row["index"]), row["kernel"] or "-", row["objective"]]
            for s in sides:
                r = row[s]
                cells.append("-" if r.get("configs") is None else f"{r['configs']} ({r.get('failed')})")
            if len(sides) == 2:
                cells.append(row.get("same_set") or "-")
            for s in sides:
                r = row[s]
                if r.get("best_config") is None:
                    cells += [r.get("error") or "-", "-"]
                else:
                    cells += [config_text(row["keys"], r["best_config"]), fmt(r["best"])]
            if len(sides) == 2:
                cells += [
                    "-" if row.get("ratio") is None else f"{row['ratio']:.3f}",
                    fmt(row["kt"].get("at_other_best")),
                    fmt(row["tilescope"].get("at_other_best")),
                ]
            cells += [fmt(row[s].get("wall"), 3) for s in sides]
            out.append("| " + " | ".join(md_cell(c) for c in cells) + " |")
    return "\n".join(out) + "\n"


# The environment


def probe_python(python, env=None):
    """Which kernel_tuner `python` imports, and the GPU CuPy sees; never fails."""
    code = (
        "import json\n"
        "d = {}\n"
        "try:\n"
        "    import kernel_tuner; d['kernel_tuner'] = getattr(kernel_tuner, '__version__', '?')\n"
        "except Exception as e: d['kernel_tuner'] = 'not importable: %s' % e\n"
        "try:\n"
        "    import numpy; d['numpy'] = numpy.__version__\n"
        "except Exception as e: d['numpy'] = 'not importable: %s' % e\n"
        "try:\n"
        "    import cupy; d['cupy'] = cupy.__version__\n"
        "    p = cupy.cuda.runtime.getDeviceProperties(0)\n"
        "    d['gpu'] = p['name'].decode() if isinstance(p['name'], bytes) else str(p['name'])\n"
        "except Exception as e: d.setdefault('cupy', 'not importable: %s' % str(e)[:200])\n"
        "print(json.dumps(d))\n"
    )
    try:
        out = subprocess.run(
            [python, "-c", code], capture_output=True, text=True, timeout=120, env=env, cwd=tempfile.gettempdir()
        )
        return json.loads(out.stdout.strip().splitlines()[-1])
    except Exception as e:  # noqa: BLE001 - a probe reports, never stops the harness
        return {"probe": f"failed: {e}"}


def default_cli():
    for path in ("build/release/app/tilescope-cli", "build/debug/app/tilescope-cli"):
        full = os.path.join(REPO, path)
        if os.path.exists(full):
            return full
    return shutil.which("tilescope-cli") or "tilescope-cli"


def main():
    parser = argparse.ArgumentParser(
        description="Kernel Tuner's CUDA example scripts under Kernel Tuner and under tilescope-cli kt, side by side."
    )
    parser.add_argument(
        "--examples",
        default=os.path.join(REPO, ".ktex"),
        help="folder of example scripts and their .cu files (default: .ktex at the repository root)",
    )
    parser.add_argument("--cli", default=None, help="tilescope-cli (default: the build tree's, else PATH's)")
    parser.add_argument("--only", default="", help="comma-separated script names (with or without .py)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per run (default 600)")
    parser.add_argument("--json", default=None, help="write the comparison as JSON here")
    parser.add_argument("--markdown", default=None, help="write the tables as markdown here")
    parser.add_argument("--backend", default="cuda", help="tilescope-cli kt --backend (default cuda)")
    parser.add_argument("--python", default=sys.executable, help="the Python interpreter for both sides")
    parser.add_argument("--seed", type=int, default=1, help="seed of Python's and NumPy's generators (default 1)")
    parser.add_argument(
        "--sample",
        type=int,
        default=0,
        help="each tune_kernel call that tunes by brute force (no strategy given) takes a random sample of N "
        "configs on both sides instead: strategy=\"random_sample\", strategy_options={\"max_fevals\": N} (all of "
        "them where the space has fewer); a call that names its strategy keeps it",
    )
    parser.add_argument(
        "--kt-lang",
        default="CUPY",
        help="Kernel Tuner's lang where the script gives none or CUDA: CUPY (default), NVCUDA, PYCUDA or auto",
    )
    parser.add_argument("--kt-arg", action="append", default=[], help="an option for tilescope-cli kt (repeat it)")
    parser.add_argument(
        "--workdir",
        default=None,
        help="where the copies, records and outputs go (default: a new temporary folder, kept)",
    )
    side = parser.add_mutually_exclusive_group()
    side.add_argument("--tilescope-only", action="store_true", help="run only `tilescope-cli kt`")
    side.add_argument("--kt-only", action="store_true", help="run only Kernel Tuner")
    args = parser.parse_args()

    args.examples = os.path.abspath(args.examples)
    if not os.path.isdir(args.examples):
        sys.exit(f"no examples folder {args.examples} (give --examples)")
    args.cli = os.path.abspath(args.cli) if args.cli and os.path.sep in args.cli else (args.cli or default_cli())
    sides = ["tilescope"] if args.tilescope_only else ["kt"] if args.kt_only else list(SIDES)

    scripts = sorted(f for f in os.listdir(args.examples) if f.endswith(".py") and not f.startswith("_"))
    if args.only:
        wanted = {
            w.strip() if w.strip().endswith(".py") else w.strip() + ".py" for w in args.only.split(",") if w.strip()
        }
        missing = wanted - set(scripts)
        if missing:
            log(f"not in {args.examples}: {', '.join(sorted(missing))}")
        scripts = [s for s in scripts if s in wanted]
    if not scripts:
        sys.exit("no scripts to run")

    workdir = os.path.abspath(args.workdir or tempfile.mkdtemp(prefix="kt_examples_"))
    os.makedirs(workdir, exist_ok=True)
    runner = os.path.join(workdir, "_ktex_runner.py")
    with open(runner, "w") as f:
        f.write(RUNNER)

    meta = {"examples": args.examples, "workdir": workdir, "seed": args.seed, "timeout per run (s)": args.timeout,
            "random sample per brute-force call": args.sample or "none"}
    if "kt" in sides:
        probe = probe_python(args.python)
        meta["Kernel Tuner side"] = f"kernel_tuner {probe.get('kernel_tuner')}, lang {args.kt_lang}"
        meta["numpy"] = probe.get("numpy")
        meta["cupy"] = probe.get("cupy")
        if probe.get("gpu"):
            meta["GPU"] = probe["gpu"]
        if str(probe.get("kernel_tuner", "")) != KERNEL_TUNER_VERSION:
            log(f"note: {args.python} imports kernel_tuner {probe.get('kernel_tuner')}, not {KERNEL_TUNER_VERSION}")
    if "tilescope" in sides:
        meta["Tilescope side"] = f"{args.cli} kt --backend {args.backend}" + (
            " " + " ".join(args.kt_arg) if args.kt_arg else ""
        )
    log(f"work folder: {workdir}")

    entries = []
    for script in scripts:
        needs = script_needs(os.path.join(args.examples, script))
        runs = {}
        for s in sides:
            try:
                runs[s] = run_side(s, script, args, workdir, runner)
            except Exception as e:  # noqa: BLE001 - one script's trouble never stops the others
                runs[s] = {
                    "side": s,
                    "status": None,
                    "wall": 0.0,
                    "timed_out": False,
                    "error": f"harness: {type(e).__name__}: {e}",
                    "stderr_tail": "",
                    "calls": [],
                    "run_kernel": [],
                    "begin": None,
                    "end": None,
                    "dir": "",
                }
        entry = compare_script(script, needs, runs)
        entries.append(entry)
        print_script(entry, sides)
        sys.stdout.flush()

    if args.json:
        slim = []
        for e in entries:
            runs = {s: {k: v for k, v in r.items() if k != "calls"} for s, r in e["runs"].items()}
            slim.append({"script": e["script"], "needs": e["needs"], "runs": runs, "calls": e["calls"]})
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "scripts": slim}, f, indent=1, default=str)
        log(f"wrote {args.json}")
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(markdown(entries, sides, meta))
        log(f"wrote {args.markdown}")
    log(f"records, outputs and databases are in {workdir}")


if __name__ == "__main__":
    main()
