#!/usr/bin/env python3
"""Computes the expected results of tst_expr's expression table with Python itself.

Run from this folder: python3 make_cases.py > cases.json
Each case is evaluated by Python's eval() with the variables below; the result's repr and
type name, or the exception's class name, are recorded. For errors the column is where
Tilescope reports it (1-based); for NameErrors it is the name's first character.
"""
import json
import math
import re

VARS = {
    "x": 7, "y": -3, "z": 0, "f": 2.5, "g": -0.5, "s": "half", "t": "float",
    "BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 16, "THREAD_M": 8, "THREAD_N": 4, "VEC": 4,
    "M": 4096, "N": 2048, "K": 1024, "flag": True, "off": False,
    "ProblemSize": [4096, 2048, 1],
}
LISTS = {"filter_width": [3, 5, 7], "tile": [1, 2, 4, 8]}

ENV = dict(VARS)
ENV.update(LISTS)
ENV.update({"ceil": math.ceil, "floor": math.floor, "log2": math.log2, "sqrt": math.sqrt, "math": math})

# (expression, column of the error or None)
CASES = [
    # arithmetic and Python's division semantics
    ("1 + 2 * 3", None), ("(1 + 2) * 3", None), ("7 // 2", None), ("-7 // 2", None), ("7 // -2", None),
    ("-7 // -2", None), ("7 % 3", None), ("-7 % 3", None), ("7 % -3", None), ("-7 % -3", None),
    ("7 / 2", None), ("6 / 3", None), ("-7.5 // 2", None), ("7.5 % -2", None), ("-7.5 % 2", None),
    ("x // y", None), ("x % y", None), ("y // x", None), ("y % x", None), ("f // g", None), ("f % g", None),
    ("2 ** 10", None), ("-2 ** 2", None), ("(-2) ** 2", None), ("2 ** -1", None), ("2 ** 3 ** 2", None),
    ("-2 ** -2", None), ("2.0 ** 0.5", None), ("10 ** 18", None), ("4 ** 0.5", None),
    ("1 + 2.0", None), ("3 * 0.1", None), ("0.1 + 0.2", None), ("1e16 + 1", None), ("1e-5 * 1", None),
    ("True + True", None), ("True * 3", None), ("x * 1.0", None), ("-x", None), ("+y", None), ("~x", None),
    ("x & 3", None), ("x | 8", None), ("x ^ 5", None), ("1 << 10", None), ("-16 >> 2", None),
    ("7 >> 64", None), ("-7 >> 64", None), ("x >> 63", None), ("1 << 62", None), ("-1 << 63", None),
    ("BLOCK_M & (BLOCK_M - 1) == 0", None), ("(BLOCK_M & (BLOCK_M - 1)) == 0", None),
    ("1_000_000 // 3", None), ("0x1F + 0b101 + 0o17", None),
    # comparisons, chains, mixed types
    ("32 <= BLOCK_M * BLOCK_N // (THREAD_M * THREAD_N) <= 1024", None), ("1 < 2 < 3", None), ("1 < 3 < 2", None),
    ("3 > 2 == 2", None), ("1 == 1.0", None), ("True == 1", None), ("2 ** 53 + 1 == 2.0 ** 53", None),
    ("2 ** 53 + 1 > 2.0 ** 53", None), ("s == 'half'", None), ("s != t", None), ("s < t", None),
    ("x in [1, 7, 9]", None), ("x not in [1, 7, 9]", None), ("x in (y, z)", None), ("VEC in [BLOCK_K, 4]", None),
    ("'al' in s", None), ("s in ['float', 'half']", None), ("1 == 'a'", None), ("[1, 2] == [1, 2.0]", None),
    ("[1, 2] < [1, 3]", None), ("x < y < z < 100", None),
    # boolean operators return operands and short-circuit
    ("0 or 5", None), ("3 and 0", None), ("3 and 4", None), ("'' or 'x'", None), ("not 0", None), ("not x", None),
    ("z != 0 and x // z > 1", None), ("z == 0 or x // z > 1", None), ("x > 3 and y < 0 and not off", None),
    ("not x > 3", None), ("flag and off or x", None), ("0.0 or 5", None), ("f and 7", None), ("not 0.0", None),
    ("not g", None), ("bool(0.5)", None),
    # conditional expressions
    ("x if flag else y", None), ("x if off else y if flag else z", None), ("1 if z else 1 // z if False else 3", None),
    ("(BLOCK_M if BLOCK_M > BLOCK_N else BLOCK_N) // 16", None),
    # calls and subscripts
    ("min(x, y, z)", None), ("max(x, 2.5)", None), ("max(filter_width)", None), ("min(tile)", None),
    ("ProblemSize[0] + max(filter_width) - 1", None), ("ProblemSize[-1]", None), ("abs(y)", None),
    ("abs(-2.5)", None), ("ceil(f)", None), ("floor(g)", None), ("ceil(7 / 2)", None), ("log2(BLOCK_M)", None),
    ("int(log2(BLOCK_N))", None), ("sqrt(16)", None), ("int(-2.7)", None), ("int(f)", None), ("float(x)", None),
    ("int('42')", None), ("int('1_000')", None), ("int(' -1234 ')", None), ("int(-9223372036854775808.0)", None),
    ("bool()", None), ("bool(x)", None), ("max([x, y])", None), ("min(3, 1.0, 1)", None), ("math.ceil(K / BLOCK_K)", None),
    ("max(1, min(BLOCK_M, BLOCK_N) // 8)", None), ("len(ProblemSize)", None), ("round(2.5)", None),
    ("round(3.5)", None), ("round(-0.5)", None), ("pow(2, 5)", None), ("[1, 2, 3][1]", None),
    ("4 * (BLOCK_M + BLOCK_N) * BLOCK_K <= 48 * 1024", None), ("M % BLOCK_M == 0 and N % BLOCK_N == 0", None),
    ("(BLOCK_M * BLOCK_K) % (VEC * 64) == 0", None), ("1.5e3", None), (".5 + 1", None), ("3.", None),
    # runtime errors: Python's exception and Tilescope's column
    ("x // z", 3), ("x % z", 3), ("x / z", 3), ("f / 0", 3), ("1.0 // 0.0", 5), ("log2(z)", 1), ("sqrt(y)", 1),
    ("s < x", 3), ("x + s", 3), ("ProblemSize[3]", 12), ("0 ** -1", 3), ("min([])", 1), ("int('4x')", 1),
    ("int('1__0')", 1), ("int('_1')", 1), ("int('1_')", 1), ("1 << 64", 3),
    ("2 ** 63", 3), ("1 << 63", 3), ("x * 2 ** 62", 3), ("(-8) ** 0.5", 6), ("-(-2 ** 62 * 2)", 1),
    # syntax errors (Tilescope's column)
    ("x +", 4), ("(x + 1", 7), ("x = 1", 3), ("1 +* 2", 4), ("x if y", 7), ("", 1), ("x y", 3),
    ("max(x,", 7), ("x ! y", 3), ("'abc", 1), ("1 2", 3), ("x.y", 2), ("[1, 2", 6), ("x)", 2),
    ("x is 1", 3), ("lambda: 1", 1), ("007", 1), ("0b12", 1), ("0x", 1), ("0o_", 1),
    # lists built from constants: comprehensions, concatenation, slices (folded at compile time)
    ("x in [2**i for i in range(4)]", None), ("BLOCK_M in [16 * i for i in range(1, 9) if i != 3]", None),
    ("len([1, 2] + [3] * 4)", None), ("sum([1, 2, 3]) == 6", None), ("sorted([3, 1, 2])[0]", None),
    ("ProblemSize[0] in [4096 // 2**i for i in range(3)]", None), ("max([a * b for a in range(3) for b in (1, 2)])", None),
    ("[8, 16, 32, 64][1:3]", None), ("VEC in list(range(1, 9))[::2]", None),
    ("x[1:2]", 2), ("[i * x for i in range(3)]", 1), ("[1] + 1", 5),
    # at the edges of 64 bits: an int against the float 2**63, a shift of zero, int() of 2.0**63
    ("9223372036854775807 < 2.0 ** 63", None), ("9223372036854775807 == 2.0 ** 63", None), ("0 << 100", None),
    ("int(2.0 ** 63)", 1),
    # a conditional expression walked as a tree (it holds a comprehension over a variable)
    ("sum([i * x for i in range(3)]) if x > 2 else -1", None), ("sum([i * x for i in range(3)]) if x > 9 else -1", None),
    # comprehensions over variables: evaluated with the expression
    ("len([t for t in (x, BLOCK_K) if t > 4]) <= 1", None), ("sum([i * x for i in range(3)])", None),
    ("x in [i for i in range(y, 10)]", None), ("max(t * VEC for t in (THREAD_M, THREAD_N))", None),
    ("sorted([BLOCK_N, BLOCK_M])[0] == BLOCK_M", None), ("ProblemSize[1:][0]", None),
    ("len(ProblemSize[::2])", None), ("[i // z for i in range(3)][0]", 4), ("sum([x, y, BLOCK_K]) <= 20", None),
    ("len([x, y] + [z]) == 3", None), ("[x, y][1]", None), ("[x, y] * 2 == [x, y, x, y]", None),
    # name errors (unknown names and functions)
    ("BLOCK_Q * 2", None), ("x + foo", None), ("foo(3)", None), ("math.tan(1)", None),
]


