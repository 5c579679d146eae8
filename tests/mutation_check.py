#!/usr/bin/env python3
"""Mutation check: how many small faults planted in the code the suites catch.

Each mutant changes one operator or constant in one line of the files checked (a comparison
turned (`<` to `<=`, `==` to `!=`), arithmetic swapped (`+` and `-`, `*` and `/`), `&&` and
`||` swapped, `true` and `false` swapped, an integer constant changed by one); the build is
redone and the suites that cover those files run. A mutant is killed when a suite fails (or
runs past the timeout), survives when they all pass, and is stillborn when it does not compile
(not counted). Survivors are listed: each is a fault the tests would miss. Mutants shown to change
nothing any caller can observe are listed in EQUIVALENT with the reason; they are reported apart
and not counted either.

The sources are changed in place and restored after each mutant, so run it in a clean
checkout of its own, not in the tree you are editing:

    git worktree add /tmp/mutation HEAD && cd /tmp/mutation
    python3 tests/mutation_check.py --sample 80       # a seeded sample of the mutants
    python3 tests/mutation_check.py --all             # every one (hours)

Not run by the test presets. Exits 1 when the score is under --goal (default 90 %).
"""

import argparse
import os
import random
import re
import subprocess
import sys
import time

FILES = [
    "core/expr/expression.cpp",
    "core/expr/ops.cpp",
    "core/expr/parse.cpp",
    "core/expr/tree.cpp",
    "core/expr/value.cpp",
    "core/space/configspace.cpp",
    "core/measure/cuda/sampling.cpp",
]
SUITES = ["tst_expr", "tst_space", "tst_sampling", "tst_spec", "tst_hostile_parsers"]

# (pattern, replacement): binary operators are matched with spaces on both sides, as the
# project's format writes them (so that `Value* v`, `a->b` and template brackets are left alone).
SWAPS = [
    (" <= ", " < "), (" < ", " <= "), (" >= ", " > "), (" > ", " >= "),
    (" == ", " != "), (" != ", " == "),
    (" + ", " - "), (" - ", " + "), (" * ", " / "), (" / ", " * "),
    (" && ", " || "), (" || ", " && "),
]
WORDS = [(r"\btrue\b", "false"), (r"\bfalse\b", "true")]

# Mutants that change nothing observable, each with the reason: (file, the line's code as
# written, stripped, the change, its column in the stripped line) -> why.
EQUIVALENT = {
    ("core/expr/parse.cpp", "for (std::size_t j = 0; j <= b.size(); ++j)", "0 -> 1", 21):
        "editDistance's row starts zeroed: prev[0] is 0 whether the loop sets it or not",
    ("core/expr/parse.cpp", "const Token& var = m_toks[std::min(k + 1, m_toks.size() - 1)];", "1 -> 2", 58):
        "a 'for' directly before the end of the input never reaches the parser: the lexer refuses the "
        "bracket the comprehension leaves open",
    ("core/expr/ops.cpp", "if (c == '_' && i > b && i + 1 < e && std::isdigit(static_cast<unsigned char>(text[i - 1])) &&",
     "'<' -> '<='", 30):
        "text[e] is a blank or the string's terminating NUL, neither a digit, so reading it decides nothing",
    ("core/expr/tree.cpp", "std::int64_t given[3] = {0, 0, 1};", "3 -> 4", 19):
        "a fourth slot in the array of slice bounds, never read",
    ("core/expr/tree.cpp", "v = step < 0 ? n - 1 : n;", "0 -> 1", 11):
        "step < 1 is step < 0 here: a step of 0 was refused two lines above",
    ("core/space/configspace.cpp", "int b = 0;", "0 -> 1", 8):
        "bitsFor returns max(b, 1): starting the count at 1 gives the same width for every n",
    ("core/space/configspace.cpp", "int at = -1;", "1 -> 2", 10):
        "any negative level means 'checked at no level' (a condition without parameters); only at >= 0 is read",
    ("core/space/configspace.cpp", "return known ? *known : 0;", "0 -> 1", 24):
        "completions() is asked only about states countFrom stored (their prefix passed), so the memo always "
        "knows them",
}
INTEGER = re.compile(r"(?<![\w.])(\d+)(?![\w.])")


def code_part(line):
    """The line without a trailing // comment and with string and char literals blanked."""
    out, quote, i = [], None, 0
    while i < len(line):
        c = line[i]
        if quote:
            if c == "\\":
                out.append("  ")
                i += 2
                continue
            out.append(" " if c != quote else c)
            if c == quote:
                quote = None
        elif c in "\"'":
            quote = c
            out.append(c)
        elif line.startswith("//", i):
            break
        else:
            out.append(c)
        i += 1
    return "".join(out)


def mutants_of(path, text):
    found = []
    in_block_comment = False
    for number, line in enumerate(text.split("\n"), 1):
        stripped = line.strip()
        if in_block_comment:
            if "*/" in stripped:
                in_block_comment = False
            continue
        if stripped.startswith("/*"):
            in_block_comment = "*/" not in stripped
            continue
        if not stripped or stripped.startswith(("//", "#", "static_assert", "throw ", "std::printf", "return \"")):
            continue
        code = code_part(line)
        for old, new in SWAPS:
            start = 0
            while (at := code.find(old, start)) >= 0:
                found.append((path, number, at, len(old), new, f"'{old.strip()}' -> '{new.strip()}'"))
                start = at + 1
        for pattern, new in WORDS:
            for m in re.finditer(pattern, code):
                found.append((path, number, m.start(), len(m.group(0)), new, f"{m.group(0)} -> {new}"))
        for m in INTEGER.finditer(code):
            value = int(m.group(1))
            if value > 1 << 20:
                continue
            found.append((path, number, m.start(), len(m.group(1)), str(value + 1), f"{value} -> {value + 1}"))
    return found


