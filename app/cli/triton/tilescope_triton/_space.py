"""The configs of one autotuned call as T1 tuning parameters: the kernel's tl.constexpr
parameters (set by the config, the call, a @triton.heuristics or their default) and Triton's
options (num_warps, num_stages, num_ctas, maxnreg), each config a row of their values; with
`--space expand`, also the neighbouring values of every parameter the configs set."""

import itertools
import math

from . import _expr
from ._common import Refusal

# Triton's options that a triton.Config carries besides its kwargs, in the order T1 lists them.
OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg")
# The most configs a widened space may have: Tilescope searches larger spaces, but the grid and
# the heuristics are evaluated here for each.
MAX_EXPANDED = 200_000


def _value_type(name, values, where):
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
        f"Tilescope cannot take '{name}' of {where}: its values mix {', '.join(kinds)} ({', '.join(map(repr, values))}); "
        "a tuning parameter's values are all numbers, all booleans or all strings"
    )


def _check_value(name, v, where):
    v = _expr.plain(v)
    if isinstance(v, (bool, int, str)) or (isinstance(v, float) and math.isfinite(v)):
        return v
    what = "None" if v is None else f"a {type(v).__module__}.{type(v).__name__}"
    raise Refusal(
        f"Tilescope cannot take the tl.constexpr '{name}' of {where}: its value is {what}, and a T1 tuning "
        "parameter's values are numbers, booleans or strings"
    )


def config_values(kernel, config, params, options):
    """One config's values of every kernel parameter and of Triton's options, as the launch under
    the autotuner gets them: the call's arguments, the config's kwargs and options, the values of
    each @triton.heuristics, the signature's defaults."""
    kw = config.all_kwargs()
    given = set(options) | {k for k in params if k in kernel.constexprs}
    conflicts = sorted(given & set(kw))
    if conflicts:
        # Triton's own words for a call that sets what the autotuner tunes.
        raise ValueError(
            f"Conflicting meta-parameters: {', '.join(conflicts)}. Make sure that you don't re-define auto-tuned "
            "symbols."
        )
    merged = dict(params)
    merged.update(options)
    merged.update(kw)
    for layer in kernel.heuristics:
        for name, heuristic in layer.values.items():
            merged[name] = heuristic(dict(merged))
    values = {}
    for name in kernel.names:
        if name in merged:
            values[name] = merged[name]
        elif kernel.has_default(name):
            values[name] = kernel.default(name)
        else:
            raise TypeError(f"{kernel.name}() missing required argument: '{name}'")
    opts = {k: v for k, v in merged.items() if k not in kernel.names}
    return values, opts


