"""Tilescope standing in for @triton.autotune's benchmarking.

install() replaces triton.runtime.autotuner.Autotuner (which triton.autotune constructs) with a
subclass whose run() does what Triton's does, except that the first call for a new key writes
the call as a T1 problem and tunes it with `tilescope-cli tune` instead of timing each config
in this process; the winner goes into the autotuner's cache, so the script goes on with it."""

import importlib.abc
import importlib.util
import math
import os
import sys
import time

from . import _cli, _kernel, _problem, _space
from ._common import Refusal, TuneFailed, note

_settings = None
_ERRORS = ("compile_error", "launch_error", "crashed", "timeout", "wrong_result", "implausible")


def settings():
    global _settings
    if _settings is None:
        _settings = _cli.Settings()
    return _settings


def patch(module):
    """Replaces the Autotuner class of triton.runtime.autotuner (`module`) with the stand-in;
    returns the stand-in's class."""
    real = module.Autotuner
    if getattr(real, "_tilescope", False):
        return real

    class Autotuner(real):
        _tilescope = True

        def run(self, *args, **kwargs):
            return _run(self, super().run, args, kwargs)

    Autotuner.__module__ = real.__module__
    Autotuner.__qualname__ = real.__qualname__
    Autotuner.__doc__ = real.__doc__
    module.Autotuner = Autotuner
    runtime = sys.modules.get("triton.runtime")
    if runtime is not None and getattr(runtime, "Autotuner", None) is real:
        runtime.Autotuner = Autotuner
    return Autotuner


class _Hook(importlib.abc.MetaPathFinder):
    """Patches triton.runtime.autotuner as it is imported, so that the script imports Triton when
    and as it does (its environment set first, say) and triton.autotune builds the stand-in."""

    NAME = "triton.runtime.autotuner"

    def find_spec(self, name, path, target=None):
        if name != self.NAME:
            return None
        sys.meta_path.remove(self)
        try:
            spec = importlib.util.find_spec(name)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        loader = spec.loader
        run_module = loader.exec_module

        def exec_module(module):
            run_module(module)
            patch(module)

        loader.exec_module = exec_module
        return spec


def install():
    """Puts the stand-in in place of Triton's Autotuner: at once where Triton is imported, else
    when the script imports it."""
    module = sys.modules.get(_Hook.NAME)
    if module is not None:
        return patch(module)
    if not any(isinstance(f, _Hook) for f in sys.meta_path):
        sys.meta_path.insert(0, _Hook())
    return None


def triton_key(tuner, args, kwargs):
    """The autotuner's key of a call, as Triton's Autotuner.run makes it: the key arguments'
    values, then the dtype of every argument that has one."""
    all_args = {**dict(zip(tuner.arg_names, args)), **kwargs}
    given = {k: v for k, v in all_args.items() if k in tuner.arg_names}
    key = [given[k] for k in tuner.keys if k in given]
    for arg in given.values():
        if hasattr(arg, "dtype"):
            key.append(str(arg.dtype))
    return tuple(key)


def _run(tuner, real_run, args, kwargs):
    if kwargs.get("warmup"):
        return real_run(*args, **kwargs)
    s = settings()
    if len(tuner.configs) <= 1 and not s.expand:
        return real_run(*args, **kwargs)
    tuner.nargs = dict(zip(tuner.arg_names, args))
    key = triton_key(tuner, args, kwargs)
    if key not in tuner.cache:
        choose(tuner, key, args, kwargs, s)
    # Launched as Triton launches a config from its cache.
    config = tuner.cache[key]
    tuner.best_config = config
    if getattr(config, "pre_hook", None) is not None:
        config.pre_hook({**tuner.nargs, **kwargs, **config.all_kwargs()})
    try:
        return tuner.fn.run(*args, **kwargs, **config.all_kwargs())
    finally:
        tuner.nargs = None


