"""The kernel under an autotuner: its Python function and file, its parameters (which are
tl.constexpr, their defaults), the @triton.heuristics between the autotuner and the JIT, and which
pointer arguments it loads from and stores to (read from its source)."""

import ast
import hashlib
import inspect
import os
import textwrap

from ._common import Refusal


class Kernel:
    """The kernel an autotuner tunes."""

    def __init__(self, autotuner):
        layers = []
        fn = autotuner.fn
        jit = None
        while not inspect.isfunction(fn):
            if hasattr(fn, "values") and isinstance(getattr(fn, "values"), dict) and hasattr(fn, "fn"):
                layers.append(fn)  # triton.heuristics
            elif hasattr(fn, "fn"):
                jit = fn
            else:
                raise Refusal(f"Tilescope cannot find the Python function under the autotuner ({type(fn).__name__})")
            fn = fn.fn
        self.function = fn
        self.jit = jit
        self.heuristics = layers
        self.name = fn.__name__
        self.signature = inspect.signature(fn)
        self.parameters = list(self.signature.parameters.values())
        self.names = [p.name for p in self.parameters]
        self.constexprs = [p.name for p in self.parameters if _is_constexpr(p.annotation)]
        self.runtime = [n for n in self.names if n not in self.constexprs]
        self.file = inspect.getsourcefile(fn)
        self.line = 0
        try:
            lines, first = inspect.getsourcelines(fn)
            self.line = first + next((i for i, t in enumerate(lines) if t.lstrip().startswith("def ")), 0)
        except (OSError, TypeError):
            pass

    @property
    def where(self):
        return f"{self.name} ({os.path.basename(self.file or '?')} line {self.line})"

    def default(self, name):
        return self.signature.parameters[name].default

    def has_default(self, name):
        return self.signature.parameters[name].default is not inspect.Parameter.empty

    def check_tunable(self):
        """Refuses a kernel that a T1 problem cannot name: one defined inside a function or
        without a source file."""
        if "<locals>" in self.function.__qualname__:
            raise Refusal(
                f"Tilescope cannot tune {self.where}: it is defined inside a function ({self.function.__qualname__}), "
                "and a Triton problem names a kernel defined at the top level of its file; move the kernel to the "
                "module's top level"
            )
        if not self.file or not self.file.endswith(".py"):
            raise Refusal(
                f"Tilescope cannot tune {self.name}: its source is not in a .py file ({self.file or 'none'}); a "
                "Triton problem's KernelFile is the Python file that defines it"
            )

    def source_hash(self):
        """The kernel's identity for stored winners: Triton's cache key of the JIT function (its
        source and what it calls) where there is one, else its own source and line."""
        key = getattr(self.jit, "cache_key", None)
        if isinstance(key, str) and key:
            return key
        try:
            text = inspect.getsource(self.function)
        except (OSError, TypeError):
            text = self.name
        return hashlib.sha256(f"{text}\0{self.line}".encode()).hexdigest()

    def bind(self, args, kwargs):
        """The call's arguments as Triton's binder takes them: (parameters by name, options), the
        parameters given positionally and by name, the rest of kwargs options."""
        if len(args) > len(self.names):
            raise TypeError(f"{self.name}() takes {len(self.names)} arguments but {len(args)} were given")
        params = dict(zip(self.names, args))
        options = {}
        for k, v in kwargs.items():
            if k in ("grid", "warmup"):
                continue
            if k in self.names:
                if k in params:
                    raise TypeError(f"{self.name}() got multiple values for argument '{k}'")
                params[k] = v
            else:
                options[k] = v
        return params, options

    def access(self, pointers):
        """How the kernel uses each of its `pointers` (parameter names), read from its source: a dict of
        name -> "ReadOnly" (loaded from, never stored to), "WriteOnly" (stored to, never loaded
        from) or "ReadWrite" (both, or passed to a function whose use is not known). Parameters
        that reach neither are ReadOnly. None when the source cannot be read."""
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(self.function)))
        except (OSError, TypeError, SyntaxError, IndentationError):
            return None
        funcs = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        if not funcs:
            return None
        return _access(funcs[0], list(pointers))