# Where Tilescope departs from Python on purpose, with the reason: its ints are 64-bit
# (Python's are unbounded), it has no complex numbers, and it supports no attributes, 'is' or
# lambdas; a comprehension in a condition may use only constants (it is folded when compiled).
DEPARTURES = {
    "2 ** 63": ("OverflowError", lambda r: r["repr"] == str(2**63)),
    "1 << 63": ("OverflowError", lambda r: r["repr"] == str(2**63)),
    "1 << 64": ("OverflowError", lambda r: r["repr"] == str(2**64)),
    "x * 2 ** 62": ("OverflowError", lambda r: int(r["repr"]) > 2**63 - 1),
    "int(2.0 ** 63)": ("OverflowError", lambda r: r["repr"] == str(2**63)),
    "-(-2 ** 62 * 2)": ("OverflowError", lambda r: int(r["repr"]) == 2**63),
    "(-8) ** 0.5": ("ValueError", lambda r: r["type"] == "complex"),
    "x.y": ("SyntaxError", lambda r: r.get("error") == "AttributeError"),
    "x is 1": ("SyntaxError", lambda r: r["repr"] == "False"),
    "lambda: 1": ("SyntaxError", lambda r: r["type"] == "function"),
    "math.tan(1)": ("NameError", lambda r: r["type"] == "float"),
    "[i * x for i in range(3)]": ("TypeError", lambda r: r["repr"] == "[0, 7, 14]"),  # a list is no condition
}

