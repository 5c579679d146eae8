"""The config space as Kernel Tuner reads it: tune_params, restrictions and the block size
limit, enumerated in Python with Kernel Tuner's semantics, and written as T1 (Conditions where
Tilescope's expression language says the same, else the explicit list Tilescope.Configs).

Also turns a Python function of the parameters (a callable problem_size, grid divisor or shared
memory size) into an expression of the parameters that gives the same value on every config
of the space."""

import inspect
import itertools
import math
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

    def __init__(self, index, source, check, expression=None):
        self.index = index  # position in the user's list (None: the block size limit)
        self.source = source  # what to name in messages
        self.check = check  # dict -> bool
        self.expression = expression  # T1 Condition text, where it has one


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

    return Restriction(index, repr(text), check, text.strip()), used


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

    return Restriction(None, text, check, text)


def enumerate_space(tune_params, restrictions):
    """The valid configs (tuples in parameter order), in Kernel Tuner's order: the cartesian
    product, the first parameter varying slowest."""
    names = list(tune_params.keys())
    valid = []
    for values in itertools.product(*tune_params.values()):
        params = dict(zip(names, values))
        ok = True
        for r in restrictions:
            try:
                passed = r.check(params)
            except ZeroDivisionError:
                passed = False
            except Exception as e:
                where = r.source if r.index is None else r.source
                raise type(e)(f"{where} failed for {util.get_config_string(params)}: {e}") from e
            if not passed:
                ok = False
                break
        if ok:
            valid.append(tuple(values))
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
