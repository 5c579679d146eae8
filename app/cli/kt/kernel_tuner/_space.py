"""The config space as Kernel Tuner reads it: tune_params, restrictions and the block size
limit, enumerated in Python with Kernel Tuner's semantics, and written as T1 (Conditions where
Tilescope's expression language says the same, else the explicit list Tilescope.Configs).

Also turns a Python function of the parameters (a callable problem_size, grid divisor or shared
memory size) into an expression of the parameters that gives the same value on every config
of the space."""

import ast
import functools
import inspect
import itertools
import math
import random
import re

import numpy as np

from . import util

# CUDA's limit of threads per block, on every GPU since compute capability 2.0: Kernel Tuner
# reads it from the device and drops the configs whose block exceeds it.
MAX_THREADS = 1024

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")


class Refusal(ValueError):
    """What Tilescope cannot honour; the message starts with "Tilescope cannot" and names the
    argument."""


Refusal.__name__ = Refusal.__qualname__ = "TilescopeRefusal"
Refusal.__module__ = "kernel_tuner"


def python_value(v):
    """A parameter value as plain Python (numpy scalars become int, float, bool, str)."""
    if isinstance(v, np.generic):
        return v.item()
    return v


def parameter_type(name, values):
    """The T1 Type of a parameter's values: int, float, bool or string."""
    if len(values) == 0:
        raise ValueError(f"tune_params['{name}'] has no values")
    if all(isinstance(v, bool) for v in values):
        return "bool"
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return "int"
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return "float"
    if all(isinstance(v, str) for v in values):
        return "string"
    kinds = sorted({type(v).__name__ for v in values})
    raise Refusal(
        f"Tilescope cannot take tune_params['{name}']: its values mix {', '.join(kinds)}; a parameter's "
        "values are all integers, all numbers, all booleans or all strings"
    )


def literal(v):
    """A value as Python (and Tilescope's expression language) writes it."""
    v = python_value(v)
    if isinstance(v, float):
        if math.isinf(v) or math.isnan(v):
            raise Refusal(f"Tilescope cannot write the value {v!r} in an expression")
        return repr(v)
    return repr(v)


def values_text(values):
    """A parameter's Values as a Python list literal (what Kernel Tuner's T1 loader evaluates)."""
    return "[" + ", ".join(literal(v) for v in values) + "]"


def normalise_tune_params(tune_params):
    """tune_params with plain Python values, checked as Kernel Tuner checks them."""
    if not isinstance(tune_params, dict):
        raise TypeError("tune_params should be a dict (an OrderedDict or dict) of parameter name to value list")
    out = {}
    for name, values in tune_params.items():
        if not isinstance(name, str) or not _IDENTIFIER.fullmatch(name):
            raise ValueError(f"tune_params key {name!r} is not a valid identifier")
        if name in ("grid_size_x", "grid_size_y", "grid_size_z", "time"):
            raise ValueError("Tune parameter " + name + " with value " + str(values) + " has a forbidden name!")
        if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
            raise TypeError(f"tune_params['{name}'] should be a list of values, got {type(values).__name__}")
        values = [python_value(v) for v in values]
        parameter_type(name, values)
        out[name] = values
    return out


# ---- restrictions ----


def _params_in(expression, names):
    return [n for n in dict.fromkeys(_IDENTIFIER.findall(expression)) if n in names]


class Restriction:
    """One of the user's restrictions, as a predicate over a config dict."""

    def __init__(self, index, source, check, expression=None, vector=None):
        self.index = index  # position in the user's list (None: the block size limit)
        self.source = source  # what to name in messages
        self.check = check  # dict -> bool
        self.expression = expression  # T1 Condition text, where it has one
        # dict of NumPy arrays (one value per config) -> bool array, where the restriction has
        # one (a string); it raises where it cannot say (enumerate_space then checks one by one).
        self.vector = vector


# ---- a restriction over many configs at once ----


