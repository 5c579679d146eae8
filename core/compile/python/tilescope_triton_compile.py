"""Tilescope's Triton compile helper: one persistent process per compile thread.

Tilescope (core/compile/triton) starts it with the Python that has Triton and speaks JSON lines
with it: one request a line on stdin, one reply a line on stdout. The first line it writes says
which Triton it has (or why it has none). A request names a kernel (the module's text, its file
name and folder, the @triton.jit function), the call's arguments (buffers by element type,
scalars by value), its keyword arguments (tl.constexpr values and compile options) and the
architecture; the helper specialises the call as Triton's JIT would for those values, compiles
it with triton.compile for that architecture (no GPU is needed) and writes the cubin where the
request says. The reply carries the kernel's name, its launch metadata, ptxas' -v report and
Triton's version, or Triton's error. Anything a request causes is a reply, never an exit.
"""

import contextlib
import hashlib
import io
import json
import linecache
import os
import shutil
import sys
import tempfile
import time
import traceback
import types
import warnings

# Before Triton is imported: print ptxas' report (registers, spills), and compile every time into
# a cache of this process's own (Tilescope keeps its own cache of results; a hit in Triton's
# would skip ptxas and its report).
_work = tempfile.mkdtemp(prefix="tilescope-triton-")
os.environ["TRITON_DUMP_PTXAS_LOG"] = "1"
os.environ["TRITON_ALWAYS_COMPILE"] = "1"
os.environ["TRITON_CACHE_DIR"] = os.path.join(_work, "cache")
os.chdir(_work)  # kernel files are named by their name alone: none here to shadow them

# The replies go to the stdout Tilescope reads; everything else written to file descriptor 1
# (by C++ code, by ptxas) goes to stderr instead, so that no stray text breaks a reply.
_replies = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
os.dup2(2, 1)
sys.stdout = sys.stderr

_MAX_MESSAGE = 1 << 10
_MAX_LOG = 64 << 10


def _reply(obj):
    _replies.write(json.dumps(obj) + "\n")
    _replies.flush()


def _bounded(text, limit):
    if len(text) <= limit:
        return text
    return text[:limit] + "... (%d more characters not kept)" % (len(text) - limit)


try:
    import triton
    from triton.backends.compiler import GPUTarget
    try:
        from triton.compiler import ASTSource, make_backend
    except ImportError:
        from triton.compiler.compiler import ASTSource, make_backend
except Exception as error:  # no Triton, or one that does not import: say so and stop
    _reply({"hello": 1, "error": "%s: %s" % (type(error).__name__, error), "python": sys.version.split()[0],
            "executable": sys.executable})
    sys.exit(0)


def _cache_invalidating_environment():
    """The environment variables Triton keys its own cache on: they change what it compiles."""
    try:
        from triton._C.libtriton import get_cache_invalidating_env_vars
        return dict(sorted(get_cache_invalidating_env_vars().items()))
    except Exception:
        return {k: v for k, v in sorted(os.environ.items()) if k.startswith("TRITON_") and k not in (
            "TRITON_DUMP_PTXAS_LOG", "TRITON_ALWAYS_COMPILE", "TRITON_CACHE_DIR")}


_modules = {}  # (folder, file, sha256 of the text) -> module, the last few


def _module(request):
    source = request["source"]
    name = request["file"]
    folder = request.get("dir") or ""
    key = (folder, name, hashlib.sha256(source.encode("utf-8")).hexdigest())
    if key in _modules:
        return _modules[key]
    if folder and folder not in sys.path:
        sys.path.insert(0, folder)
    # The module's code is named by its file name alone, as NVRTC names a CUDA source: the line
    # information in the cubin reads "add.py", wherever the file lives. Its text is the request's
    # (which the compile's key covers), not what is on disk now; Triton reads a kernel's source
    # through linecache, so the text is registered there under that name.
    linecache.cache[name] = (len(source), None, source.splitlines(True), name)
    module = types.ModuleType("tilescope_kernel_" + key[2][:16])
    module.__file__ = os.path.join(folder, name) if folder else name
    sys.modules[module.__name__] = module
    exec(compile(source, name, "exec"), module.__dict__)
    if len(_modules) >= 8:
        _modules.pop(next(iter(_modules)))
    _modules[key] = module
    return module


class _Buffer:
    """A buffer argument as Triton's JIT sees a tensor: its element type and a 16-byte-aligned
    address (the worker's buffers are aligned so)."""

    def __init__(self, dtype):
        self.dtype = dtype
        self.shape = [1]

    @staticmethod
    def data_ptr():
        return 0

    @staticmethod
    def ptr_range():
        return 0

    def stride(self):
        return (1, )