# T1 parameter value lists, as Kernel Tuner evaluates them (eval with Python's builtins only):
# (text, column of the error or None). Tuples and ranges compare as lists.
VALUE_LISTS = [
    ("[16, 32, 64]", None), ("range(1, 9)", None), ("list(range(0, 64, 16))", None), ("range(4, 0, -2)", None),
    ("[1, 2, 4, 8, 16] + list(range(32, 1024+1, 32))", None), ("[2**i for i in range(0, 6)]", None),
    ("[i for i in range(1, 11)]", None), ("list(range(64, 1025, 64))", None),
    ("[a*b for a in range(1, 5) for b in [1, 2, 4] if a*b <= 8 if a != 3]", None),
    ("[16*i for i in range(1, 9) if i != 3]", None), ("(1, 2, 4)", None), ("1, 2, 4", None), ("[0] * 3", None),
    ("3 * [1, 2]", None), ("[max(1, 2**i // 4) for i in range(2, 7)]", None),
    ("[2**i for i in range(5, 11)][::-1]", None), ("[2**i for i in range(5, 11)][1:4]", None),
    ("[2**i for i in range(5, 11)][-2:]", None), ("list(range(10))[8:2:-2]", None), ("list(range(10))[-100:3]", None),
    ("[j for i in range(4) for j in range(i)]", None), ("[x for x in [y * 2 for y in range(5)] if x > 2]", None),
    ("[x * y for x in range(1, 4) for y in range(x, 4) if (x + y) % 2 == 0]", None),
    ("[sum(r) for r in [[i, i + 1] for i in range(3)]]", None), ("list(x * 2 for x in range(4))", None),
    ("tuple(range(3))", None), ("sorted([3, 1, 2]) + [len([1, 2, 3])]", None), ("[abs(-4), min([5, 3])]", None),
    ("[1024 // 4, 2 ** 8, -1]", None), ("[0.5, 1.0, 1e-3]", None), ("['float', \"half\"]", None),
    ("[True, False]", None), ("[]", None), ("()", None), ("[2**-1, 2**10]", None),
    ("[i if i % 2 else -i for i in range(5)]", None), ("[[i] for i in range(2)][1]", None),
    ("[] * 10**18 + [1]", None), ("[1, 2] * -3 + [4]", None),
    ("[1, 2, 3][::-1]", None), ("[1, 2, 3][-3::-1]", None), ("[1, 2, 3][0:2]", None), ("[1] * True", None),
    ("list(range(1048576)) + [1]", 22), ("[1, 2] * 2.0", 8),
    # errors: Python's exception, Tilescope's column
    ("[1/0]", 3), ("[i for i in range(1.5)]", 19), ("[x for x in 5]", 13), ("[foo for i in range(3)]", 2),
    ("[1, 2", 6), ("range(1, 5, 0)", 13), ("range(1, 2, 3, 4)", 1), ("[i for i in range(3)][5]", 22), ("[1, 2] + 3", 8),
    ("5", 1), ("[1, [2]]", 1), ("[i for i in range(3) if j]", 25),
]