class _Elementwise(ast.NodeTransformer):
    """Python's boolean operators, chained comparisons, `in` and conditional expressions as
    NumPy's element-wise functions, so that an expression of the parameters evaluates over
    arrays of them. What has no element-wise meaning is left as written and raises on arrays."""

    @staticmethod
    def _call(name, args):
        return ast.Call(func=ast.Name(id=name, ctx=ast.Load()), args=args, keywords=[])

    def visit_BoolOp(self, node):
        self.generic_visit(node)
        return self._call("_ts_and" if isinstance(node.op, ast.And) else "_ts_or", node.values)

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        return self._call("_ts_not", [node.operand]) if isinstance(node.op, ast.Not) else node

    def visit_IfExp(self, node):
        self.generic_visit(node)
        return self._call("_ts_where", [node.test, node.body, node.orelse])

    def visit_Compare(self, node):
        self.generic_visit(node)
        parts, left = [], node.left
        for op, right in zip(node.ops, node.comparators):
            if isinstance(op, (ast.In, ast.NotIn)):
                part = self._call("_ts_in", [left, right])
                if isinstance(op, ast.NotIn):
                    part = self._call("_ts_not", [part])
            else:
                part = ast.Compare(left=left, ops=[op], comparators=[right])
            parts.append(part)
            left = right
        return parts[0] if len(parts) == 1 else self._call("_ts_and", parts)


def _vector_namespace():
    return {
        "_ts_and": lambda *a: functools.reduce(np.logical_and, a),
        "_ts_or": lambda *a: functools.reduce(np.logical_or, a),
        "_ts_not": np.logical_not,
        "_ts_where": np.where,
        "_ts_in": lambda x, values: np.isin(x, list(values)),
        "ceil": np.ceil,
        "floor": np.floor,
        "min": lambda *a: functools.reduce(np.minimum, a) if len(a) > 1 else min(*a),
        "max": lambda *a: functools.reduce(np.maximum, a) if len(a) > 1 else max(*a),
        "abs": np.abs,
        "np": np,
        "numpy": np,
    }


def _vector_check(text, index):
    """The restriction `text` over arrays of the parameters, or None where it cannot be made."""
    try:
        tree = ast.fix_missing_locations(_Elementwise().visit(ast.parse(text.strip(), mode="eval")))
        code = compile(tree, f"<restrictions[{index}]>", "eval")
    except (SyntaxError, ValueError, TypeError):
        return None
    namespace = _vector_namespace()

    def vector(arrays):
        with np.errstate(all="raise"):  # a division by zero: checked one by one, as Kernel Tuner does
            out = eval(code, namespace, arrays)
        return np.broadcast_to(np.asarray(out, dtype=bool), next(iter(arrays.values())).shape)

    return vector


def _string_restriction(index, text, names):
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"restrictions[{index}] is an empty string")
    used = _params_in(text, names)
    try:
        code = compile(text.strip(), f"<restrictions[{index}]>", "eval")
    except SyntaxError as e:
        raise ValueError(f"restrictions[{index}] is not a Python expression: {text!r} ({e.msg})") from None
    namespace = util._eval_namespace()

    def check(params):
        return eval(code, namespace, params)

    return Restriction(index, repr(text), check, text.strip(), _vector_check(text, index)), used


def _callable_arity(f):
    try:
        return len(inspect.signature(f).parameters)
    except (TypeError, ValueError):
        return None


def build_restrictions(restrictions, tune_params):
    """The user's restrictions as Restriction objects, with Kernel Tuner 1.5's calling conventions:
    a string is a Python expression of the parameters; a lone function of one argument (with more
    than one parameter) takes the config as a dict; a lambda in a list takes the dict; another
    function in a list takes the values of all parameters, in order; (function, [names]) takes the
    values of those names."""
    names = list(tune_params.keys())
    if restrictions is None:
        return []
    if not isinstance(restrictions, (list, tuple)):
        restrictions = [restrictions]
    restrictions = list(restrictions)
    out = []
    monolithic = (
        len(restrictions) == 1
        and callable(restrictions[0])
        and not isinstance(restrictions[0], str)
        and _callable_arity(restrictions[0]) == 1
        and len(names) > 1
    )
    for i, r in enumerate(restrictions):
        where = f"restrictions[{i}]" if len(restrictions) > 1 or isinstance(restrictions, list) else "restrictions"
        if isinstance(r, str):
            out.append(_string_restriction(i, r, names)[0])
        elif isinstance(r, tuple) and len(r) in (2, 3) and isinstance(r[1], (list, tuple)):
            f, selected = r[0], list(r[1])
            for n in selected:
                if n not in names:
                    raise ValueError(f"{where} names '{n}', which is not a tunable parameter")
            if isinstance(f, str):
                out.append(_string_restriction(i, f, names)[0])
            elif callable(f):
                out.append(Restriction(i, f"{where} ({_describe(f)})", lambda p, f=f, s=selected: f(*[p[n] for n in s])))
            else:
                raise ValueError(f"Unknown restriction type {type(r)} ({r})")
        elif callable(r):
            if monolithic or (getattr(r, "__name__", "") == "<lambda>" and _callable_arity(r) == 1):
                if len(names) == 1 and not monolithic and getattr(r, "__name__", "") != "<lambda>":
                    check = lambda p, f=r: f(*p.values())  # noqa: E731
                else:
                    check = lambda p, f=r: f(p)  # noqa: E731
            else:
                check = lambda p, f=r: f(*p.values())  # noqa: E731
            out.append(Restriction(i, f"{where} ({_describe(r)})", check))
        else:
            raise Refusal(
                f"Tilescope cannot take {where}: a {type(r).__name__} (restrictions are strings, functions, "
                "or (function, [parameter names]) tuples)"
            )
    return out


