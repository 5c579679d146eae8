"""The kernel file a Triton problem names: the script's file reduced to what the kernel needs.

Tilescope compiles a Triton problem by running its KernelFile as a module, so a script written
to be run (a tutorial computes and benchmarks at its top level) cannot be that file as it is.
What is kept: the @triton.jit function, the @triton.jit and other functions it names, the
top-level statements that bind a name they use (imports, constants), transitively; the other
decorators of a @triton.jit function (autotune, heuristics) are dropped, since the problem gives
the values they would. Everything else becomes blank lines, so every kept line has its number in
the script: what Tilescope says about a line of the kernel names the script's line."""

import ast

from ._common import Refusal


def _decorator_name(node):
    """"triton.jit" for @triton.jit and @triton.jit(...)."""
    if isinstance(node, ast.Call):
        node = node.func
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def _is_jit(decorator):
    last = _decorator_name(decorator).rsplit(".", 1)[-1]
    return last in ("jit", "constexpr_function", "must_use_result")


def _binds(stmt):
    """The names a top-level statement binds."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {stmt.name}
    out = set()
    stack = [stmt]
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.Import, ast.ImportFrom)):
            for a in n.names:
                out.add(a.asname or a.name.split(".")[0])
        elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            out.add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(n.name)
            continue
        stack.extend(ast.iter_child_nodes(n))
    return out


def _names(nodes, skip=()):
    out = set()
    stack = list(nodes)
    while stack:
        n = stack.pop()
        if n in skip:
            continue
        if isinstance(n, ast.Name):
            out.add(n.id)
        stack.extend(ast.iter_child_nodes(n))
    return out


def _uses(stmt, skip=()):
    """The global names a top-level statement uses: for a function, those of its decorators (but
    `skip`), defaults and annotations, and those of its body that are not its own locals (its
    parameters and the names it assigns)."""
    if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return _names([stmt], skip)
    a = stmt.args
    params = a.posonlyargs + a.args + a.kwonlyargs + [x for x in (a.vararg, a.kwarg) if x is not None]
    outside = [d for d in stmt.decorator_list if d not in skip] + a.defaults + [d for d in a.kw_defaults if d]
    outside += [p.annotation for p in params if p.annotation is not None]
    if stmt.returns is not None:
        outside.append(stmt.returns)
    local = {p.arg for p in params}
    declared_global = set()
    for n in ast.walk(stmt):
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            local.add(n.id)
        elif isinstance(n, ast.Global):
            declared_global.update(n.names)
    inside = _names(stmt.body) - (local - declared_global)
    return _names(outside) | inside


def reduce(text, kernel_name, file_name):
    """The kernel file for `kernel_name` from the script's `text`."""
    try:
        tree = ast.parse(text)
    except SyntaxError as e:
        raise Refusal(f"Tilescope cannot read {file_name}: {e}") from None
    body = tree.body
    if not any(isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == kernel_name for s in body):
        raise Refusal(
            f"Tilescope cannot tune {kernel_name}: {file_name} does not define it at its top level (a Triton "
            "problem names a function defined there)"
        )
    binders = {}
    for i, s in enumerate(body):
        for name in _binds(s):
            binders.setdefault(name, []).append(i)
    kept = {}  # statement index -> decorators to drop
    wanted = [kernel_name]
    seen = set()
    for i, s in enumerate(body):
        if isinstance(s, ast.ImportFrom) and s.module == "__future__":
            kept[i] = []
    while wanted:
        name = wanted.pop()
        if name in seen:
            continue
        seen.add(name)
        for i in binders.get(name, []):
            if i in kept:
                continue
            s = body[i]
            dropped = []
            if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(_is_jit(d) for d in s.decorator_list):
                dropped = [d for d in s.decorator_list if not _is_jit(d)]
            kept[i] = dropped
            wanted.extend(_uses(s, skip=set(dropped)) - seen)
    lines = text.splitlines(keepends=True)
    keep_line = [False] * len(lines)
    for i, dropped in kept.items():
        s = body[i]
        first = min([s.lineno] + [d.lineno for d in getattr(s, "decorator_list", [])])
        for n in range(first, s.end_lineno + 1):
            keep_line[n - 1] = True
        for d in dropped:
            for n in range(d.lineno, d.end_lineno + 1):
                keep_line[n - 1] = False
    out = "".join(line if keep else ("\n" if line.endswith("\n") else "") for line, keep in zip(lines, keep_line))
    compile(out, file_name, "exec")  # what was kept is whole statements
    return out