def run(cmd, cwd, timeout):
    try:
        return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout).returncode
    except subprocess.TimeoutExpired:
        return "timeout"


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--build", default=os.path.join(root, "build/mutation"), help="build folder (made when missing)")
    group = p.add_mutually_exclusive_group()
    group.add_argument("--sample", type=int, default=60, help="a seeded sample of this many mutants (default 60)")
    group.add_argument("--all", action="store_true", help="every mutant")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--files", nargs="*", default=FILES, help="files to mutate, relative to the root")
    p.add_argument("--timeout", type=int, default=300, help="seconds a suite may run before it counts as killed")
    p.add_argument("--goal", type=float, default=90.0, help="the score to reach, in %% (default 90)")
    p.add_argument("--list", action="store_true", help="list the mutants and stop")
    p.add_argument("--only", nargs="*", default=None,
                   help="of the chosen mutants, run only these (as the report prints them: FILE:LINE: CHANGE)")
    args = p.parse_args()

    texts = {f: open(os.path.join(root, f)).read() for f in args.files}
    everything = [m for f in args.files for m in mutants_of(f, texts[f])]
    chosen = everything if args.all else random.Random(args.seed).sample(everything, min(args.sample, len(everything)))
    chosen.sort()

    def key(m):
        f, line, col, _, _, what = m
        text = texts[f].split("\n")[line - 1]
        indent = len(text) - len(text.lstrip())
        return (f, text.strip(), what, col - indent)

    equivalent = [(m, EQUIVALENT[key(m)]) for m in chosen if key(m) in EQUIVALENT]
    chosen = [m for m in chosen if key(m) not in EQUIVALENT]
    if args.only is not None:
        wanted = {w.strip() for w in args.only}
        chosen = [m for m in chosen if f"{m[0]}:{m[1]}: {m[5]}" in wanted]
    if args.list:
        for f, line, _, _, _, what in chosen:
            print(f"{f}:{line}: {what}")
        print(f"{len(chosen)} of {len(everything)} mutants")
        return 0

    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"] + args.files, cwd=root,
                           capture_output=True, text=True).stdout.strip()
    if dirty:
        print("mutation_check: the files to mutate have uncommitted changes; run it in a clean checkout",
              file=sys.stderr)
        return 2
    if not os.path.exists(os.path.join(args.build, "CMakeCache.txt")):
        subprocess.run(["cmake", "-S", root, "-B", args.build, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
                        "-DTILESCOPE_BUILD_GUI=OFF", "-DCUDAToolkit_ROOT=/usr/local/cuda"], check=True)
    build = ["cmake", "--build", args.build, "--target"] + SUITES
    print(f"mutation_check: {len(chosen)} of {len(everything)} mutants in {len(args.files)} files; "
          f"suites {' '.join(SUITES)}; building once first", flush=True)
    if run(build, root, None) != 0 or any(run([os.path.join(args.build, "tests", s)], root, args.timeout) != 0
                                          for s in SUITES):
        print("mutation_check: the unmutated build or suites fail; fix that first", file=sys.stderr)
        return 2

    killed, survived, stillborn = [], [], []
    start = time.time()
    try:
        for n, (f, line, col, length, new, what) in enumerate(chosen, 1):
            lines = texts[f].split("\n")
            original = lines[line - 1]
            lines[line - 1] = original[:col] + new + original[col + length:]
            with open(os.path.join(root, f), "w") as out:
                out.write("\n".join(lines))
            try:
                if run(build, root, None) != 0:
                    stillborn.append((f, line, what))
                    verdict = "does not compile"
                else:
                    failing = next((s for s in SUITES
                                    if run([os.path.join(args.build, "tests", s)], root, args.timeout) != 0), None)
                    (killed if failing else survived).append((f, line, what, original.strip()))
                    verdict = f"killed by {failing}" if failing else "SURVIVED"
            finally:
                with open(os.path.join(root, f), "w") as out:
                    out.write(texts[f])
            print(f"[{n}/{len(chosen)}] {f}:{line}: {what}: {verdict}", flush=True)
    finally:
        for f, text in texts.items():
            with open(os.path.join(root, f), "w") as out:
                out.write(text)
        run(build, root, None)

    counted = len(killed) + len(survived)
    score = 100.0 * len(killed) / counted if counted else 0.0
    print(f"\n{len(killed)} killed, {len(survived)} survived, {len(stillborn)} did not compile, "
          f"{len(equivalent)} equivalent; score {score:.1f} % (goal {args.goal:g} %), {time.time() - start:.0f} s")
    for (f, line, _, _, _, what), why in equivalent:
        print(f"  equivalent {f}:{line}: {what}: {why}")
    for f, line, what, original in survived:
        print(f"  survivor {f}:{line}: {what}   in: {original}")
    return 0 if score >= args.goal else 1


if __name__ == "__main__":
    sys.exit(main())