def _neighbours(name, v):
    """A value and its neighbours: the powers of two either side (num_stages: one stage either
    side; num_ctas and maxnreg as they are)."""
    if isinstance(v, bool) or not isinstance(v, int) or v <= 0 or name in ("num_ctas", "maxnreg"):
        return [v]
    if name == "num_stages":
        return sorted({max(1, v - 1), v, v + 1})
    if v & (v - 1) == 0:
        out = {v, 2 * v} | ({v // 2} if v > 1 else set())
    else:
        low = 1 << (v.bit_length() - 1)
        out = {low, v, 2 * low}
    if name == "num_warps":
        out = {w for w in out if w <= 32}  # 32 warps: CUDA's 1024 threads a block
    return sorted(out)


def expand(kernel, configs, config_class):
    """The configs and every config of the product of the widened values: each value a config
    sets (a kwarg, num_warps, num_stages) with its neighbours, the other options as the configs
    give them. The configs come first, as given."""
    widened = []
    for c in configs:
        for k in c.kwargs:
            if k not in widened:
                widened.append(k)
    values = {}
    for name in widened:
        seen = set()
        for c in configs:
            if name in c.kwargs:
                for v in _neighbours(name, _expr.plain(c.kwargs[name])):
                    if v not in seen:
                        seen.add(v)
        values[name] = sorted(seen, key=lambda x: (str(type(x)), x))
    option_values = {}
    for name in OPTIONS:
        seen = []
        for c in configs:
            v = getattr(c, name, None)
            for n in _neighbours(name, v) if v is not None else [None]:
                if n not in seen:
                    seen.append(n)
        option_values[name] = sorted(seen, key=lambda x: (x is None, x or 0))
    names = list(values) + list(OPTIONS)
    lists = [values[n] for n in values] + [option_values[n] for n in OPTIONS]
    size = math.prod(len(x) for x in lists)
    if size > MAX_EXPANDED:
        raise Refusal(
            f"Tilescope cannot widen the configs of {kernel.where} with --space expand: the widened space has "
            f"{size:,} configs ({', '.join(f'{n} {len(x)}' for n, x in zip(names, lists))} values), more than "
            f"{MAX_EXPANDED:,}"
        )
    out = list(configs)
    known = {_identity(c) for c in configs}
    for row in itertools.product(*lists):
        kwargs = dict(zip(values, row[: len(values)]))
        opts = dict(zip(OPTIONS, row[len(values):]))
        c = config_class(kwargs, **opts)
        if _identity(c) not in known:
            known.add(_identity(c))
            out.append(c)
    return out


def _identity(config):
    return tuple(sorted((k, repr(v)) for k, v in config.all_kwargs().items()))


class Space:
    """The rows Tilescope tunes: `names` (tuning parameters: tl.constexpr parameters in the
    signature's order, then options), `types`, `values` (each parameter's values, sorted),
    `rows` (one tuple per config), `configs` (the triton.Config of each row) and `metas` (each
    row's kernel parameters, what Triton hands a grid function). `product`: the rows are every
    combination of the values (T1 value lists say it; else the rows go in Tilescope.Configs)."""

    def __init__(self, kernel, configs, params, options):
        where = kernel.where
        per_config = []
        rows_seen = {}
        for c in configs:
            if getattr(c, "ir_override", None) is not None:
                raise Refusal(
                    f"Tilescope cannot take the config {c} of {where}: its ir_override replaces the kernel's compiled "
                    "code, which Tilescope compiles from the source"
                )
            values, opts = config_values(kernel, c, params, options)
            per_config.append((c, values, opts))
        # Parameters: every tl.constexpr but those at their default in every config (the
        # problem leaves them to the signature, as a default of None must be).
        set_by_configs = {k for c in configs for k in c.kwargs}
        constexprs = []
        for name in kernel.constexprs:
            default = _expr.plain(kernel.default(name)) if kernel.has_default(name) else None
            at_default = kernel.has_default(name) and all(
                type(_expr.plain(v[name])) is type(default) and _expr.plain(v[name]) == default for _, v, _ in per_config
            )
            if at_default and name not in set_by_configs:
                continue
            constexprs.append(name)
        option_names = []
        for name in OPTIONS:
            present = [o.get(name) for _, _, o in per_config]
            if all(v is None for v in present):
                continue
            if name == "num_ctas" and all(v == 1 for v in present):
                continue
            if any(v is None for v in present):
                raise Refusal(
                    f"Tilescope cannot take the configs of {where}: some set {name} and some do not, and a tuning "
                    f"parameter has a value in every config (give each config a {name})"
                )
            option_names.append(name)
        for _, _, o in per_config:
            for k in o:
                if k not in option_names and k not in OPTIONS and k not in ("ir_override",):
                    option_names.append(k)
        self.names = constexprs + option_names
        self.rows, self.configs, self.metas = [], [], []
        for c, values, opts in per_config:
            row = []
            for name in self.names:
                v = values[name] if name in kernel.names else opts.get(name)
                row.append(_check_value(name, v, where))
            row = tuple(row)
            if row in rows_seen:
                continue  # Triton would measure the same config twice
            rows_seen[row] = len(self.rows)
            self.rows.append(row)
            self.configs.append(c)
            self.metas.append({n: _expr.plain(values[n]) for n in kernel.names})
        self.values = []
        self.types = []
        for i, name in enumerate(self.names):
            vals = list(dict.fromkeys(r[i] for r in self.rows))
            t = _value_type(name, vals, where)
            self.types.append(t)
            self.values.append(sorted(vals) if t != "string" else vals)
        self.product = len(self.rows) == math.prod(len(v) for v in self.values)

    def index(self, config_dict):
        """The row of a config given as name -> value (what `show --json` gives), or None."""
        try:
            wanted = tuple(config_dict[n] for n in self.names)
        except KeyError:
            return None
        for i, row in enumerate(self.rows):
            if all(_same(a, b) for a, b in zip(row, wanted)):
                return i
        return None

    def parameters(self):
        """T1 TuningParameters."""
        return [{"Name": n, "Type": t, "Values": list(v)} for n, t, v in zip(self.names, self.types, self.values)]


def _same(a, b):
    """A parameter's value here and as JSON gives it back (a bool may come back as 0 or 1)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, (bool, int)) and isinstance(b, (bool, int)) and bool(a) == bool(b)
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return float(a) == float(b)
    return a == b
