"""A Triton launch grid as T1 GlobalSize expressions (programs along X, Y, Z).

A script gives the grid as a tuple or as a function of the kernel's arguments (`grid(META)`,
META holding the config's tl.constexpr values). Where that function is arithmetic, as
`lambda META: (triton.cdiv(M, META['BLOCK_SIZE_M']) * triton.cdiv(N, META['BLOCK_SIZE_N']),)`
is, it is traced with a symbol for each tuning parameter and gives the expression itself
("(512 + BLOCK_SIZE_M - 1) // BLOCK_SIZE_M * ((512 + BLOCK_SIZE_N - 1) // BLOCK_SIZE_N)");
where it decides on a value (`if`, `max`, `int()`), it is evaluated for every config and the
values are written as a conditional expression over the parameters they depend on. Either way
the expression is checked against the function's value for every config."""

from . import _expr
from ._common import Refusal

# Precedence as Python's grammar orders the operators (higher binds tighter).
_ATOM, _POWER, _UNARY, _TERM, _ARITH, _SHIFT, _AND, _XOR, _OR = 100, 16, 15, 14, 13, 12, 11, 10, 9


class TraceError(Exception):
    """The grid function did something with a tuning parameter that an expression cannot say."""


class Sym:
    """A value that depends on the tuning parameters: the expression that computes it."""

    __slots__ = ("text", "prec")

    def __init__(self, text, prec=_ATOM):
        self.text = text
        self.prec = prec

    def __repr__(self):
        return f"Sym({self.text!r})"

    # ---- building expressions ----

    @staticmethod
    def _wrap(v, prec, right=False):
        if isinstance(v, Sym):
            if v.prec < prec or (right and v.prec == prec):
                return f"({v.text})"
            return v.text
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise TraceError(f"an operation with {type(v).__name__}")
        text = _expr.literal(v)
        if v < 0 and (right or prec > _ARITH):
            return f"({text})"
        return text

    def _bin(self, other, op, prec, swap=False):
        if isinstance(other, bool) or not isinstance(other, (int, float, Sym)):
            return NotImplemented
        left, right = (other, self) if swap else (self, other)
        if op == "**":  # right-associative
            return Sym(f"{Sym._wrap(left, prec + 1)} ** {Sym._wrap(right, prec)}", prec)
        if op == "+" and isinstance(right, (int, float)) and right < 0:
            return Sym(f"{Sym._wrap(left, prec)} - {Sym._wrap(-right, prec, True)}", prec)
        return Sym(f"{Sym._wrap(left, prec)} {op} {Sym._wrap(right, prec, True)}", prec)

    def __add__(self, o):
        return self._bin(o, "+", _ARITH)

    def __radd__(self, o):
        return self._bin(o, "+", _ARITH, True)

    def __sub__(self, o):
        return self._bin(o, "-", _ARITH)

    def __rsub__(self, o):
        return self._bin(o, "-", _ARITH, True)

    def __mul__(self, o):
        return self._bin(o, "*", _TERM)

    def __rmul__(self, o):
        return self._bin(o, "*", _TERM, True)

    def __floordiv__(self, o):
        return self._bin(o, "//", _TERM)

    def __rfloordiv__(self, o):
        return self._bin(o, "//", _TERM, True)

    def __truediv__(self, o):
        return self._bin(o, "/", _TERM)

    def __rtruediv__(self, o):
        return self._bin(o, "/", _TERM, True)

    def __mod__(self, o):
        return self._bin(o, "%", _TERM)

    def __rmod__(self, o):
        return self._bin(o, "%", _TERM, True)

    def __pow__(self, o):
        return self._bin(o, "**", _POWER)

    def __rpow__(self, o):
        return self._bin(o, "**", _POWER, True)

    def __lshift__(self, o):
        return self._bin(o, "<<", _SHIFT)

    def __rlshift__(self, o):
        return self._bin(o, "<<", _SHIFT, True)

    def __rshift__(self, o):
        return self._bin(o, ">>", _SHIFT)

    def __rrshift__(self, o):
        return self._bin(o, ">>", _SHIFT, True)

    def __and__(self, o):
        return self._bin(o, "&", _AND)

    def __rand__(self, o):
        return self._bin(o, "&", _AND, True)

    def __xor__(self, o):
        return self._bin(o, "^", _XOR)

    def __rxor__(self, o):
        return self._bin(o, "^", _XOR, True)

    def __or__(self, o):
        return self._bin(o, "|", _OR)

    def __ror__(self, o):
        return self._bin(o, "|", _OR, True)

    def __neg__(self):
        return Sym(f"-{Sym._wrap(self, _UNARY)}", _UNARY)

    def __pos__(self):
        return self

    def __invert__(self):
        return Sym(f"~{Sym._wrap(self, _UNARY)}", _UNARY)

    def __abs__(self):
        return Sym(f"abs({self.text})")

    def __ceil__(self):
        return Sym(f"ceil({self.text})")

    def __floor__(self):
        return Sym(f"floor({self.text})")

    # ---- what decides on a value: not an expression ----

    def _decide(self, *_):
        raise TraceError(f"a decision on {self.text}")

    __bool__ = __index__ = __int__ = __float__ = __round__ = __trunc__ = _decide
    __lt__ = __le__ = __gt__ = __ge__ = __eq__ = __ne__ = _decide
    __hash__ = None