def _kernel_function(module, name):
    fn = getattr(module, name, None)
    if fn is None:
        raise LookupError("the module defines no '%s'" % name)
    # Under @triton.autotune or @triton.heuristics: the JIT function they wrap.
    seen = 0
    while not hasattr(fn, "params") and hasattr(fn, "fn") and seen < 8:
        fn = fn.fn
        seen += 1
    if not hasattr(fn, "params") or not hasattr(fn, "signature"):
        raise TypeError("'%s' is not a @triton.jit function" % name)
    return fn


def _specialise(fn, backend, kwargs):
    """The call's (bound arguments, specialisation) as Triton's JIT makes them: its own binder
    where the installed Triton has one, so that a config compiles to what @triton.autotune
    compiles; else the same rules written out (pointers aligned to 16 bytes, integers divisible
    by 16, integers equal to 1 compiled in)."""
    try:
        from triton.runtime.jit import create_function_from_signature
        binder = create_function_from_signature(fn.signature, fn.params, backend)
        bound, specialization, _ = binder(**kwargs)
        return dict(bound), list(specialization)
    except (ImportError, AttributeError, TypeError, ValueError):
        pass
    bound = {}
    specialization = []
    for p in fn.params:
        if p.name in kwargs:
            value = kwargs[p.name]
        elif p.default is not p._param.empty:
            value = p.default
        else:
            raise TypeError("missing a value for the parameter '%s'" % p.name)
        bound[p.name] = value
        if p.is_constexpr:
            specialization.append(("constexpr", value))
        elif isinstance(value, _Buffer):
            specialization.append(("*" + value.dtype, "D"))
        elif isinstance(value, bool):
            specialization.append(("u1", None))
        elif isinstance(value, int):
            if value == 1 and not p.do_not_specialize:
                specialization.append(("constexpr", 1))
            else:
                kind = "i32" if -2**31 <= value < 2**31 else "u64" if value >= 2**63 else "i64"
                specialization.append((kind, "D" if value % 16 == 0 and not p.do_not_specialize else None))
        else:
            specialization.append(("fp32", None))
    return bound, specialization


def _compile(request):
    module = _module(request)
    fn = _kernel_function(module, request["function"])
    arch = request["arch"]
    digits = "".join(c for c in arch[3:] if c.isdigit())
    target = GPUTarget("cuda", int(digits), 32)
    backend = make_backend(target)

    runtime = [p for p in fn.params if not p.is_constexpr]
    arguments = request["arguments"]
    if len(arguments) != len(runtime):
        raise TypeError("%s takes %d arguments that are not tl.constexpr, and the problem gives %d" %
                        (fn.__name__, len(runtime), len(arguments)))
    kwargs = dict(request["keywords"])
    for p, a in zip(runtime, arguments):
        kwargs[p.name] = _Buffer(a["pointer"]) if isinstance(a, dict) else a
    try:
        from triton import knobs
        kwargs.setdefault("debug", bool(getattr(fn, "debug", None)) or knobs.runtime.debug)
    except Exception:
        pass

    bound, specialization = _specialise(fn, backend, kwargs)
    options = backend.parse_options(kwargs)
    names = [p.name for p in fn.params]
    for k in kwargs:
        if k not in options.__dict__ and k not in names:
            raise KeyError("Keyword argument %s was specified but unrecognised" % k)
    values = [s[0] for s in specialization]
    signature = dict(zip(names, values))
    constexprs = {(i, ): bound[n] for i, n in enumerate(names) if values[i] == "constexpr"}
    attrs = {(i, ): backend.parse_attr(s[1])
             for i, s in enumerate(specialization) if values[i] != "constexpr" and isinstance(s[1], str)}
    kernel = triton.compile(ASTSource(fn, signature, constexprs, attrs), target=target, options=options.__dict__)
    return kernel, [signature[p.name] for p in runtime]


def _where(error, source, file):
    """ "add.py:14:29" for a Triton CompilationError, whose line counts from its function's def."""
    src = getattr(error, "src", None)
    node = getattr(error, "node", None)
    if not src or not hasattr(node, "lineno"):
        return ""
    at = source.find(src.split("\n", 1)[0])
    if at < 0:
        return ""
    return "%s:%d:%d" % (file, source.count("\n", 0, at) + node.lineno, getattr(node, "col_offset", 0) + 1)


def _first_line(error, where):
    """One line for the user: where (for an error in the kernel's code) and what went wrong."""
    kind = type(error).__name__
    detail = getattr(error, "error_message", None) if where else None
    text = str(detail if detail else error).strip()
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    message = lines[-1] if lines else kind
    if message == "^" and len(lines) > 1:
        # No message of its own (a static_assert without one): the code at the caret says what failed.
        message = "%s: %s" % (kind, lines[-2])
    if not where and kind not in message:
        message = "%s: %s" % (kind, message)
    return _bounded(where + ": " + message if where else message, _MAX_MESSAGE)


