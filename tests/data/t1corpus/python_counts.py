#!/usr/bin/env python3
"""Counts the configuration spaces of the T1 corpus with Python itself.

For every *.json in this folder (sorted by name) this script evaluates each
tuning parameter's Values the way Kernel Tuner's T1 loader does (``eval`` of the
text with Python's builtins; a JSON array is taken as it is; a range or tuple
becomes a list), takes the Cartesian product of all value lists, and counts the
configurations for which every Condition's Expression is true (``eval`` of the
compiled expression over a dict of the parameter values).

It writes counts.json beside itself:

    {"<file>.json": {"raw": R, "valid": V, "parameters": {"<name>": [values...]}}}

with sorted keys and a 2-space indent. ``--check`` recomputes everything and
exits with status 1, printing the differences, when counts.json disagrees.
``--count FILE`` prints one file's {"raw": R, "valid": V} (for the editor's tests).

Standard library only. The enumeration binds parameters in file order (those
that appear in a condition first; the others only multiply the count) and
checks each condition as soon as the last parameter it reads is bound.
"""

import argparse
import ast
import builtins
import itertools
import json
import math
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
COUNTS = HERE / "counts.json"
GLOBALS = {"__builtins__": builtins}


def evaluate_values(param):
    """Returns the parameter's value list, as Kernel Tuner would evaluate it."""
    values = param["Values"]
    if isinstance(values, list):
        result = list(values)
    elif isinstance(values, str):
        result = eval(values, dict(GLOBALS))
    else:
        raise TypeError(f"{param['Name']}: Values is neither a string nor a JSON array")
    if isinstance(result, (range, tuple)):
        result = list(result)
    if not isinstance(result, list):
        raise TypeError(f"{param['Name']}: Values {values!r} gives {type(result).__name__}, not a list")
    return result


def check_values(file_name, name, kind, values):
    """Corpus rules: a non-empty, duplicate-free list of one Python type that fits the T1 Type."""
    problems = []
    if not values:
        problems.append("no values")
    seen = []
    for v in values:
        if any(type(v) is type(s) and v == s for s in seen):
            problems.append(f"duplicate value {v!r}")
        seen.append(v)
    types = {type(v) for v in values}
    if len(types) > 1:
        problems.append(f"mixed types {sorted(t.__name__ for t in types)}")
    expected = {"int": int, "uint": int, "float": float, "bool": bool, "string": str}.get(kind)
    if expected is not None and types and types != {expected}:
        problems.append(f"Type {kind} but values of type {sorted(t.__name__ for t in types)}")
    if kind == "uint" and any(v < 0 for v in values):
        problems.append("negative uint value")
    for p in problems:
        print(f"error: {file_name}: parameter {name}: {p}", file=sys.stderr)
    return not problems


def names_in(expression, parameter_names):
    """The parameter names an expression reads (ast.Name nodes anywhere in it)."""
    tree = ast.parse(expression, mode="eval")
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and node.id in parameter_names}


def count_space(spec):
    """Returns (raw, valid, parameters) for one T1 document."""
    space = spec["ConfigurationSpace"]
    params = space["TuningParameters"]
    names = [p["Name"] for p in params]
    values = {p["Name"]: evaluate_values(p) for p in params}
    raw = math.prod(len(values[n]) for n in names)

    conditions = []
    for c in space.get("Conditions") or []:
        expression = c["Expression"]
        code = compile(expression, "<cond>", "eval")
        conditions.append((expression, code, names_in(expression, set(names))))

    # Parameters no condition reads only multiply the count; bind the others in file order.
    constrained = [n for n in names if any(n in used for _, _, used in conditions)]
    free = [n for n in names if n not in constrained]
    multiplier = math.prod(len(values[n]) for n in free)
    position = {n: i for i, n in enumerate(constrained)}

    # Conditions that read no parameter at all are checked once, up front.
    at_depth = [[] for _ in constrained]
    env = {}
    for expression, code, used in conditions:
        if not used:
            if not eval(code, GLOBALS, env):
                return raw, 0, values
            continue
        at_depth[max(position[n] for n in used)].append(code)

    order = [(n, values[n], at_depth[i]) for i, n in enumerate(constrained)]
    last = len(order) - 1

    def walk(depth):
        name, vals, checks = order[depth]
        if depth == last:
            if not checks:
                return len(vals)
            n = 0
            for v in vals:
                env[name] = v
                for code in checks:
                    if not eval(code, GLOBALS, env):
                        break
                else:
                    n += 1
            return n
        total = 0
        for v in vals:
            env[name] = v
            for code in checks:
                if not eval(code, GLOBALS, env):
                    break
            else:
                total += walk(depth + 1)
        return total

    valid = (walk(0) if order else 1) * multiplier
    return raw, valid, values


