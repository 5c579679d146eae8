#!/usr/bin/env python3
"""Tilescope's search strategies side by side with Kernel Tuner's, on the same recorded spaces.

For each case (a recording of a whole space, its T1 problem, the shape index):

1. the recording is imported into a temporary database and exported as a Kernel Tuner cache
   (`tilescope-cli import`, `tilescope-cli export --format kerneltuner`);
2. Kernel Tuner's tune_params and restrictions are built from the T1 problem (the conditions with
   the shape's constants substituted, as a callable) and each Kernel Tuner strategy runs in
   simulation mode on that cache, once per seed, with max_fevals = the lab's budget
   (ceil(F x space size)); the unique configs in the order Kernel Tuner evaluated them make one
   run of a traces file;
3. `tilescope-cli lab PROBLEM --replay RECORDING --shape N --repeats R --fraction F
   --traces TRACES --json OUT` scores Tilescope's strategies and the traces with the same code
   (fraction of the optimum after 1/2/5/10/20 % of the space, evaluations to within 1 %/5 %,
   the methodology score of Willemsen et al.);
4. one combined table per case is printed (and written as markdown with --markdown), with notes on
   what makes the comparison unequal (configs Kernel Tuner evaluated twice, runs that stopped
   before the budget, strategies that failed).

Kernel Tuner's strategies keep their default options (random_sample gets fraction = F, as its
default of 10 % would cut it short; --kt-option STRATEGY:NAME=VALUE changes others). Each run
seeds Python's and NumPy's generators with its seed and passes seed= to tune_kernel. Runs go in
child processes (--jobs at a time, --run-timeout each); bayes_opt is the slow one (about a minute
and a half per run on a space of 2,761 configs).

Kernel Tuner runs in a virtual environment of its own (--venv, created with the pinned version
when missing); this script needs only the standard library to start. Not part of the test suite.

    python3 tests/bench/kerneltuner_side_by_side.py --cli build/release/app/tilescope-cli \\
        --venv /tmp/kt-venv --repeats 30 --markdown side_by_side.md
"""

import argparse
import gzip
import json
import math
import os
import subprocess
import sys
import tempfile
import time

KERNEL_TUNER_VERSION = "1.5.0"
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_STRATEGIES = [
    "random_sample",
    "genetic_algorithm",
    "simulated_annealing",
    "diff_evo",
    "pso",
    "firefly_algorithm",
    "greedy_ils",
    "mls",
    "basinhopping",
    "dual_annealing",
    "bayes_opt",
]
INNER_MARK = "TILESCOPE_KT_SIDE_BY_SIDE_INNER"


def log(*args):
    print(*args, file=sys.stderr, flush=True)


# The virtual environment