# What a T1 value list may not be although Python evaluates it: a value list holds numbers,
# strings or bools, not lists; and "5" is not a list.
VALUE_LIST_DEPARTURES = {
    "5": ("TypeError", lambda r: r["repr"] == "5"),
    "[1, [2]]": ("TypeError", lambda r: r["repr"] == "[1, [2]]"),
    "list(range(1048576)) + [1]": ("ValueError", lambda r: r["repr"].count(",") == 1048576),  # at most 2^20 items
}


def python_eval(expr):
    try:
        value = eval(compile(expr, "<expr>", "eval"), dict(ENV))
    except SyntaxError as e:
        return {"error": "SyntaxError", "python_offset": e.offset}
    except Exception as e:  # noqa: BLE001 - we record the class
        return {"error": type(e).__name__}
    return {"repr": repr(value), "type": type(value).__name__}


def main():
    out = []
    for expr, column in CASES:
        case = {"expr": expr}
        case.update(python_eval(expr))
        if expr in DEPARTURES:
            kind, python_check = DEPARTURES[expr]
            if not python_check(case):
                raise SystemExit(f"{expr!r}: Python gave {case}, not what the departure note says")
            python = case.get("error") or ("<function>" if case["type"] == "function" else case["repr"])
            case = {"expr": expr, "error": kind, "python": python}
        if "error" in case:
            case.pop("python_offset", None)
            if case["error"] == "NameError" or case["error"] == "AttributeError":
                case["error"] = "NameError"
                m = re.search(r"BLOCK_Q|foo|math\.tan", expr)
                column = m.start() + 1
            if column is None:
                raise SystemExit(f"no column for the error case {expr!r}")
            case["column"] = column
        elif column is not None:
            raise SystemExit(f"{expr!r} was expected to fail but gave {case['repr']}")
        out.append(case)
    lists = []
    for text, column in VALUE_LISTS:
        case = {"values": text}
        try:
            value = eval(compile(text, "<values>", "eval"), {})
            if isinstance(value, (tuple, range)):
                value = list(value)
            case.update({"repr": repr(value)})
        except SyntaxError:
            case["error"] = "SyntaxError"
        except Exception as e:  # noqa: BLE001 - we record the class
            case["error"] = type(e).__name__
        if text in VALUE_LIST_DEPARTURES:
            kind, python_check = VALUE_LIST_DEPARTURES[text]
            if not python_check(case):
                raise SystemExit(f"{text!r}: Python gave {case}, not what the departure note says")
            case = {"values": text, "error": kind, "python": case["repr"]}
        if "error" in case:
            if column is None:
                raise SystemExit(f"no column for the error case {text!r}")
            case["column"] = column
        elif column is not None:
            raise SystemExit(f"{text!r} was expected to fail but gave {case['repr']}")
        lists.append(case)
    json.dump({"variables": VARS, "lists": LISTS, "cases": out, "value_lists": lists}, __import__("sys").stdout,
              indent=1)
    print()


if __name__ == "__main__":
    main()