def brute_force(spec):
    """Plain itertools.product over every parameter (for --brute on small spaces)."""
    space = spec["ConfigurationSpace"]
    params = space["TuningParameters"]
    names = [p["Name"] for p in params]
    values = [evaluate_values(p) for p in params]
    codes = [compile(c["Expression"], "<cond>", "eval") for c in space.get("Conditions") or []]
    valid = 0
    for combo in itertools.product(*values):
        env = dict(zip(names, combo))
        if all(eval(code, GLOBALS, env) for code in codes):
            valid += 1
    return valid


def compute(brute_limit=0):
    results = {}
    ok = True
    rows = []
    total_start = time.perf_counter()
    for path in sorted(HERE.glob("*.json")):
        if path.name == COUNTS.name:
            continue
        spec = json.loads(path.read_text())
        start = time.perf_counter()
        raw, valid, values = count_space(spec)
        seconds = time.perf_counter() - start
        kinds = {p["Name"]: p["Type"] for p in spec["ConfigurationSpace"]["TuningParameters"]}
        for name, vals in values.items():
            ok &= check_values(path.name, name, kinds[name], vals)
        if brute_limit and raw <= brute_limit:
            bf = brute_force(spec)
            if bf != valid:
                print(f"error: {path.name}: pruned count {valid} != brute-force count {bf}", file=sys.stderr)
                ok = False
        results[path.name] = {"raw": raw, "valid": valid, "parameters": values}
        rows.append((path.name, raw, valid, seconds))
    total = time.perf_counter() - total_start

    width = max(len(r[0]) for r in rows)
    print(f"{'file':<{width}}  {'raw':>10}  {'valid':>10}  {'seconds':>8}")
    for name, raw, valid, seconds in rows:
        print(f"{name:<{width}}  {raw:>10}  {valid:>10}  {seconds:>8.2f}")
    print(f"{'total':<{width}}  {'':>10}  {'':>10}  {total:>8.2f}")
    return results, ok


def serialize(results):
    return json.dumps(results, indent=2, sort_keys=True) + "\n"


def differences(old, new):
    lines = []
    for name in sorted(set(old) | set(new)):
        if name not in old:
            lines.append(f"{name}: missing from counts.json")
        elif name not in new:
            lines.append(f"{name}: in counts.json but no such problem file")
        else:
            for key in ("raw", "valid"):
                if old[name].get(key) != new[name][key]:
                    lines.append(f"{name}: {key} {old[name].get(key)} in counts.json, {new[name][key]} computed")
            op, np_ = old[name].get("parameters", {}), new[name]["parameters"]
            for p in sorted(set(op) | set(np_)):
                if op.get(p) != np_.get(p):
                    lines.append(f"{name}: parameter {p}: {op.get(p)!r} in counts.json, {np_.get(p)!r} computed")
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with counts.json instead of writing it")
    parser.add_argument("--brute", type=int, default=0, metavar="N",
                        help="also count spaces of at most N raw configs with a plain itertools.product")
    parser.add_argument("--count", metavar="FILE",
                        help="print the raw and valid counts of one problem file as JSON, and nothing else")
    args = parser.parse_args()

    if args.count:
        raw, valid, _ = count_space(json.loads(Path(args.count).read_text()))
        print(json.dumps({"raw": raw, "valid": valid}))
        return 0
    results, ok = compute(args.brute)
    if not ok:
        print("errors in the corpus (see above)", file=sys.stderr)
        return 1
    if args.check:
        if not COUNTS.exists():
            print("counts.json does not exist", file=sys.stderr)
            return 1
        old = json.loads(COUNTS.read_text())
        diff = differences(old, json.loads(serialize(results)))
        if diff:
            print("counts.json differs:")
            for line in diff:
                print("  " + line)
            return 1
        print("counts.json is up to date")
        return 0
    COUNTS.write_text(serialize(results))
    print(f"wrote {COUNTS.relative_to(HERE.parent.parent.parent) if HERE.parent.parent.parent in COUNTS.parents else COUNTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