def _describe(f):
    name = getattr(f, "__name__", type(f).__name__)
    return "a lambda" if name == "<lambda>" else f"function {name}"


def block_size_restriction(tune_params, max_threads):
    """Kernel Tuner's limit on the block: the product of block_size_x/y/z (those tuned) at most
    the device's threads per block. None when no block size is tuned."""
    used = [n for n in util.default_block_size_names if n in tune_params]
    if not used or max_threads is None:
        return None
    text = f"{' * '.join(used)} <= {max_threads}"

    def check(params):
        product = 1
        for n in used:
            product *= params[n]
        return product <= max_threads

    def vector(arrays):
        product = np.ones(next(iter(arrays.values())).shape, dtype=np.int64)
        for n in used:
            product = product * arrays[n]
        return product <= max_threads

    return Restriction(None, text, check, text, vector)


# Spaces of at least this many raw configs are enumerated over NumPy arrays, this many at a time.
_VECTOR_FROM = 4096
_VECTOR_CHUNK = 1 << 20
_VECTOR_MOST = 1 << 28  # a byte per raw config is kept


class _Fallback(Exception):
    """The arrays cannot decide: enumerate one config at a time."""


def _numeric_values(values):
    """The values as a NumPy array of numbers (bools as ints), or None when any is not a number."""
    if not values or not all(isinstance(v, (bool, int, float, np.integer, np.floating)) for v in values):
        return None
    if all(isinstance(v, (bool, int, np.integer)) for v in values):
        if any(abs(int(v)) >= 2**62 for v in values):
            return None
        return np.array([int(v) for v in values], dtype=np.int64)
    return np.array([float(v) for v in values], dtype=np.float64)


def _scalar_check(r, params):
    """Whether one config passes restriction `r`, with enumerate_space's rules for errors."""
    try:
        return bool(r.check(params))
    except ZeroDivisionError:
        return False
    except Exception as e:
        raise type(e)(f"{r.source} failed for {util.get_config_string(params)}: {e}") from e


def _enumerate_vectorized(names, values, restrictions):
    """enumerate_space over arrays: each string restriction evaluated element-wise on a chunk of
    the cartesian product, the functions called on the configs that remain, in order."""
    arrays = [_numeric_values(v) for v in values]
    if any(a is None for a in arrays):
        raise _Fallback()
    shape = tuple(len(v) for v in values)
    total = math.prod(shape)
    if total > _VECTOR_MOST:
        raise _Fallback()
    objects = [np.array(v + [None], dtype=object)[:-1] for v in values]  # the values themselves, by index
    valid = []
    passed = np.zeros(total, dtype=bool)  # by raw config, for the check on a sample
    for start in range(0, total, _VECTOR_CHUNK):
        flat = np.arange(start, min(total, start + _VECTOR_CHUNK), dtype=np.int64)
        index = np.unravel_index(flat, shape)
        columns = {n: a[i] for n, a, i in zip(names, arrays, index)}
        keep = np.ones(flat.shape, dtype=bool)
        pending = []  # restrictions checked one config at a time, in order, after the arrays
        for r in restrictions:
            if r.vector is None or pending:
                pending.append(r)
                continue
            # Each restriction sees the configs the ones before it kept, as one at a time would.
            kept = np.flatnonzero(keep)
            if kept.size == 0:
                break
            try:
                keep[kept] = r.vector({n: c[kept] for n, c in columns.items()})
            except Exception:
                raise _Fallback() from None
        if pending:
            for k in np.flatnonzero(keep):
                config = tuple(values[p][index[p][k]] for p in range(len(names)))
                keep[k] = all(_scalar_check(r, dict(zip(names, config))) for r in pending)
        kept = np.flatnonzero(keep)
        passed[flat[kept]] = True
        valid.extend(zip(*[o[i[kept]].tolist() for o, i in zip(objects, index)]))
    return valid, passed