def _handle(request):
    started = time.monotonic()
    reply = {"id": request.get("id"), "triton": triton.__version__}
    out = io.StringIO()
    with tempfile.TemporaryFile() as captured:
        # What C++ code and tools write to file descriptors 1 and 2 during the compile (MLIR's
        # diagnostics, warnings): kept with the reply rather than lost or shown.
        saved = os.dup(1), os.dup(2)
        sys.stderr.flush()
        os.dup2(captured.fileno(), 1)
        os.dup2(captured.fileno(), 2)
        try:
            with contextlib.redirect_stdout(out), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    kernel, signature = _compile(request)
                except Exception as error:
                    where = _where(error, request.get("source", ""), request.get("file", ""))
                    reply["ok"] = False
                    reply["message"] = _first_line(error, where)
                    reply["error"] = _bounded((where + ":\n" if where else "") +
                                              "".join(traceback.format_exception_only(type(error), error)), _MAX_LOG)
                    kernel = None
        finally:
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
        captured.seek(0)
        stray = captured.read().decode("utf-8", "replace")
    log = out.getvalue()
    reply["stderr"] = _bounded(stray, _MAX_LOG)
    reply["seconds"] = time.monotonic() - started
    if kernel is not None:
        metadata = kernel.metadata._asdict() if hasattr(kernel.metadata, "_asdict") else dict(kernel.metadata)
        with open(request["cubin"], "wb") as f:
            f.write(kernel.asm["cubin"])
        reply["ok"] = True
        reply["name"] = metadata.get("name", request["function"])
        reply["log"] = _bounded(log, _MAX_LOG)
        reply["signature"] = signature
        reply["metadata"] = {k: metadata[k] for k in (
            "name", "num_warps", "num_ctas", "num_stages", "warp_size", "shared", "global_scratch_size",
            "global_scratch_align", "profile_scratch_size", "profile_scratch_align", "maxnreg", "tmem_size")
                             if k in metadata and isinstance(metadata[k], (int, str, type(None)))}
        if "ptx" in kernel.asm and "Compiling entry function" not in log:
            reply["log"] = _bounded(log + _ptxas_report(kernel, arch=request["arch"]), _MAX_LOG)
    # Triton's own cache of this process: each compile is one-off, and Tilescope keeps the result.
    shutil.rmtree(os.environ["TRITON_CACHE_DIR"], ignore_errors=True)
    return reply


def _ptxas_report(kernel, arch):
    """ptxas' -v report, by running Triton's ptxas on the PTX again, for a Triton that did not
    print it."""
    try:
        import subprocess
        from triton.backends.nvidia.compiler import get_ptxas
        capability = int("".join(c for c in arch[3:] if c.isdigit()))
        try:
            ptxas = get_ptxas(capability).path
        except TypeError:
            ptxas = get_ptxas().path
        path = os.path.join(_work, "report.ptx")
        with open(path, "w") as f:
            f.write(kernel.asm["ptx"])
        gpu = "sm_%d%s" % (capability, "a" if capability >= 90 else "")
        run = subprocess.run([ptxas, "-v", "--gpu-name=" + gpu, path, "-o", path + ".o"], capture_output=True,
                             text=True)
        return run.stderr
    except Exception as error:
        return "(no ptxas report: %s)" % error


def _nvdisasm():
    """The nvdisasm the Triton wheel ships (triton/backends/nvidia/bin), "" without one."""
    path = os.path.join(os.path.dirname(os.path.abspath(triton.__file__)), "backends", "nvidia", "bin", "nvdisasm")
    return path if os.path.isfile(path) and os.access(path, os.X_OK) else ""


def main():
    _reply({"hello": 1, "triton": triton.__version__, "python": sys.version.split()[0], "executable": sys.executable,
            "environment": _cache_invalidating_environment(), "nvdisasm": _nvdisasm()})
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
        except ValueError as error:
            _reply({"ok": False, "message": "the helper could not read a request: %s" % error})
            continue
        try:
            _reply(_handle(request))
        except Exception as error:  # the helper's own failure, not the kernel's
            _reply({"id": request.get("id"), "ok": False, "internal": True,
                    "message": "the Triton helper failed: %s: %s" % (type(error).__name__, error),
                    "error": traceback.format_exc()})


if __name__ == "__main__":
    try:
        main()
    finally:
        shutil.rmtree(_work, ignore_errors=True)