def ensure_venv(venv):
    """Creates `venv` with the pinned Kernel Tuner when missing, and re-executes this script in it."""
    python = os.path.join(venv, "bin", "python")
    if not os.path.exists(python):
        log(f"creating a virtual environment in {venv}")
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    probe = subprocess.run(
        [python, "-c", "import importlib.metadata as m; print(m.version('kernel_tuner'))"],
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0 or probe.stdout.strip() != KERNEL_TUNER_VERSION:
        log(f"installing kernel_tuner=={KERNEL_TUNER_VERSION} in {venv}")
        subprocess.run([python, "-m", "pip", "install", "--quiet", f"kernel_tuner=={KERNEL_TUNER_VERSION}"], check=True)
    env = dict(os.environ)
    env[INNER_MARK] = "1"
    os.execve(python, [python, os.path.abspath(__file__)] + sys.argv[1:], env)


# Cases


def recording_metadata(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        doc = json.load(f)
    return doc.get("metadata", {}).get("tilescope", {})


def default_cases():
    """The lab recordings in the repository, each with its kernel's problem and recorded shape."""
    files = [os.path.join(REPO, "resources", "demo", "sgemm-h200-2048.t4.json.gz")]
    lab = os.path.join(REPO, "tests", "bench", "data", "lab")
    if os.path.isdir(lab):
        files += sorted(
            os.path.join(lab, f) for f in os.listdir(lab) if f.endswith(".t4.json.gz") or f.endswith(".t4.json")
        )
    cases = []
    for path in files:
        if not os.path.exists(path):
            continue
        meta = recording_metadata(path)
        kernel = meta.get("kernel", "")
        problem = os.path.join(REPO, "kernels", kernel, kernel + ".json")
        if not kernel or not os.path.exists(problem) or "shape_index" not in meta:
            log(f"skipping {path}: no kernels/{kernel}/{kernel}.json or no shape index in its metadata")
            continue
        cases.append((path, problem, int(meta["shape_index"])))
    return cases


def cases_from_args(args):
    if not args.recording:
        return default_cases()
    n = len(args.recording)
    problems = args.problem or []
    shapes = args.shape or []
    if len(problems) == 1:
        problems = problems * n
    if len(shapes) == 1:
        shapes = shapes * n
    if len(problems) != n or len(shapes) != n:
        sys.exit("give --problem and --shape once, or once per --recording")
    return list(zip(args.recording, problems, shapes))


# The T1 problem as Kernel Tuner sees it

PY_FUNCTIONS = {
    "min": min,
    "max": max,
    "abs": abs,
    "ceil": math.ceil,
    "floor": math.floor,
    "log2": math.log2,
    "int": int,
    "float": float,
    "range": range,
    "list": list,
    "True": True,
    "False": False,
}


def parse_values(text):
    """A T1 Values string ("[16, 32, 64]", "range(1, 9)") as a list."""
    values = eval(text, {"__builtins__": {}}, dict(PY_FUNCTIONS))  # T1 values are Python literals
    return list(values)


def load_problem(path, shape_index):
    with open(path) as f:
        problem = json.load(f)
    space = problem["ConfigurationSpace"]
    tune_params = {}
    for p in space["TuningParameters"]:
        values = p["Values"]
        tune_params[p["Name"]] = parse_values(values) if isinstance(values, str) else list(values)
    shapes = problem.get("Tilescope", {}).get("Shapes", [])
    constants = {}
    if shapes:
        shape = shapes[shape_index]
        # {"M": 2048, ...} or {"Name": ..., "Dims": {...}}: take the integers
        dims = shape.get("Dims", shape) if isinstance(shape, dict) else {}
        constants = {k: v for k, v in dims.items() if isinstance(v, int) and not isinstance(v, bool)}
    conditions = [c["Expression"] if isinstance(c, dict) else c for c in space.get("Conditions", [])]
    return tune_params, conditions, constants


def make_restriction(conditions, constants):
    """One callable over a config dict: every condition holds (an error, e.g. division by zero, fails it)."""
    code = [compile(expr, f"<condition {i}>", "eval") for i, expr in enumerate(conditions)]
    base = dict(PY_FUNCTIONS)
    base.update(constants)

    def restriction(params):
        env = dict(base)
        env.update(params)
        try:
            return all(eval(c, {"__builtins__": {}}, env) for c in code)
        except (ZeroDivisionError, ValueError, OverflowError):
            return False

    return restriction


def valid_configs(tune_params, restriction):
    import itertools

    names = list(tune_params)
    return [
        combo for combo in itertools.product(*tune_params.values()) if restriction(dict(zip(names, combo)))
    ]


# Kernel Tuner runs


def strategy_options(strategy, budget, fraction, extra):
    options = {"max_fevals": budget}
    if strategy == "random_sample":
        options["fraction"] = fraction  # else it samples its default 10 % at most
    options.update(extra.get(strategy, {}))
    return options


def one_run(strategy, seed, setup, queue):
    """Runs in a child process: one Kernel Tuner strategy with one seed; puts (configs, info)."""
    import random
    import warnings

    import numpy as np

    import kernel_tuner

    warnings.simplefilter("ignore")
    random.seed(seed)
    np.random.seed(seed)
    names = list(setup["tune_params"])
    restriction = make_restriction(setup["conditions"], setup["constants"])
    started = time.time()
    try:
        results, _ = kernel_tuner.tune_kernel(
            setup["kernel_name"],
            "",
            setup["problem_size"],
            [],
            setup["tune_params"],
            restrictions=restriction,
            strategy=strategy,
            strategy_options=strategy_options(strategy, setup["budget"], setup["fraction"], setup["options"]),
            simulation_mode=True,
            cache=setup["cache"],
            quiet=True,
            verbose=False,
            seed=seed,
        )
    except Exception as e:  # a strategy that does not run in simulation mode
        queue.put({"error": f"{type(e).__name__}: {e}"})
        return
    seen = set()
    configs = []
    evaluations = 0
    invalid = 0
    for r in results:
        if r is None:
            continue
        key = tuple(r[n] for n in names)
        if not restriction(dict(zip(names, key))):
            invalid += 1  # not a config of the space: Kernel Tuner answered it without the cache
            continue
        evaluations += 1
        if key in seen:
            continue
        seen.add(key)
        configs.append({n: v for n, v in zip(names, key)})
    queue.put(
        {
            "configs": configs,
            "evaluations": evaluations,
            "invalid": invalid,
            "seconds": time.time() - started,
        }
    )


def run_kernel_tuner(tasks, setup, timeout, jobs):
    """Runs (strategy, seed) tasks, `jobs` child processes at a time; a result (or an error) per task."""
    import multiprocessing
    import queue as queues

    ctx = multiprocessing.get_context("fork")
    results = {}
    pending = list(tasks)
    running = []  # (task, process, queue, started)
    while pending or running:
        while pending and len(running) < jobs:
            task = pending.pop(0)
            q = ctx.Queue()
            p = ctx.Process(target=one_run, args=(task[0], task[1], setup, q))
            p.start()
            running.append((task, p, q, time.time()))
        still = []
        for task, p, q, started in running:
            try:
                results[task] = q.get(timeout=0.05)
                p.join()
                done = results[task]
                what = done.get("error") or f"{len(done['configs'])} unique configs, {done['seconds']:.1f} s"
                log(f"  {task[0]} seed {task[1]}: {what} ({len(results)} of {len(tasks)})")
            except queues.Empty:
                if time.time() - started > timeout:
                    p.kill()
                    p.join()
                    results[task] = {"error": f"no result within {timeout:.0f} s"}
                elif not p.is_alive() and q.empty():
                    results[task] = {"error": f"the run died (exit code {p.exitcode})"}
                else:
                    still.append((task, p, q, started))
        running = still
    return results


# The lab and the table


def run(cmd, **kw):
    log("$ " + " ".join(cmd))
    return subprocess.run(cmd, check=True, **kw)


def lab_available(cli):
    probe = subprocess.run([cli, "lab", "--help"], capture_output=True, text=True)
    return probe.returncode == 0 and "--traces" in probe.stdout  # an older build shows the main help


def fmt(v, digits=3):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


def stat_mean(v):
    if isinstance(v, dict):
        return v.get("mean")
    return v


def lab_rows(report):
    """One row per strategy of the lab's JSON report: name, tool, the scores, fraction at 10 %, evals to 1 %."""
    rows = []
    for s in report.get("strategies", []):
        name = s.get("name", "?")
        tool = "Tilescope" if not s.get("source") else "Kernel Tuner"
        if ":" in name and s.get("source"):
            name = name.split(":", 1)[1]
        frac10 = None
        for m in s.get("milestones", []):
            if abs(float(m.get("percent", -1)) - 10) < 1e-9:
                frac10 = stat_mean(m.get("fraction_of_optimum"))
        target = s.get("within_1_percent", {})
        evals1 = stat_mean(target.get("evaluations"))
        never1 = target.get("never")
        rows.append(
            {
                "strategy": name,
                "tool": tool,
                "runs": s.get("runs"),
                "score": stat_mean(s.get("score")),
                "score_evals": stat_mean(s.get("score_evaluations")),
                "frac10": frac10,
                "evals1": evals1,
                "never1": never1,
            }
        )
    return rows


COLUMNS = [
    ("strategy", "strategy", 22, None),
    ("tool", "tool", 13, None),
    ("runs", "runs", 5, None),
    ("score", "score (time)", 13, 3),
    ("score_evals", "score (evals)", 14, 3),
    ("frac10", "optimum at 10 %", 16, 3),
    ("evals1", "evals to 1 %", 13, 1),
    ("never1", "never 1 %", 10, None),
]


def table(case_label, rows, notes, preamble=()):
    """The rows best score first, as text and as markdown."""

    def key(r):
        v = r.get("score")
        return -v if isinstance(v, (int, float)) and not math.isnan(v) else math.inf

    ordered = sorted(rows, key=key)
    md = [f"### {case_label}", ""] + list(preamble) + ([""] if preamble else [])
    md += ["| " + " | ".join(c[1] for c in COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    text = [case_label] + list(preamble) + [""]
    text.append("  ".join(c[1].ljust(c[2]) for c in COLUMNS))
    for r in ordered:
        cells = [fmt(r.get(c[0]), c[3]) if c[3] is not None else fmt(r.get(c[0])) for c in COLUMNS]
        md.append("| " + " | ".join(cells) + " |")
        text.append("  ".join(v.ljust(c[2]) for v, c in zip(cells, COLUMNS)))
    if notes:
        md += [""] + [f"- {n}" for n in notes]
        text += [""] + [f"note: {n}" for n in notes]
    return "\n".join(text), "\n".join(md)


def run_case(args, recording, problem, shape, work):
    label = f"{os.path.basename(recording)} (shape {shape})"
    log(f"== {label}")
    db = os.path.join(work, "recording.db")
    cache = os.path.join(work, "cache.json")
    run([args.cli, "import", recording, "--db", db], stdout=subprocess.DEVNULL)
    run([args.cli, "export", db, "--format", "kerneltuner", "-o", cache], stdout=subprocess.DEVNULL)
    with open(cache) as f:
        cached = json.load(f)

    tune_params, conditions, constants = load_problem(problem, shape)
    notes = []
    if list(tune_params) != cached["tune_params_keys"]:
        sys.exit(
            f"{label}: the problem's parameters {list(tune_params)} are not the cache's {cached['tune_params_keys']}"
        )
    restriction = make_restriction(conditions, constants)
    space = valid_configs(tune_params, restriction)
    size = len(space)
    budget = math.ceil(args.fraction * size)
    missing = [c for c in space if ",".join(str(v) for v in c) not in cached["cache"]]
    if missing:
        notes.append(
            f"{len(missing)} configs of the space are not in the recording; "
            "Kernel Tuner stops on them in simulation mode"
        )
    ok = sum(1 for e in cached["cache"].values() if "__error__" not in e)
    log(f"space {size} configs ({ok} ran correctly in the recording), budget {budget} ({args.fraction * 100:g} %)")

    setup = {
        "kernel_name": cached["kernel_name"],
        "problem_size": cached["problem_size"],
        "tune_params": tune_params,
        "conditions": conditions,
        "constants": constants,
        "budget": budget,
        "fraction": args.fraction,
        "cache": cache,
    }
    setup["options"] = args.kt_options
    runs = []
    failed = {}
    per_strategy = {}
    # One seed of each strategy first: a strategy that fails in simulation mode is not run again.
    tasks = [(strategy, 0) for strategy in args.strategies]
    results = run_kernel_tuner(tasks, setup, args.run_timeout, args.jobs)
    tasks = [(st, seed) for st in args.strategies if "error" not in results[(st, 0)] for seed in range(1, args.repeats)]
    results.update(run_kernel_tuner(tasks, setup, args.run_timeout, args.jobs))
    for strategy in args.strategies:
        stats = per_strategy.setdefault(
            strategy, {"runs": 0, "short": 0, "repeated": 0, "invalid": 0, "seconds": 0.0, "unique": []}
        )
        for seed in range(args.repeats):
            result = results.get((strategy, seed))
            if result is None:
                break
            if "error" in result:
                failed.setdefault(strategy, f"seed {seed}: {result['error']}")
                log(f"{strategy} seed {seed}: {result['error']}")
                continue
            configs = result["configs"]
            stats["runs"] += 1
            stats["unique"].append(len(configs))
            stats["short"] += len(configs) < budget
            stats["repeated"] += result["evaluations"] - len(configs)
            stats["invalid"] += result["invalid"]
            stats["seconds"] += result["seconds"]
            runs.append({"strategy": strategy, "seed": seed, "configs": configs})
        if stats["runs"]:
            u = stats["unique"]
            log(
                f"{strategy}: {stats['runs']} runs, {min(u)}..{max(u)} unique configs, "
                f"{stats['repeated']} repeated evaluations, {stats['seconds']:.1f} s"
            )

    for strategy, stats in per_strategy.items():
        if not stats["runs"]:
            continue
        if stats["short"]:
            u = stats["unique"]
            notes.append(
                f"Kernel Tuner {strategy}: {stats['short']} of {stats['runs']} runs stopped before the budget of "
                f"{budget} (unique configs {min(u)}..{max(u)}, mean {sum(u) / len(u):.0f}); their curves stay flat"
            )
        if stats["repeated"]:
            notes.append(
                f"Kernel Tuner {strategy}: {stats['repeated']} evaluations of configs already evaluated in the same "
                f"run (served from the cache, not counted in its budget; dropped from the traces)"
            )
    for strategy, why in failed.items():
        done = per_strategy[strategy]["runs"]
        notes.append(f"Kernel Tuner {strategy} failed ({done} runs made it): {why}")

    traces = os.path.join(work, "traces.json")
    with open(traces, "w") as f:
        json.dump({"tool": f"Kernel Tuner {KERNEL_TUNER_VERSION}", "runs": runs}, f)
    if args.keep_traces:
        keep = os.path.join(args.keep_traces, os.path.basename(recording).split(".")[0] + f"-shape{shape}.traces.json")
        os.makedirs(args.keep_traces, exist_ok=True)
        with open(keep, "w") as f:
            json.dump({"tool": f"Kernel Tuner {KERNEL_TUNER_VERSION}", "runs": runs}, f)

    if not lab_available(args.cli):
        notes.append("tilescope-cli has no lab command in this build: Kernel Tuner's traces were made but not scored")
        summary = [
            {"strategy": s, "tool": "Kernel Tuner", "runs": st["runs"]} for s, st in per_strategy.items() if st["runs"]
        ]
        return table(label, summary, notes) + (traces,)

    out = os.path.join(work, "lab.json")
    cmd = [args.cli, "lab", problem, "--replay", recording, "--shape", str(shape), "--repeats", str(args.repeats)]
    cmd += ["--fraction", str(args.fraction), "--traces", traces, "--json", out]
    if args.ours:
        cmd += ["--strategies", ",".join(args.ours)]
    run(cmd, stdout=sys.stderr)
    with open(out) as f:
        report = json.load(f)
    recorded = report.get("recording", {})
    lab_size = recorded.get("space_size")
    lab_budget = report.get("setup", {}).get("evaluations_per_run")
    if lab_size is not None and int(lab_size) != size:
        notes.append(f"the lab's space has {lab_size} configs, Kernel Tuner's {size}")
    if lab_budget is not None and int(lab_budget) != budget:
        notes.append(f"the lab's budget is {lab_budget} evaluations, Kernel Tuner's max_fevals {budget}")
    notes += [f"lab: {n}" for n in report.get("notes", [])]
    for s in report.get("strategies", []):
        notes += [f"lab, {s.get('name')}: {n}" for n in s.get("notes", [])]
    preamble = [
        f"Space {size} configs ({ok} ran correctly), budget {budget} evaluations per run "
        f"({args.fraction * 100:g} %), {args.repeats} runs per strategy; optimum "
        f"{fmt(recorded.get('optimum_ms'), 4)} ms ({recorded.get('objective', '')} {fmt(recorded.get('optimum'), 2)}); "
        f"score window: evaluations {report.get('score_window', {}).get('start_evaluations')}.."
        f"{report.get('score_window', {}).get('end_evaluations')}."
    ]
    return table(label, lab_rows(report), notes, preamble) + (out,)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--venv", help="virtual environment for Kernel Tuner (created when missing)")
    parser.add_argument("--cli", help="tilescope-cli (default: build/release/app/tilescope-cli)")
    parser.add_argument("--recording", action="append", help="a recording of a whole space (repeatable)")
    parser.add_argument("--problem", action="append", help="its T1 problem (once, or once per recording)")
    parser.add_argument("--shape", action="append", type=int, help="its shape index (once, or once per recording)")
    parser.add_argument("--fraction", type=float, default=0.2, help="budget: this share of the space (default 0.2)")
    parser.add_argument("--repeats", type=int, default=30, help="runs per strategy (seeds 0..R-1)")
    parser.add_argument("--strategies", type=lambda s: s.split(","), default=DEFAULT_STRATEGIES,
                        help="Kernel Tuner strategies, comma-separated")
    parser.add_argument("--ours", type=lambda s: s.split(","), help="Tilescope strategies (default: the lab's)")
    parser.add_argument("--run-timeout", type=float, default=600, help="seconds one Kernel Tuner run may take")
    parser.add_argument("--jobs", type=int, default=1, help="Kernel Tuner runs at a time (processes)")
    parser.add_argument(
        "--kt-option",
        action="append",
        default=[],
        metavar="STRATEGY:NAME=VALUE",
        help="a Kernel Tuner strategy option, e.g. genetic_algorithm:maxiter=1000 (repeatable)",
    )
    parser.add_argument("--markdown", help="also write the tables as markdown to this file")
    parser.add_argument("--keep-traces", help="keep the traces files in this folder")
    args = parser.parse_args()
    args.kt_options = {}
    for option in args.kt_option:
        strategy, _, assignment = option.partition(":")
        name, _, value = assignment.partition("=")
        if not strategy or not name or not value:
            sys.exit(f"--kt-option {option}: expected STRATEGY:NAME=VALUE")
        try:
            value = json.loads(value)
        except ValueError:
            pass  # a string
        args.kt_options.setdefault(strategy, {})[name] = value

    if args.venv and not os.environ.get(INNER_MARK):
        ensure_venv(os.path.abspath(args.venv))
    try:
        import kernel_tuner  # noqa: F401
    except ImportError:
        sys.exit("Kernel Tuner is not importable here: give --venv DIR")
    args.cli = os.path.abspath(args.cli or os.path.join(REPO, "build", "release", "app", "tilescope-cli"))
    if not os.path.exists(args.cli):
        sys.exit(f"no tilescope-cli at {args.cli} (--cli)")

    cases = cases_from_args(args)
    markdown = [
        f"Kernel Tuner {KERNEL_TUNER_VERSION} (simulation mode) and Tilescope on recorded spaces: "
        f"budget {args.fraction * 100:g} % of each space, {args.repeats} runs per strategy.",
        "",
    ]
    for recording, problem, shape in cases:
        with tempfile.TemporaryDirectory(prefix="kt-side-by-side-") as work:
            text, md, _ = run_case(args, os.path.abspath(recording), os.path.abspath(problem), shape, work)
        print(text + "\n", flush=True)
        markdown += [md, ""]
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("\n".join(markdown))
        log(f"wrote {args.markdown}")


if __name__ == "__main__":
    main()