def _refuse_hooks(tuner, kernel, configs):
    """What Tilescope's worker cannot do: Python around each launch, another benchmark."""
    where = f"@triton.autotune of {kernel.where}"
    worker = "each config is measured by Tilescope's worker, which runs no Python around a launch"
    if getattr(tuner, "user_defined_pre_hook", False):
        raise Refusal(
            f"Tilescope cannot run the pre_hook of {where}: {worker} (reset_to_zero= and restore_value= are honoured; "
            "remove pre_hook=, or run the script without tilescope-cli triton)"
        )
    if getattr(tuner, "user_defined_post_hook", False):
        raise Refusal(
            f"Tilescope cannot run the post_hook of {where}: {worker} (restore_value= is honoured; remove "
            "post_hook=, or run the script without tilescope-cli triton)"
        )
    if getattr(tuner, "use_cuda_graph", False):
        raise Refusal(
            f"Tilescope cannot time with use_cuda_graph=True ({where}): it times each launch itself, with CUDA events "
            "after an L2 flush (remove use_cuda_graph=)"
        )
    timed_by_triton = getattr(tuner, "num_warmups", None) is not None or getattr(tuner, "num_reps", None) is not None
    if getattr(tuner, "_do_bench", None) is not None and not timed_by_triton:
        raise Refusal(
            f"Tilescope cannot use the do_bench of {where}: it measures each config itself (warm-up, L2 flush, CUDA "
            "events, the median of adaptive samples), not with a benchmark function of the script (remove do_bench=, "
            "or run the script without tilescope-cli triton)"
        )
    if timed_by_triton and not getattr(tuner, "_tilescope_noted", False):
        tuner._tilescope_noted = True
        note(
            f"warmup= and rep= of {where} are Triton's benchmark settings; Tilescope samples each config its own way "
            "(tilescope-cli triton --tune-arg=--sample-time=S sets its time per config)"
        )
    for c in configs:
        if getattr(c, "pre_hook", None) is not None:
            raise Refusal(
                f"Tilescope cannot run the pre_hook of the config {c} ({where}): {worker} (remove the config's "
                "pre_hook=, or run the script without tilescope-cli triton)"
            )


def _device_backend(s):
    """`--backend cuda` measures on the GPU the script launches on: cuda:N when that is not the
    first (torch.cuda.set_device, CUDA_VISIBLE_DEVICES aside)."""
    if s.backend != "cuda":
        return
    try:
        from triton.runtime import driver

        device = int(driver.active.get_current_device())
    except Exception:
        return
    if device > 0:
        s.backend = f"cuda:{device}"
        note(f"the script launches on GPU {device}: its configs are measured there (--backend {s.backend})")


def _target():
    """The GPU Triton compiles for here (its arch), for the winners' identity."""
    try:
        from triton.runtime import driver

        t = driver.active.get_current_target()
        return f"{t.backend}:{t.arch}:{t.warp_size}"
    except Exception:
        return ""


def candidates(tuner, kernel, kwargs, expand):
    """The configs to tune: the decorator's (with --space expand, and their widened neighbours),
    pruned by prune_configs_by as Triton prunes them."""
    configs = list(tuner.configs)
    if expand:
        from triton.runtime.autotuner import Config

        configs = _space.expand(kernel, configs, Config)
    saved = tuner.configs
    try:
        tuner.configs = configs
        return list(tuner.prune_configs(kwargs))
    finally:
        tuner.configs = saved


def choose(tuner, key, args, kwargs, s):
    """Puts the winner for `key` in the autotuner's cache: one config without tuning, a winner
    stored by an earlier run, or the winner of a new tuning session."""
    kernel = _kernel.Kernel(tuner)
    pruned = candidates(tuner, kernel, kwargs, s.expand)
    if len(pruned) == 1:
        tuner.cache[key] = pruned[0]  # as Triton: nothing to choose between
        return
    _refuse_hooks(tuner, kernel, pruned)
    kernel.check_tunable()
    params, options = kernel.bind(args, kwargs)
    space = _space.Space(kernel, pruned, params, options)
    if len(space.rows) == 1:
        tuner.cache[key] = space.configs[0]
        return

    _device_backend(s)
    target = _target() if s.kind == "cuda" else ""
    identity = _cli.Winners.digest(
        [kernel.source_hash(), repr(key), space.names, [list(map(repr, r)) for r in space.rows], s.backend, target,
         s.strategy, s.budget, s.tune_args]
    )
    winners = _cli.Winners(s.root)
    if not s.retune:
        entry = winners.get(identity)
        row = space.index(entry["config"]) if entry else None
        if row is not None:
            tuner.cache[key] = space.configs[row]
            tuner.bench_time = 0.0
            _say(kernel, key, f"reused the winner of session {entry.get('session')} of {s.db} (nothing measured)",
                 space.configs[row])
            return

    s.require_cli()
    if s.expand and s.strategy == "exhaustive" and s.budget == 0 and len(space.rows) > 1000:
        note(f"the widened space of {kernel.name} has {len(space.rows):,} configs, and exhaustive measures every one "
             "(--strategy bayes --budget N searches it)")
    started = time.time()
    doc, files, grids = _problem.build(kernel, space, params, _problem.key_dims(tuner.keys, params),
                                       list(getattr(tuner, "reset_to_zero", []) or []),
                                       list(getattr(tuner, "restore_value", []) or []), kwargs.get("grid"))
    problem = _problem.write(s.root, kernel, doc, files)
    _check(s, problem, kernel, space, grids)
    session = s.tune(problem)
    results = s.results(session)
    row, timings = _winner(results, space, s.kind, kernel, session)
    elapsed = time.time() - started

    config = space.configs[row]
    tuner.cache[key] = config
    tuner.bench_time = elapsed
    tuner.configs_timings = {space.configs[i]: t for i, t in timings.items()}
    # As Triton after its benchmark: the reset_to_zero arguments are zeroed once more.
    full = {**tuner.nargs, **kwargs, **config.all_kwargs()}
    tuner.pre_hook(full, reset_only=True)
    winners.put(identity, {
        "kernel": kernel.name,
        "file": kernel.file,
        "key": repr(key),
        "config": dict(zip(space.names, space.rows[row])),
        "session": session,
        "problem": str(problem),
        "backend": s.backend,
        "time_ms": timings.get(row, [None])[0],
    })
    _say(kernel, key,
         f"finished after {elapsed:.2f}s ({len(space.rows)} configs, session {session} of {s.db}, "
         f"{os.path.relpath(problem)})", config)