def _is_constexpr(annotation):
    """Triton's rule (KernelParam.is_constexpr): "constexpr" is in the annotation."""
    if annotation is inspect.Parameter.empty:
        return False
    if isinstance(annotation, str):
        return "constexpr" in annotation
    return "constexpr" in getattr(annotation, "__name__", repr(annotation))


_LOADS = {"load", "atomic_cas", "atomic_xchg", "atomic_add", "atomic_max", "atomic_min", "atomic_and", "atomic_or",
          "atomic_xor", "gather"}
_STORES = {"store", "atomic_cas", "atomic_xchg", "atomic_add", "atomic_max", "atomic_min", "atomic_and", "atomic_or",
           "atomic_xor", "scatter"}
# tl functions that run code Tilescope cannot read: their pointer arguments may be anything.
_OPAQUE = {"inline_asm_elementwise", "extern_elementwise"}


def _access(func, params):
    """The taint of each pointer parameter through assignments, then the loads and stores it
    reaches (see Kernel.access)."""
    taint = {p: {p} for p in params}

    def of(node):
        """The parameters a value may point into; what a load returns is data, not a pointer."""
        out = set()
        stack = [node] if node is not None else []
        while stack:
            n = stack.pop()
            if isinstance(n, ast.Name) and n.id in taint:
                out |= taint[n.id]
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _LOADS:
                continue
            stack.extend(ast.iter_child_nodes(n))
        return out

    def targets(t):
        if isinstance(t, ast.Name):
            return [t.id]
        if isinstance(t, (ast.Tuple, ast.List)):
            return [x for e in t.elts for x in targets(e)]
        if isinstance(t, ast.Starred):
            return targets(t.value)
        return []

    assigns = []
    for n in ast.walk(func):
        if isinstance(n, ast.Assign):
            assigns += [(name, n.value) for t in n.targets for name in targets(t)]
        elif isinstance(n, (ast.AugAssign, ast.AnnAssign)) and n.value is not None:
            assigns += [(name, n.value) for name in targets(n.target)]
        elif isinstance(n, ast.For):
            assigns += [(name, n.iter) for name in targets(n.target)]
        elif isinstance(n, ast.NamedExpr):
            assigns += [(name, n.value) for name in targets(n.target)]
        elif isinstance(n, (ast.With, ast.AsyncWith)):
            for item in n.items:
                if item.optional_vars is not None:
                    assigns += [(name, item.context_expr) for name in targets(item.optional_vars)]
    changed = True
    while changed:
        changed = False
        for name, value in assigns:
            t = of(value)
            if t - taint.get(name, set()):
                taint[name] = taint.get(name, set()) | t
                changed = True

    loaded, stored = set(), set()
    for n in ast.walk(func):
        if not isinstance(n, ast.Call):
            continue
        f = n.func
        pointer = n.args[0] if n.args else next((k.value for k in n.keywords if k.arg in ("pointer", "ptr")), None)
        if isinstance(f, ast.Attribute):
            receiver = of(f.value)
            if receiver:  # a method of a pointer or descriptor: desc.load(...), desc.store(...)
                if f.attr in _LOADS:
                    loaded |= receiver
                if f.attr in _STORES:
                    stored |= receiver
                continue
            if f.attr in _LOADS or f.attr in _STORES:
                if f.attr in _LOADS:
                    loaded |= of(pointer) if pointer is not None else set()
                if f.attr in _STORES:
                    stored |= of(pointer) if pointer is not None else set()
                continue
            if f.attr in _OPAQUE:
                for a in list(n.args) + [k.value for k in n.keywords]:
                    t = of(a)
                    loaded |= t
                    stored |= t
            continue
        if isinstance(f, ast.Name) and f.id in ("range", "min", "max", "len", "print", "int", "float", "bool"):
            continue
        # A call of another function (a @triton.jit helper): what it does with a pointer is
        # not read here, so the pointer may be loaded and stored.
        for a in list(n.args) + [k.value for k in n.keywords]:
            t = of(a)
            loaded |= t
            stored |= t

    out = {}
    for p in params:
        if p in stored and p in loaded:
            out[p] = "ReadWrite"
        elif p in stored:
            out[p] = "WriteOnly"
        else:
            out[p] = "ReadOnly"
    return out