def _agrees_on_a_sample(names, values, restrictions, passed, draws=256):
    """Whether the one-config-at-a-time check agrees with `passed` (by raw config, in the
    product's order) on a sample of raw configs."""
    shape = tuple(len(v) for v in values)
    rng = random.Random(int(passed.size))
    for _ in range(draws):
        flat = rng.randrange(passed.size)
        config = tuple(v[i] for v, i in zip(values, np.unravel_index(flat, shape)))
        params = dict(zip(names, config))
        if all(_scalar_check(r, params) for r in restrictions) != bool(passed[flat]):
            return False
    return True


def enumerate_space(tune_params, restrictions):
    """The valid configs (tuples in parameter order), in Kernel Tuner's order: the cartesian
    product, the first parameter varying slowest. Large spaces of numbers are enumerated over
    NumPy arrays (checked against the one-at-a-time rule on a sample), others one by one."""
    names = list(tune_params.keys())
    values = [list(v) for v in tune_params.values()]
    if names and math.prod(len(v) for v in values) >= _VECTOR_FROM and any(r.vector for r in restrictions):
        try:
            valid, passed = _enumerate_vectorized(names, values, restrictions)
            if _agrees_on_a_sample(names, values, restrictions, passed):
                return valid
        except _Fallback:
            pass
    valid = []
    for config in itertools.product(*values):
        params = dict(zip(names, config))
        if all(_scalar_check(r, params) for r in restrictions):
            valid.append(tuple(config))
    return valid


def conditions(restrictions, tune_params):
    """T1 Conditions for the restrictions, or None when one has no expression (a function)."""
    names = list(tune_params.keys())
    out = []
    for r in restrictions:
        if r.expression is None:
            return None
        out.append({"Parameters": _params_in(r.expression, names), "Expression": r.expression})
    return out


# ---- a function of the parameters as an expression ----

_MAX_BRANCHES = 120


def _product_expression(names, keep, configs, values):
    """"K * p * q" when every value is a constant K times the product of the kept parameters (a
    shared memory size of bx * by * 4, say); None otherwise."""
    if not keep or not all(isinstance(configs[0][i], int) and not isinstance(configs[0][i], bool) for i in keep):
        return None

    def prod(c):
        n = 1
        for i in keep:
            n *= c[i]
        return n

    if prod(configs[0]) == 0:
        return None
    k = values[0] / prod(configs[0])
    if k != int(k) or any(v != int(k) * prod(c) for c, v in zip(configs, values)):
        return None
    factors = [names[i] for i in keep]
    return " * ".join(factors if int(k) == 1 else factors + [str(int(k))])


def function_expression(what, names, configs, values):
    """An expression of the parameters that gives values[i] for configs[i], for every config: a
    constant, or a chain of conditionals over the parameters the value depends on. Raises a
    Refusal naming `what` when the chain would be too long for an expression."""
    values = [python_value(v) for v in values]
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or (isinstance(v, float) and not math.isfinite(v)):
            raise TypeError(f"{what} gave {v!r} ({type(v).__name__}); a number was expected")
    if not configs:
        return "1"
    if len(set(values)) == 1:
        return literal(values[0])

    def depends_only_on(keep):
        seen = {}
        for c, v in zip(configs, values):
            k = tuple(c[i] for i in keep)
            if seen.setdefault(k, v) != v:
                return False
        return True

    keep = list(range(len(names)))
    for i in range(len(names)):
        trial = [j for j in keep if j != i]
        if depends_only_on(trial):
            keep = trial
    if len(keep) == 1 and all(c[keep[0]] == v and not isinstance(c[keep[0]], bool) for c, v in zip(configs, values)):
        return names[keep[0]]
    product = _product_expression(names, keep, configs, values)
    if product is not None:
        return product
    table = {}
    for c, v in zip(configs, values):
        table.setdefault(tuple(c[i] for i in keep), v)
    if len(table) > _MAX_BRANCHES:
        raise Refusal(
            f"Tilescope cannot express {what} as an expression of the parameters: it takes "
            f"{len(table)} different values over {', '.join(names[i] for i in keep)} (at most "
            f"{_MAX_BRANCHES} can be written out); give it as a string expression instead"
        )

    def chain(entries, depth):
        if len({v for _, v in entries}) == 1:
            return literal(entries[0][1])
        name = names[keep[depth]]
        groups = {}
        for key, v in entries:
            groups.setdefault(key[depth], []).append((key, v))
        parts = [(a, chain(sub, depth + 1)) for a, sub in groups.items()]
        expression = parts[-1][1]
        for a, e in reversed(parts[:-1]):
            expression = f"{e} if {name} == {literal(a)} else ({expression})"
        return f"({expression})"

    return chain(list(table.items()), 0)