def _check(s, problem, kernel, space, grids):
    """The problem as Tilescope reads it: it counts the configs written and launches the script's
    grid, else the call is refused with what differs."""
    info, err = s.space(problem)
    if info is None:
        raise Refusal(f"Tilescope cannot read the problem written for {kernel.where} ({problem}): {err}")
    blockers = [b for b in info.get("launch_blockers") or [] if isinstance(b, dict)]
    if blockers and s.kind != "replay":
        said = "; ".join(f"{b.get('location', '')}: {b.get('message', '')}" for b in blockers)
        raise Refusal(f"Tilescope cannot compile the problem written for {kernel.where} ({problem}): {said}")
    valid = info.get("valid_size")
    if isinstance(valid, (int, float)) and valid != len(space.rows):
        message = (f"`tilescope-cli space {problem}` counts {int(valid)} valid configs of the {len(space.rows)} "
                   f"written for {kernel.where}")
        if not s.expand or valid == 0:
            raise Refusal(f"Tilescope cannot tune the configs as Triton would: {message}")
        note(message)
    mismatch = _problem.launch_mismatch(info, space, grids)
    if mismatch:
        raise Refusal(f"Tilescope cannot reproduce the launch of {kernel.where} ({problem}): {mismatch}")


def _winner(results, space, kind, kernel, session):
    """The winning row (show --json lists the best first) and each row's times [median, min, max]
    in ms (inf for a config without a time)."""
    timings, statuses = {}, {}
    best = None
    analysed = None  # the first config analysed, not timed: the best by what compiling told
    for r in results:
        row = space.index(r.get("config") or {})
        if row is None or row in timings:
            continue
        t = r.get("time_ms")
        ok = r.get("status") == "ok" and isinstance(t, (int, float)) and math.isfinite(t) and t > 0
        statuses[row] = r.get("status", "?")
        if analysed is None and statuses[row] == "analysed":
            analysed = row
        if ok:
            timings[row] = [t, r.get("time_min_ms", t), r.get("time_max_ms", t)]
            if best is None:
                best = row
        else:
            timings[row] = [math.inf] * 3
    if best is not None:
        return best, timings
    if analysed is not None:
        note(f"the {kind} backend measured no time for {kernel.name}: the winner is the config that ranks first "
             "by occupancy, then spills and registers")
        return analysed, timings
    usable = [i for i in range(len(space.rows)) if i in statuses and statuses[i] not in _ERRORS]
    if kind != "cuda" and usable:
        note(f"the {kind} backend measured no time for {kernel.name}: the first config that compiled is the winner")
        return usable[0], timings
    counts = {}
    for st in statuses.values():
        counts[st] = counts.get(st, 0) + 1
    summary = ", ".join(f"{n} {st}" for st, n in sorted(counts.items())) or "no results"
    raise TuneFailed(
        f"no config of {kernel.where} ran correctly in session {session} ({summary}); `tilescope-cli show "
        f"{settings().db} --session {session}` lists them with their messages"
    )


def _say(kernel, key, what, config):
    """One line per tuned key, as Triton's TRITON_PRINT_AUTOTUNING prints it (on stderr)."""
    sys.stdout.flush()
    print(f"Tilescope autotuning for function {kernel.name}, with key as {key}, {what}, best config selected: "
          f"{config};", file=sys.stderr, flush=True)