def _normalise(grid_value, what):
    """A grid as a list of 3 entries (Sym or int), as Triton reads a tuple of 1 to 3."""
    if isinstance(grid_value, (list, tuple)):
        entries = list(grid_value)
    else:
        entries = [grid_value]
    if not 1 <= len(entries) <= 3:
        raise Refusal(f"Tilescope cannot take the grid of {what}: it has {len(entries)} dimensions (1 to 3)")
    out = []
    for e in entries:
        e = _expr.plain(e)
        if isinstance(e, Sym):
            out.append(e)
        elif isinstance(e, int) and not isinstance(e, bool):
            out.append(e)
        else:
            raise TraceError(f"a grid entry of type {type(e).__name__}")
    return out + [1] * (3 - len(out))


def concrete_grid(grid, meta, what):
    """The grid's programs along X, Y, Z for one config (`meta` holds every kernel parameter)."""
    value = grid(dict(meta)) if callable(grid) else grid
    entries = list(value) if isinstance(value, (list, tuple)) else [value]
    if not 1 <= len(entries) <= 3:
        raise Refusal(f"Tilescope cannot take the grid of {what}: it has {len(entries)} dimensions (1 to 3)")
    out = []
    for e in entries:
        e = _expr.plain(e)
        if isinstance(e, bool) or not isinstance(e, int):
            raise Refusal(
                f"Tilescope cannot take the grid of {what}: it gave {e!r} ({type(e).__name__}), not a whole number "
                "of programs"
            )
        out.append(e)
    return out + [1] * (3 - len(out))


def trace(grid, meta, symbols):
    """The grid traced with a symbol for each name in `symbols` (meta's other entries as they
    are): three expressions (str), or None when the function decides on a parameter's value."""
    if not callable(grid):
        return None
    traced = dict(meta)
    for name in symbols:
        traced[name] = Sym(name)
    try:
        entries = _normalise(grid(traced), "the kernel")
    except TraceError:
        return None
    except (TypeError, ValueError, ArithmeticError, AttributeError):
        # A library function that does not take a symbol (math.gcd, a NumPy call): evaluated
        # per config instead, where a real error shows itself.
        return None
    return [e.text if isinstance(e, Sym) else str(e) for e in entries]


class _Reading(dict):
    """META that notes which entries the grid function reads."""

    def __init__(self, values, read):
        super().__init__(values)
        self.read = read

    def __getitem__(self, k):
        self.read.add(k)
        return super().__getitem__(k)

    def get(self, k, default=None):
        self.read.add(k)
        return super().get(k, default)


def grid_expressions(grid, metas, names, configs, what):
    """GlobalSize X, Y, Z for the configs: `metas[i]` is the kernel's parameters under configs[i]
    (tuples over `names`, the tuning parameters). Returns (expressions, grids), the grids as the
    script's function gives them, one [x, y, z] per config."""
    read = set()
    if callable(grid) and metas:
        concrete_grid(lambda meta: grid(_Reading(meta, read)), metas[0], what)
    grids = [concrete_grid(grid, m, what) for m in metas]
    symbols = [n for n in names if n in metas[0]] if metas else []
    traced = trace(grid, metas[0], symbols) if metas else None
    if traced is not None:
        try:
            for m, c, g in zip(metas, configs, grids):
                values = dict(m)
                values.update(zip(names, c))
                if [_expr.evaluate(t, values) for t in traced] != g:
                    traced = None
                    break
        except Exception:
            traced = None
    if traced is not None:
        return traced, grids
    axes = []
    for axis in range(3):
        axes.append(
            _expr.function_expression(f"the grid's {'XYZ'[axis]} of {what}", names, configs, [g[axis] for g in grids],
                                      prefer=read)
        )
    return axes, grids
