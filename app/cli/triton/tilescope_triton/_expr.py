"""Python values as T1 expressions: literals, and a function of the tuning parameters, known only
by its values on a list of configs, as an expression of the parameters it depends on."""

import math

from ._common import Refusal

# A conditional chain longer than this is no expression a person could read or check.
MAX_BRANCHES = 4096


def plain(v):
    """A value as plain Python: tl.constexpr and NumPy scalars unwrapped."""
    if type(v).__name__ == "constexpr" and hasattr(v, "value"):
        v = v.value
    item = getattr(v, "item", None)
    if item is not None and type(v).__module__ == "numpy":
        v = item()
    return v


def literal(v):
    """A value as Python (and Tilescope's expression language) writes it."""
    v = plain(v)
    if isinstance(v, float) and not math.isfinite(v):
        raise Refusal(f"Tilescope cannot write the value {v!r} in an expression")
    return repr(v)


def function_expression(what, names, configs, values, prefer=()):
    """An expression of the parameters `names` that gives values[i] for configs[i] (tuples of the
    parameters' values): a constant, a parameter's name, or a chain of conditionals over the
    parameters the value depends on (those in `prefer`, the ones the function read, kept where
    others would do as well). Raises a Refusal naming `what` when the chain would be too long to
    write."""
    values = [plain(v) for v in values]
    for v in values:
        if isinstance(v, bool) or not isinstance(v, int):
            raise Refusal(f"Tilescope cannot take {what}: it gave {v!r} ({type(v).__name__}), not a whole number")
    if not configs or len(set(values)) == 1:
        return literal(values[0]) if values else "1"

    def depends_only_on(keep):
        seen = {}
        for c, v in zip(configs, values):
            if seen.setdefault(tuple(c[i] for i in keep), v) != v:
                return False
        return True

    keep = list(range(len(names)))
    order = [i for i in reversed(range(len(names))) if names[i] not in prefer]
    order += [i for i in reversed(range(len(names))) if names[i] in prefer]
    for i in order:
        trial = [j for j in keep if j != i]
        if depends_only_on(trial):
            keep = trial
    if len(keep) == 1 and all(c[keep[0]] == v and not isinstance(c[keep[0]], bool) for c, v in zip(configs, values)):
        return names[keep[0]]
    table = {}
    for c, v in zip(configs, values):
        table.setdefault(tuple(c[i] for i in keep), v)
    if len(table) > MAX_BRANCHES:
        raise Refusal(
            f"Tilescope cannot write {what} as an expression of the tuning parameters: it takes {len(table)} "
            f"different values over {', '.join(names[i] for i in keep)} (at most {MAX_BRANCHES} can be written out)"
        )

    def chain(entries, depth):
        if len({v for _, v in entries}) == 1:
            return literal(entries[0][1])
        name = names[keep[depth]]
        groups = {}
        for k, v in entries:
            groups.setdefault(k[depth], []).append((k, v))
        parts = [(a, chain(sub, depth + 1)) for a, sub in groups.items()]
        text = parts[-1][1]
        for a, e in reversed(parts[:-1]):
            text = f"{e} if {name} == {literal(a)} else {text}"
        return f"({text})"

    return chain(list(table.items()), 0)


# What a T1 expression may call, for checking an expression here as Tilescope will read it.
EVAL_NAMESPACE = {
    "__builtins__": {},
    "ceil": math.ceil,
    "floor": math.floor,
    "min": min,
    "max": max,
    "abs": abs,
    "int": int,
    "float": float,
    "True": True,
    "False": False,
}


def evaluate(text, values):
    """`text` evaluated as Python with the parameters' `values` (a dict)."""
    return eval(compile(text, "<expression>", "eval"), dict(EVAL_NAMESPACE), dict(values))
