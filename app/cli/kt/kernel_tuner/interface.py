"""tune_kernel and run_kernel with Kernel Tuner 1.5's signatures, defaults and results, carried
out by Tilescope: the call becomes a T1 problem beside the results database, `tilescope-cli tune`
measures it, and the results come back as Kernel Tuner returns them.

What Tilescope cannot honour is refused with an exception whose message starts with "Tilescope
cannot" and names the argument; a difference that remains is printed, never silent."""

import logging
import math
import os
import shutil
import sys
import tempfile
import warnings
from datetime import datetime
from pathlib import Path
from time import perf_counter

import numpy as np

from . import _problem, _space, util
from ._session import Cli, TuneFailed, kt_timestamp, sessions
from ._space import Refusal

# Kernel Tuner 1.5's strategies, and what Tilescope runs for each.
_KT_STRATEGIES = [
    "brute_force",
    "random_sample",
    "minimize",
    "basinhopping",
    "diff_evo",
    "genetic_algorithm",
    "greedy_mls",
    "ordered_greedy_mls",
    "greedy_ils",
    "dual_annealing",
    "mls",
    "pso",
    "simulated_annealing",
    "skopt",
    "firefly_algorithm",
    "bayes_opt",
    "pyatf_strategies",
    "hybrid_vndx",
    "adaptive_tabu_greywolf",
    "nsga2",
    "nsga3",
]
_STRATEGY_MAP = {
    "brute_force": "exhaustive",
    "random_sample": "random",
    "genetic_algorithm": "genetic",
    "simulated_annealing": "annealing",
    "bayes_opt": "bayes",
}
_GENERIC_OPTIONS = ["max_fevals", "time_limit", "x0", "searchspace_construction_options"]
# The options Kernel Tuner's strategies accept (it refuses others), for the strategies mapped above.
_STRATEGY_OPTIONS = {
    "brute_force": ([], _GENERIC_OPTIONS),
    "random_sample": (["fraction"], ["x0"]),
    "genetic_algorithm": (["popsize", "maxiter", "method", "mutation_chance", "constraint_aware"], []),
    "simulated_annealing": (["T", "T_min", "alpha", "maxiter", "constraint_aware"], []),
}

_ERRORS = {
    "compile_error": util.CompilationFailedConfig,
    "launch_error": util.RuntimeFailedConfig,
    "crashed": util.RuntimeFailedConfig,
    "timeout": util.RuntimeFailedConfig,
    "implausible": util.RuntimeFailedConfig,
    "pruned": util.InvalidConfig,
    # Compiled and analysed, never run (the analysis backend): InvalidConfig is the marker Kernel
    # Tuner gives a config it did not run, and what its T4 writer calls "constraints".
    "analysed": util.InvalidConfig,
}

_UNITS = {"time": "ms"}


def _note(message):
    print(f"Tilescope: {message}", file=sys.stderr)


def _refuse_unsupported(texmem_args, defines, observers, parallel):
    if texmem_args:
        raise Refusal(
            "Tilescope cannot take texmem_args: it binds no texture memory (its worker passes buffers, scalars "
            "and __constant__ variables); read the array through a pointer instead"
        )
    if defines is not None:
        raise Refusal(
            "Tilescope cannot take defines: it defines what Kernel Tuner defines by default (grid_size_x/y/z, "
            "block_size_x/y/z, every tuning parameter and kernel_tuner), and no other set; leave defines out "
            "or put the definitions in the kernel"
        )
    honoured = []
    for i, obs in enumerate(observers or []):
        name = type(obs).__name__
        if getattr(obs, "_tilescope_registers", False):
            honoured.append(obs)
            continue
        measured = getattr(obs, "TILESCOPE_METRICS", None)
        if measured is not None:
            others = [o for o in obs.observables if o not in measured]
            if others:
                raise Refusal(
                    f"Tilescope cannot honour observers[{i}] ({name}) for {', '.join(map(str, others))}: of NVML's "
                    "observables it measures nvml_energy and nvml_power (its energy measurement: joules per launch "
                    "and mean power from NVML's energy counter) and core_freq, mem_freq and temperature (read right "
                    "after each config's samples), not voltages or single power readings"
                )
            honoured.append(obs)
            continue
        raise Refusal(
            f"Tilescope cannot honour observers[{i}] ({name}): it measures kernel time (the median, with L2 "
            "flushed) and records registers (RegisterObserver); power, energy, clocks and profiler metrics "
            "are not observed this way (CUPTI metrics: tilescope-cli tune --metrics)"
        )
    if parallel:
        _note("parallel: Tilescope compiles in parallel and measures on the GPUs of its --backend anyway")
    return honoured


def _nvml_observables(observers):
    """{observable: Tilescope's metric} of the NVMLObservers honoured."""
    out = {}
    for obs in observers or []:
        measured = getattr(obs, "TILESCOPE_METRICS", None)
        if measured is not None:
            out.update({o: measured[o] for o in obs.observables})
    return out


def _block_size_names(block_size_names, tune_params):
    util_names = util.default_block_size_names
    if block_size_names is not None:
        if not isinstance(block_size_names, list):
            raise ValueError("block_size_names should be a list of strings!", block_size_names, type(block_size_names))
        if len(block_size_names) > 3:
            raise ValueError("block_size_names should not contain more than 3 names!", block_size_names)
        if not all(isinstance(n, str) for n in block_size_names):
            raise ValueError("block_size_names should contain only strings!", block_size_names)
        for n in block_size_names:
            if n not in tune_params:
                warnings.warn("Block size name " + n + " is not specified in the tunable parameters list!", UserWarning)
        names = list(block_size_names)
    else:
        if not any(k.lower() in util_names for k in tune_params):
            warnings.warn("None of the tunable parameters specify thread block dimensions!", UserWarning)
            names = []
        else:
            names = sorted((k for k in tune_params if k.lower() in util_names and k not in util_names), key=str.casefold)
    for i, n in enumerate(util_names):
        if len(names) < i + 1:
            names.append(n)
    return names


def _objectives(objective, objective_higher_is_better, objectives):
    if objectives:
        if not isinstance(objectives, dict):
            raise ValueError("objectives should be a dict of (objective, higher_is_better) pairs")
        return list(objectives.keys()), list(objectives.values())
    objective, hib = util.get_objective_defaults(objective, objective_higher_is_better)
    objective = [objective] if isinstance(objective, str) else list(objective)
    hib = [hib] if isinstance(hib, bool) else list(hib)
    if len(objective) != len(hib):
        raise ValueError("objective and objective_higher_is_better should be of the same length")
    return objective, hib


def _strategy(strategy, strategy_options):
    """Tilescope's strategy for Kernel Tuner's, the options checked as Kernel Tuner checks them."""
    name = strategy or "brute_force"
    # One of Kernel Tuner's strategy modules (kernel_tuner.strategies.minimize): Kernel Tuner calls
    # its tune as a user-defined strategy's, which is the strategy of that name.
    name = getattr(name, "_tilescope_strategy", name)
    if not isinstance(name, str):
        if hasattr(name, "tune") and callable(name.tune):
            raise Refusal(
                f"Tilescope cannot run strategy {type(name).__name__} (a user-defined strategy object): its "
                "strategies run inside tilescope-cli; choose one of Kernel Tuner's strategy names"
            )
        raise ValueError(f"Unkown strategy {name}, must be one of: {', '.join(_KT_STRATEGIES)}")
    if name not in _KT_STRATEGIES:
        raise ValueError(f"Unkown strategy {name}, must be one of: {', '.join(_KT_STRATEGIES)}")
    options = dict(strategy_options or {})
    if name in _STRATEGY_OPTIONS:
        own, unsupported = _STRATEGY_OPTIONS[name]
        accepted = own + [o for o in _GENERIC_OPTIONS if o not in unsupported]
        for key in options:
            if key not in accepted:
                raise ValueError(f"Unrecognized option {key} in strategy_options (allowed: {accepted})")
    return name, _STRATEGY_MAP.get(name, "auto"), options


def _budget_args(kt_name, options, space_size, to_run, notes):
    """--budget / --max-time for the strategy's options, as Kernel Tuner sizes its searches."""
    max_fevals = options.get("max_fevals")
    time_limit = options.get("time_limit")
    args = []
    budget = None
    if kt_name == "random_sample" and max_fevals is None:
        fraction = options.get("fraction", 0.1)
        if not 0 <= fraction <= 1:
            raise AssertionError("strategy_options['fraction'] must be in [0, 1]")
        budget = int(math.ceil(space_size * fraction))
    elif max_fevals is not None:
        budget = int(max_fevals)
    elif kt_name == "bayes_opt":
        budget = 100
    elif _STRATEGY_MAP.get(kt_name) is None and time_limit is None:
        budget = 100
        notes.append(
            f"strategy '{kt_name}' has no counterpart in Tilescope: its 'auto' strategy searches instead, "
            f"with a budget of {min(budget, to_run)} configs (max_fevals sets another)"
        )
    elif _STRATEGY_MAP.get(kt_name) is None:
        notes.append(f"strategy '{kt_name}' has no counterpart in Tilescope: its 'auto' strategy searches instead")
    if budget is not None and budget < to_run:
        args += ["--budget", str(max(budget, 1))]
        if time_limit is not None:
            notes.append(
                f"strategy_options: both max_fevals and time_limit; Tilescope takes one budget, so the search "
                f"stops after {budget} configs and time_limit={time_limit} s is not applied"
            )
    elif time_limit is not None:
        args += ["--max-time", repr(float(time_limit))]
    ignored = [k for k in options if k not in ("max_fevals", "time_limit", "fraction")]
    if ignored:
        notes.append(
            f"strategy_options {', '.join(ignored)}: Tilescope's own "
            f"{_STRATEGY_MAP.get(kt_name, 'auto')} strategy does not take them; not applied"
        )
    return args


def _merge_args(mine, user):
    """Our tune arguments, less the options the user gave with --tune-arg (theirs win), then theirs."""
    given = {a.split("=")[0] for a in user if a.startswith("--")}
    out, i = [], 0
    while i < len(mine):
        a = mine[i]
        takes_value = i + 1 < len(mine) and not str(mine[i + 1]).startswith("--")
        if isinstance(a, str) and a.startswith("--") and a.split("=")[0] in given:
            i += 2 if takes_value else 1
            continue
        out.append(a)
        i += 1
    return out + list(user)


def _drop_option(args, name):
    """args without the option `name` (as "--name VALUE" or "--name=VALUE")."""
    out, i = [], 0
    while i < len(args):
        if args[i] == name:
            i += 2
            continue
        if args[i].startswith(name + "="):
            i += 1
            continue
        out.append(args[i])
        i += 1
    return out


def _key(config):
    return ",".join(str(v) for v in config)


def _product_rank(tune_params, config, fallback):
    """Where `config` comes in the cartesian product of tune_params (the first parameter varying
    slowest): the order of the valid configs, without a table of millions of them."""
    rank = 0
    for values, v in zip(tune_params.values(), config):
        try:
            rank = rank * len(values) + list(values).index(v)
        except ValueError:
            return fallback
    return rank


def _match_config(tune_params, config_json):
    """A result's config (name -> JSON value) as a tuple of the script's own values."""
    out = []
    for name, values in tune_params.items():
        v = config_json.get(name)
        found = None
        for candidate in values:
            if candidate == v and isinstance(candidate, bool) == isinstance(v, bool):
                found = candidate
                break
        if found is None:
            for candidate in values:
                if isinstance(candidate, bool) and v in (0, 1) and bool(v) == candidate:
                    found = candidate
                    break
                if not isinstance(candidate, (bool, str)) and isinstance(v, (int, float)) and candidate == v:
                    found = candidate
                    break
        if found is None:
            return None
        out.append(found)
    return tuple(out)


def _reference_threshold(atol):
    # Kernel Tuner's check is numpy.allclose: |out - ref| <= atol + 1e-5 * |ref| per value.
    # Tilescope's SideBySideComparison takes one threshold, max |out - ref| <= threshold; with
    # atol + 1e-5 * max |ref| it accepts every output Kernel Tuner accepts.
    def threshold(arg):
        ref = np.asarray(arg.answer)
        if ref.size == 0:
            return float(atol)
        # two passes over the values, no copy (a 10-million-value answer: milliseconds); only an
        # answer with an inf or a NaN in it takes the finite values apart
        if np.iscomplexobj(ref):
            scale = float(np.max(np.abs(ref)))
        else:
            scale = max(abs(float(ref.max())), abs(float(ref.min())))
        if not math.isfinite(scale):
            finite = ref[np.isfinite(ref)]
            scale = float(np.max(np.abs(finite))) if finite.size else 0.0
        return float(atol) + 1e-5 * scale

    return threshold


def _check_answer(answer, args, verify):
    if answer is None:
        return
    if not isinstance(answer, (list, tuple)):
        raise TypeError("answer should be a list with an entry (or None) per argument")
    kernel_args = [a for a in args if a.kernel_argument]
    if len(answer) != len(kernel_args):
        raise TypeError("The length of argument list and provided results do not match.")
    for i, (a, expected) in enumerate(zip(kernel_args, answer)):
        if expected is None:
            continue
        if _problem.device_kind(expected):  # a CuPy or PyTorch array (vector_add_cupy.py's a+b): its values
            expected = _problem.host_arguments([expected])[0][0]
        if isinstance(expected, np.ndarray) and isinstance(a.value, np.ndarray):
            if verify is None:
                if not np.can_cast(a.value.dtype, expected.dtype):
                    raise TypeError(
                        f"Element {i} of the expected results list has a dtype that is not compatible with the "
                        f"dtype of the kernel output: {expected.dtype} != {a.value.dtype}."
                    )
                if expected.size != a.value.size:
                    raise ValueError(
                        f"Element {i} of the expected results list has a size different from the kernel "
                        f"argument: {expected.size} != {a.value.size}."
                    )
            a.answer = expected
        elif verify is not None:
            a.answer = expected
        else:
            raise Refusal(
                f"Tilescope cannot check answer[{i}] ({type(expected).__name__}): it compares output arrays "
                "(numpy) with the kernel's array arguments"
            )


class _Call:
    """One tune_kernel or run_kernel call made into a Tilescope problem."""

    def __init__(self, cli, kernel_name, source, problem_size, arguments, tune_params, grid_div, block_size_names,
                 smem_args, cmem_args, compiler_options, answer, atol, verify, restrictions, max_threads):
        self.cli = cli
        self.kernel_name = kernel_name
        self.source = source
        self.problem_size = problem_size
        self.tune_params = tune_params
        self.names = list(tune_params.keys())
        self.grid_div = grid_div
        self.block_size_names = block_size_names
        self.compiler_options = compiler_options

        self.restrictions = _space.build_restrictions(restrictions, tune_params)
        limit = _space.block_size_restriction(tune_params, max_threads)
        self.all_restrictions = self.restrictions + ([limit] if limit else [])
        self.valid = _space.enumerate_space(tune_params, self.all_restrictions)
        self.atol = atol
        self.verify_in_python = verify is not None
        source.realize(self.names, self.valid)
        source.drop_untuned_unroll_factors(tune_params)

        self.declarations = _problem.kernel_parameters(source.code, kernel_name)
        _problem.check_argument_types(kernel_name, self.declarations, arguments)
        self.args = _problem.make_arguments(arguments, self.declarations, tune_params, cmem_args)
        _check_answer(answer, self.args, verify)

    # ---- the T1 problem ----

    def launch_fields(self, configs, explicit):
        """ProblemSize and GridDiv, or (where the problem size or a divisor depends on the parameters
        through a function or Python Tilescope's expressions do not have) the grid itself."""
        ks = {}
        names = self.names
        ps = self.problem_size
        entries = [ps] if isinstance(ps, (str, int, np.integer)) else ps
        if not callable(ps) and all(isinstance(s, (int, np.integer)) for s in entries):
            # The same problem size for every config: read once, not once a config (millions).
            sizes = [tuple(util.get_problem_size(ps, {}))] if configs else []
        else:
            sizes = [tuple(util.get_problem_size(ps, dict(zip(names, c)))) for c in configs]
        divs = [_problem.grid_divisors(d, i, self.block_size_names, self.tune_params) for i, d in enumerate(self.grid_div)]
        for i, d in enumerate(divs):
            if d is None:
                # A function divides this axis: its value per config, as an expression.
                values = [_problem.kt_divisor(self.grid_div[i], self.block_size_names[i], dict(zip(names, c)))
                          for c in configs]
                divs[i] = [_space.function_expression(f"grid_div_{'xyz'[i]}", names, configs, values)]
        if len(set(sizes)) <= 1 and not explicit:
            ps = list(sizes[0]) if sizes else [1, 1, 1]
            dims = 3 if ps[2] != 1 else (2 if ps[1] != 1 else 1)
            if isinstance(self.problem_size, (list, tuple)):
                dims = max(dims, len(self.problem_size))
            ks["ProblemSize"] = [int(x) for x in ps[:dims]]
            ks["GridDivX"], ks["GridDivY"], ks["GridDivZ"] = divs
        else:
            grids = [_problem.kt_launch(dict(zip(names, c)), self.problem_size, self.grid_div, self.block_size_names)[1]
                     for c in configs]
            ks["GlobalSizeType"] = "CUDA"
            ks["GlobalSize"] = {}
            for i, axis in enumerate("XYZ"):
                wanted = [g[i] for g in grids]
                symbolic = None if explicit else self.symbolic_grid(i, divs[i], configs, wanted)
                ks["GlobalSize"][axis] = symbolic or _space.function_expression(
                    f"the grid's {axis} (from problem_size and grid_div_{axis.lower()})", names, configs, wanted)
        if self.block_size_names != util.default_block_size_names:
            defaults = (256, 1, 1)
            ks["LocalSize"] = {
                axis: (n if n in self.tune_params else str(defaults[i]))
                for i, (axis, n) in enumerate(zip("XYZ", self.block_size_names))
            }
        return ks

    def symbolic_grid(self, axis, divisors, configs, wanted):
        """Kernel Tuner's grid along an axis as an expression, ceil(problem size / divisors), where
        the problem size is a number or a string; None where it is a function or the expression,
        evaluated here, does not give Kernel Tuner's grid for every config."""
        ps = self.problem_size
        if callable(ps) or divisors is None:
            return None
        entries = list(ps) if isinstance(ps, (list, tuple)) else [ps]
        size = entries[axis] if axis < len(entries) else 1
        if isinstance(size, str):
            text = size.strip()
            size_text = text if _space._IDENTIFIER.fullmatch(text) else f"floor({text})"
        elif isinstance(size, (int, np.integer)) and not isinstance(size, bool):
            size_text = str(int(size))
        else:
            return None
        divisor = " * ".join(divisors)
        expression = size_text if divisor == "1" else f"ceil({size_text} / ({divisor}))"
        try:
            code = compile(expression, "<grid>", "eval")
            for c, w in zip(configs, wanted):
                if eval(code, util._eval_namespace(), dict(zip(self.names, c))) != w:
                    return None
        except Exception:
            return None
        return expression

    def t1(self, configs, smem, explicit_configs, explicit_grid, reference):
        kernel = {"Language": "CUDA"}
        options = _absolute_include_options([str(o) for o in (self.compiler_options or [])])
        if self.source.path is not None and '#include "' in self.source.code:
            options.append(f"-I{self.source.path.parent}")
        if options:
            kernel["CompilerOptions"] = options
        kernel["KernelName"] = self.kernel_name
        kernel["KernelFile"] = self.source.file_name
        kernel.update(self.launch_fields(configs, explicit_grid))
        if smem != "":
            kernel["SharedMemory"] = smem
        entries, references, files = _problem.argument_entries(self.args, reference, _reference_threshold(self.atol))
        kernel["Arguments"] = entries
        if reference and references:
            kernel["ReferenceArguments"] = references
        space = {"TuningParameters": _problem.tuning_parameters(self.tune_params)}
        conds = None if explicit_configs else _space.conditions(self.all_restrictions, self.tune_params)
        space["Conditions"] = conds or []
        doc = {
            "General": {"BenchmarkName": self.kernel_name, "OutputFormat": "JSON"},
            "ConfigurationSpace": space,
            "KernelSpecification": kernel,
        }
        ours = {}
        if explicit_configs:
            ours["Configs"] = [list(c) for c in configs]
        if self.verify_in_python:
            # The script's verify function judges the outputs, which may be written only in part
            # by design (a partial result per block, as many as the config's blocks): Tilescope
            # then checks only for NaN and Inf, not which elements a config wrote.
            partial = [e["Name"] for e in entries if e.get("MemoryType") == "Vector" and e.get("AccessType") != "ReadOnly"]
            if partial:
                ours["Partial"] = partial
        if ours:
            doc["Tilescope"] = ours
        return doc, files

    def write(self, configs, reference=True, force_configs=False):
        """Writes the problem for `configs` and checks it with `space`: the same count as Kernel
        Tuner's reading, the same launch on sampled configs. Conditions where Tilescope's
        expressions agree with Python, else the configs listed; ProblemSize with GridDiv where
        they give Kernel Tuner's grid, else the grid itself."""
        smem = _problem.shared_memory(getattr(self, "smem_args", None), self.names, configs, self.tune_params)
        explicit_configs = (force_configs or len(configs) != len(self.valid)
                            or _space.conditions(self.all_restrictions, self.tune_params) is None)
        explicit_grid = False
        problem = None
        refused = None  # why `space` refused the first problem written, which a fallback must not hide
        while True:
            if problem is not None:
                _problem.remove_problem(problem)  # an attempt Tilescope read otherwise
            try:
                doc, files = self.t1(configs, smem, explicit_configs, explicit_grid, reference)
            except Refusal as e:
                if refused is None:
                    raise
                raise Refusal(f"{e}; before that, Tilescope refused the problem as first written: {refused}") from None
            problem = _problem.write_problem(self.cli.problem_root, self.kernel_name, self.source, doc, files)
            info, err = self.cli.space(problem)
            if info is None:
                refused = refused or err or "`space` ended without a message"
                if not explicit_configs:
                    explicit_configs = True  # a restriction Tilescope's expressions do not take
                    continue
                if not explicit_grid:
                    explicit_grid = True  # a divisor or size Tilescope's expressions do not take
                    continue
                raise Refusal(f"Tilescope cannot read the problem written for this call ({problem}): {err}")
            if info.get("valid_size") != len(configs):
                if not explicit_configs:
                    explicit_configs = True
                    continue
                raise Refusal(
                    f"Tilescope cannot reproduce Kernel Tuner's config space: `space {problem}` counts "
                    f"{info.get('valid_size')} valid configs, Kernel Tuner's reading {len(configs)}"
                )
            mismatch = self.launch_mismatch(info)
            if mismatch:
                if not explicit_grid:
                    explicit_grid = True
                    continue
                raise Refusal(f"Tilescope cannot reproduce Kernel Tuner's launch ({problem}): {mismatch}")
            self.problem = problem
            self.space_info = info
            return problem

    def launch_mismatch(self, info):
        samples = info.get("samples") or []
        launches = info.get("launches") or []
        for sample, launch in zip(samples, launches):
            config = _match_config(self.tune_params, sample)
            if config is None or not isinstance(launch, dict) or "grid" not in launch:
                continue
            params = dict(zip(self.names, config))
            threads, grid = _problem.kt_launch(params, self.problem_size, self.grid_div, self.block_size_names)
            if list(launch.get("grid", [])) != list(grid) or ("block" in launch and list(launch["block"]) != list(threads)):
                return (f"for {util.get_config_string(params)} Tilescope launches grid {launch.get('grid')} block "
                        f"{launch.get('block')}, Kernel Tuner grid {list(grid)} block {list(threads)}")
            smem = getattr(self, "smem_args", None)
            if smem and "size" in smem and "shared_dynamic" in launch:
                wanted = int(_problem.util_smem(smem["size"], params)) if not isinstance(smem["size"], (int, np.integer)) \
                    else int(smem["size"])
                if launch["shared_dynamic"] != wanted:
                    return (f"for {util.get_config_string(params)} Tilescope gives {launch['shared_dynamic']} bytes of "
                            f"dynamic shared memory, Kernel Tuner {wanted}")
        return None


def _run_tune(call, args, quiet):
    before = sessions(call.cli.db)
    last_id = max((s["id"] for s in before), default=0) if before is not None else 0
    started = perf_counter()
    call.cli.tune(args, quiet)
    wall = perf_counter() - started
    after = sessions(call.cli.db)
    if after:
        new = [s for s in after if s["id"] > last_id]
        info = new[-1] if new else after[-1]
        return info, call.cli.results(info["id"]), wall
    # Without SQLite in this Python: the newest session, as `show` reads it.
    results = call.cli.results(None)
    info = {"id": results[0]["session"]} if results else {}
    return info, results, wall


def _device_name(cli, info, backend):
    if info.get("device_name"):
        return info["device_name"]
    return backend


def _absolute_include_options(options):
    """The compiler options with relative -I folders and --pre-include headers made absolute: the
    compiler Kernel Tuner runs takes them from the working folder, and the problem folder may be
    tuned again from anywhere."""
    result = []
    take_next = False
    for o in options:
        if take_next:
            result.append(os.path.abspath(o))
            take_next = False
        elif o in ("-I", "--include-path", "-include", "--pre-include"):
            result.append(o)
            take_next = True
        elif o.startswith(("--include-path=", "--pre-include=")):
            flag, _, path = o.partition("=")
            result.append(f"{flag}={os.path.abspath(path)}" if path else o)
        elif o.startswith("-I") and len(o) > 2:
            result.append("-I" + os.path.abspath(o[2:]))
        else:
            result.append(o)
    return result


def _environment(info, backend, device_name, iterations, compiler_options, problem, db):
    env = {"device_name": device_name}
    arch = info.get("arch", "")
    if arch.startswith("sm_"):
        env["compute_capability"] = arch[3:]
    provenance = info.get("provenance") or {}
    devices = provenance.get("devices")
    if isinstance(devices, list) and devices and isinstance(devices[0], dict):
        for k in ("uuid", "driver"):
            if k in devices[0]:
                env[k] = devices[0][k]
    env["iterations"] = iterations
    env["compiler_options"] = list(compiler_options or [])
    env["tilescope"] = {"backend": backend, "database": db, "session": info.get("id"), "problem": str(problem)}
    return env


def _total_timings(results, env, overhead_ms):
    totals = dict(framework=0.0, strategy=0.0, compile=0.0, verification=0.0, benchmark=0.0)
    for r in results:
        if not all(f"{k}_time" in r for k in totals):
            return env
        for k in totals:
            totals[k] += r[f"{k}_time"]
    for k, v in totals.items():
        env[f"total_{k}_time"] = v
    if "simulated_time" in env:
        overhead_ms += env["simulated_time"]
    # Tilescope compiles in parallel with measuring, so the summed times can exceed the wall time.
    env["overhead_time"] = max(overhead_ms - sum(totals.values()), 0.0)
    return env


def tune_kernel(
    kernel_name,
    kernel_source,
    problem_size,
    arguments,
    tune_params,
    grid_div_x=None,
    grid_div_y=None,
    grid_div_z=None,
    restrictions=None,
    answer=None,
    atol=1e-6,
    verify=None,
    verbose=False,
    lang=None,
    device=0,
    platform=0,
    smem_args=None,
    cmem_args=None,
    texmem_args=None,
    compiler=None,
    compiler_options=None,
    defines=None,
    log=None,
    iterations=7,
    block_size_names=None,
    quiet=False,
    strategy=None,
    strategy_options=None,
    cache=None,
    metrics=None,
    simulation_mode=None,
    parallel=None,
    observers=None,
    objective=None,
    objective_higher_is_better=None,
    objectives=None,
    seed=None,
):
    """Tune a CUDA kernel as Kernel Tuner's tune_kernel does, measured by Tilescope.

    Returns (results, env): a list of dicts, one per evaluated config (its parameters, "time" in ms,
    the compile, verification and benchmark times, the metrics, "timestamp", and "__error__" with
    Kernel Tuner's marker for a config that failed), and the environment with "best_config".
    """
    start_overhead = perf_counter()
    if log:
        logging.basicConfig(filename=kernel_name + datetime.now().strftime("%Y%m%d-%H:%M:%S") + ".log", level=log)
    source = _problem.KernelSource(kernel_name, kernel_source, lang)
    arguments, _device = _problem.host_arguments(arguments)
    _problem.check_arguments(arguments)
    register_observers = _refuse_unsupported(texmem_args, defines, observers, parallel)
    objective, higher = _objectives(objective, objective_higher_is_better, objectives)
    tune_params = _space.normalise_tune_params(tune_params)
    if any("nvml_" in p for p in tune_params) and not simulation_mode:
        raise Refusal(
            "Tilescope cannot tune nvml_ parameters (tune_params "
            + ", ".join(p for p in tune_params if "nvml_" in p)
            + "): it sets no clocks or power limits"
        )
    bs_names = _block_size_names(block_size_names, tune_params)
    kt_strategy, ts_strategy, options = _strategy(strategy, strategy_options)
    if isinstance(metrics, dict) is False and metrics is not None:
        raise ValueError("metrics should be a dictionary to preserve order and support composability")
    verify = util.normalize_verify_function(verify)

    cli = Cli()
    backend = cli.backend
    cachefile = None
    if cache:
        cachefile = str(Path(cache).resolve()) if isinstance(cache, Path) else str(cache)
        if cachefile[-5:] != ".json":
            cachefile += ".json"
    if simulation_mode:
        if not cachefile or not os.path.isfile(cachefile):
            raise ValueError(f"Simulation mode requires an existing cachefile: file {cachefile} does not exist")
        backend = "replay:" + os.path.abspath(cachefile)
    elif isinstance(device, (int, np.integer)) and device != 0:
        if backend == "cuda":
            backend = f"cuda:{int(device)}"
        else:
            _note(f"device={device}: the backend is {backend}, which names its own device; device is not applied")
    kind = cli.kind(backend)
    if not quiet:
        print("Using: Tilescope, backend " + backend)

    call = _Call(cli, kernel_name, source, problem_size, arguments, tune_params, (grid_div_x, grid_div_y, grid_div_z),
                 bs_names, smem_args, cmem_args, compiler_options, answer, atol, verify, restrictions,
                 None if simulation_mode else _space.MAX_THREADS)
    call.smem_args = smem_args
    if verbose:
        print(f"Searchspace has {len(call.valid)} configurations after restrictions.")

    # The cache: its configs are not measured again.
    cached = {}
    cache_data = None
    if cachefile and os.path.isfile(cachefile):
        cache_data = util.read_cache(cachefile, open_cache=False)
        # The device is checked now where it is known (analysis, replay), after the run on a GPU;
        # in simulation mode the cache's device is the one simulated.
        device_known = kind != "cuda" and not simulation_mode
        _check_cache(cache_data, kernel_name, problem_size, tune_params, backend if device_known else None)
        cached = cache_data["cache"]
    to_run = call.valid if simulation_mode or not cached else [c for c in call.valid if _key(c) not in cached]

    notes = []
    if ts_strategy != "exhaustive" and objective != ["time"]:
        notes.append(f"Tilescope's search minimises time; the objective {', '.join(objective)} ranks the results")
    budget = _budget_args(kt_strategy, options, len(call.valid), len(to_run), notes)
    verify_in_python = verify is not None
    outputs = None
    info, raw, wall = {}, [], 0.0
    if to_run:
        reference = answer is not None and not verify_in_python
        call.write(to_run, reference=reference)
        args = [call.problem, "--backend", backend, "--db", cli.db, "--strategy", ts_strategy] + budget
        if seed is not None:
            args += ["--seed", str(int(seed))]
        if kind == "cuda":
            args += ["--min-samples", str(max(1, int(iterations)))]
            nvml = _nvml_observables(register_observers)
            if nvml:
                energy = any(m in ("energy", "power") for m in nvml.values())
                state = any(m.startswith("gpu.") for m in nvml.values())
                args += ["--metrics", "default" + (",energy" if energy else "") + (",gpu-state" if state else "")]
            if verify_in_python:
                outputs = tempfile.mkdtemp(prefix="outputs-", dir=str(call.problem.parent))
                args += ["--no-verify", "--outputs", outputs]
            elif answer is None:
                args += ["--no-verify"]
        elif verify_in_python:
            notes.append(f"verify: the {kind} backend runs no kernel, so there are no outputs to verify")
        args = _merge_args(args, cli.tune_args)
        for n in notes:
            _note(n)
        try:
            info, raw, wall = _run_tune(call, args, quiet)
        except TuneFailed:
            if outputs:
                shutil.rmtree(outputs, ignore_errors=True)
            raise
    else:
        for n in notes:
            _note(n)
        if call.valid and not quiet:
            _note(f"every config of the space is in the cache {cachefile}; nothing to measure")

    device_name = _device_name(cli, info, backend)
    if cache_data is not None and (simulation_mode or not info):
        device_name = cache_data.get("device_name", device_name)
    if cache_data is not None and not simulation_mode and info and cache_data.get("device_name") != device_name:
        raise ValueError(
            f"Cannot load cache which contains results for different device (cache: "
            f"{cache_data.get('device_name')}, actual: {device_name})"
        )

    try:
        results, failures, fresh = _collect(call, raw, cached, kind, simulation_mode, ts_strategy, metrics,
                                           register_observers, wall, verify, outputs, answer, atol)
        analysed = _analysed_order(raw, tune_params)
    finally:
        if outputs:
            shutil.rmtree(outputs, ignore_errors=True)

    if not quiet:
        keys_units = _UNITS if kind != "replay" else {}
        for r in results:
            if id(r) in fresh:
                util.print_config_output(tune_params, r, quiet, metrics, keys_units)

    if cachefile and not simulation_mode:
        _write_cache(cachefile, cache_data, device_name, kernel_name, problem_size, tune_params, objective, results, fresh)

    if failures:
        first = failures[0]
        raise RuntimeError(
            "Kernel result verification failed for: " + util.get_config_string(first[0])
            + f" (Tilescope: {len(failures)} of {len(results) + len(failures)} configs failed verification; "
            + (first[1] + "; " if first[1] else "")
            + f"every result is in {cli.db}, session {info.get('id')})"
        )

    if simulation_mode:
        env = {"device_name": device_name, "simulation": True,
               "simulated_time": sum(r.get("compile_time", 0) + r.get("verification_time", 0)
                                     + r.get("benchmark_time", 0) for r in results)}
        env["tilescope"] = {"backend": backend, "database": cli.db, "session": info.get("id"),
                            "problem": str(getattr(call, "problem", ""))}
    else:
        env = _environment(info, backend, device_name, iterations, compiler_options,
                           getattr(call, "problem", ""), cli.db)

    if results:
        if len(objective) == 1:
            best = _best(results, objective[0], higher[0], kind, analysed, names=list(tune_params),
                         rank_by=cli.rank_by() or "occupancy")
            env["best_config"] = best
            if not quiet and best is not None:
                keys = list(tune_params.keys()) + [objective[0]] + (list(metrics.keys()) if metrics else [])
                print(f"\nBEST PERFORMING CONFIGURATION FOR OBJECTIVE {objective[0]}:")
                print(util.get_config_string(best, keys, _UNITS))
        else:
            front = util.get_pareto_results(results, objective, higher)
            env["best_config"] = front
            if not quiet:
                keys = list(tune_params.keys()) + list(objective) + (list(metrics.keys()) if metrics else [])
                print(f"\nBEST PERFORMING CONFIGURATIONS FOR OBJECTIVES: {objective}:")
                for b in front:
                    print(util.get_config_string(b, keys, _UNITS))
    elif not quiet:
        print("no results to report")

    overhead_ms = 1000 * (perf_counter() - start_overhead)
    env = _total_timings(results, env, overhead_ms)
    timed = [r for r in results if "__error__" not in r or "time" in r]
    if cli.omit_failed:
        results = timed
    else:
        _failed_without_time[0] += len(results) - len(timed)
    return results, env


# Configs that did not compile or run, returned (as Kernel Tuner 1.5 returns them) without a
# "time": a script written for Kernel Tuner's early releases, which left them out, fails with
# KeyError: 'time' on them, and the hook below says why and what helps.
_failed_without_time = [0]
_script_excepthook = sys.excepthook


def _explain_missing_time(kind, value, traceback):
    _script_excepthook(kind, value, traceback)
    if kind is KeyError and value.args == ("time",) and _failed_without_time[0]:
        print(
            f"kt: the results tune_kernel returned held {_failed_without_time[0]} configs that did not compile or "
            "run, without a 'time' (Kernel Tuner 1.5 returns them so, marked '__error__'; Kernel Tuner's early "
            "releases left them out, and scripts written then expect that): run with tilescope-cli kt "
            "--omit-failed to leave them out",
            file=sys.stderr,
        )


sys.excepthook = _explain_missing_time


def _analysed_order(raw, tune_params):
    """Each config analysed, not timed, by its place in Tilescope's ranking of them (`show --json`
    lists the best first)."""
    order = {}
    for r in raw:
        if r.get("status") == "analysed":
            config = _match_config(tune_params, r.get("config", {}))
            if config is not None:
                order.setdefault(config, len(order))
    return order


def _best(results, objective, higher, kind, analysed=None, names=(), rank_by="occupancy"):
    usable = [r for r in results if "__error__" not in r]
    if not usable:
        if kind == "analysis" and analysed:
            # Nothing timed: the config Tilescope ranks first by what compiling told.
            ranked = [r for r in results if tuple(r.get(n) for n in names) in analysed]
            if ranked:
                _note(f"the analysis backend times nothing: best_config is the config that ranks first by "
                      f"{rank_by} (tilescope-cli tune --rank-by)")
                return min(ranked, key=lambda r: analysed[tuple(r.get(n) for n in names)])
        return util.get_best_config(results, objective, higher)
    if not any(objective in r for r in usable):
        raise KeyError(objective)  # as Kernel Tuner: the objective is neither a result nor a metric
    finite = [r for r in usable if isinstance(r.get(objective), float) and math.isfinite(r[objective])]
    if not finite:
        if kind == "analysis":
            _note("the analysis backend measures no time: best_config is the first config of the space")
        return usable[0]
    return util.get_best_config(finite, objective, higher)


def _check_cache(data, kernel_name, problem_size, tune_params, device_name):
    if device_name is not None and data.get("device_name") != device_name:
        raise ValueError(
            f"Cannot load cache which contains results for different device (cache: {data.get('device_name')}, "
            f"actual: {device_name})"
        )
    if data.get("kernel_name") != kernel_name:
        raise ValueError(
            f"Cannot load cache which contains results for different kernel (cache: {data.get('kernel_name')}, "
            f"actual: {kernel_name})"
        )
    if "problem_size" in data and not callable(problem_size):
        util.check_matching_problem_size(data["problem_size"], problem_size)
    keys = list(tune_params.keys())
    if data.get("tune_params_keys") != keys:
        if all(k in tune_params for k in data.get("tune_params_keys", [])):
            raise ValueError(
                "All tunable parameters are present, but the order is wrong. This is not possible because the "
                "order must be preserved to lookup the correct configuration in the cache. Cache has order: "
                f"{data.get('tune_params_keys')}, tuning_options has: {keys}"
            )
        raise ValueError(
            "Cannot load cache which contains results obtained with different tunable parameters. Cache has: "
            f"{data.get('tune_params_keys')}, tuning_options has: {keys}"
        )


def _result_time(r, kind):
    t = r.get("time_ms")
    return float(t) if t is not None else float("nan")


def _collect(call, raw, cached, kind, simulation_mode, ts_strategy, metrics, register_observers, wall, verify,
             outputs, answer, atol):
    """Kernel Tuner's results: one dict per evaluated config, in the order Kernel Tuner visits them."""
    tune_params = call.tune_params
    names = call.names
    by_config = {}
    order = []
    skipped = []
    odd = {}
    for n, r in enumerate(raw):
        config = _match_config(tune_params, r.get("config", {}))
        if config is None:
            continue
        if r.get("status") == "skipped":
            skipped.append(config)
            continue
        by_config[config] = r
        order.append((r.get("recorded_at", ""), _product_rank(tune_params, config, n), config))
    if ts_strategy == "exhaustive":
        visited = [c for c in call.valid if c in by_config or (not simulation_mode and cached and _key(c) in cached)]
    else:
        visited = [c for _, _, c in sorted(order)]
        if not simulation_mode and cached:
            visited += [c for c in call.valid if _key(c) in cached and c not in by_config]

    if simulation_mode and skipped:
        c = skipped[0]
        raise ValueError(
            f"kernel configuration {list(c)} not in cache, does pass extra restriction check (True) - in simulation "
            "mode, all configurations must be present in the cache"
        )

    results, failures, fresh = [], [], set()
    measured = 0
    framework_total = 0.0
    for config in visited:
        params = dict(zip(names, config))
        key = _key(config)
        r = by_config.get(config)
        if r is None or (simulation_mode and key in cached):
            entry = cached.get(key)
            if entry is None:
                continue
            result = dict(params)
            result.update({k: v for k, v in entry.items() if k not in ("strategy_time", "framework_time")})
            if not simulation_mode:
                result["compile_time"] = 0
                result["verification_time"] = 0
                result["benchmark_time"] = 0
            if "time" in result and result["time"] is None:
                result["time"] = float("nan")
            if metrics and "__error__" not in result:
                _metrics(result, metrics, kind)
            result["timestamp"] = kt_timestamp(r.get("recorded_at") if r else None) if simulation_mode and r else \
                kt_timestamp(None)
            results.append(result)
            if simulation_mode:
                fresh.add(id(result))
            continue
        status = r.get("status")
        result = dict(params)
        analysed = status == "analysed"
        if status == "ok":
            result["time"] = _result_time(r, kind)
        elif analysed:
            # Not measured: Kernel Tuner's marker in place of the time, as it reports a config it
            # did not run (printed "time=InvalidConfig"; never a best by time).
            result["time"] = util.InvalidConfig()
            result["__error__"] = util.InvalidConfig()
        elif status == "wrong_result":
            failures.append((params, r.get("message", "")))
            continue
        else:
            marker = _ERRORS.get(status, util.RuntimeFailedConfig)
            result["__error__"] = marker()
            odd.setdefault(status, []).append(r.get("message", ""))
        result["compile_time"] = 1000 * float(r.get("compile_s") or 0)
        result["verification_time"] = 0
        result["benchmark_time"] = 1000 * float(r.get("benchmark_s") or 0)
        if register_observers and r.get("registers") is not None and any(
                getattr(o, "_tilescope_registers", False) for o in register_observers):
            result["num_regs"] = r["registers"]
        for observable, metric in _nvml_observables(register_observers).items():
            if kind != "analysis":
                result[observable] = float((r.get("metrics") or {}).get(metric, float("nan")))
        if verify is not None and outputs and "__error__" not in result:
            ok, message = _verify_outputs(call, config, outputs, verify, answer, atol)
            if not ok:
                failures.append((params, message))
                continue
        if metrics and ("__error__" not in result or analysed):
            _metrics(result, metrics, kind)  # analysed: those that need no time
        result["timestamp"] = kt_timestamp(r.get("recorded_at"))
        results.append(result)
        fresh.add(id(result))
        measured += 1
        framework_total += result["compile_time"] + result["benchmark_time"]
    # Kernel Tuner spreads the time outside compiling and measuring over the results.
    evaluated = [r for r in results]
    if evaluated:
        framework = max(1000 * wall - framework_total, 0) / len(evaluated) if measured else 0.0
        for r in evaluated:
            r["strategy_time"] = 0
            r["framework_time"] = framework
    for status, messages in odd.items():
        if status == "pruned":
            continue
        what = {"implausible": "a time that cannot be right", "crashed": "crashed", "timeout": "timed out"}.get(status)
        if what:
            _note(f"{len(messages)} configs {what} ({status}; first: {messages[0]}); Kernel Tuner's "
                  "RuntimeFailedConfig marks them")
    if skipped and not simulation_mode:
        _note(f"{len(skipped)} configs were skipped by the backend and are not among the results")
    return results, failures, fresh


def _metrics(result, metrics, kind):
    if kind != "analysis":
        util.process_metrics(result, metrics)
        return
    # Without times (static analysis), a metric that cannot be computed (of the time, which is
    # Kernel Tuner's marker) carries the marker too: printed "GB/s=InvalidConfig", never a number.
    for k, v in metrics.items():
        try:
            util.process_metrics(result, {k: v})
        except Exception:
            result[k] = util.InvalidConfig()


def _token_matches(token, value):
    if token == str(value):
        return True
    if isinstance(value, bool):
        return token.lower() in (("true", "1") if value else ("false", "0"))
    if isinstance(value, (int, float)):
        try:
            return float(token) == float(value)
        except ValueError:
            return False
    return token in (repr(value), f'"{value}"')


def _outputs_folder(outputs, config):
    """The folder `tune --outputs` wrote a config's outputs to: its values joined with "," as
    Kernel Tuner writes cache keys (other spellings of a value are matched too)."""
    folder = Path(outputs) / _key(config)
    if folder.is_dir():
        return folder
    for candidate in Path(outputs).iterdir():
        tokens = candidate.name.split(",")
        if len(tokens) == len(config) and all(_token_matches(t, v) for t, v in zip(tokens, config)):
            return candidate
    return folder


def _verify_outputs(call, config, outputs, verify, answer, atol):
    folder = _outputs_folder(outputs, config)
    host = []
    for a in call.args:
        if not a.kernel_argument:
            continue
        wanted = isinstance(a.value, np.ndarray) and (answer is None or a.answer is not None)
        if not wanted:
            host.append(None)
            continue
        f = folder / f"{a.index}.bin"
        if not f.is_file():
            raise RuntimeError(f"Tilescope wrote no output of argument {a.index} for config {_key(config)} ({f})")
        host.append(_problem.read_output(f, a))
    expected = None if answer is None else [None if x is None else np.array(x) for x in answer]
    correct = verify(expected, host, atol=atol)
    return bool(correct), ""


def _write_cache(cachefile, data, device_name, kernel_name, problem_size, tune_params, objective, results, fresh):
    """Kernel Tuner's cache file: a header, then an entry per config measured (the result without
    strategy_time and framework_time); written as Kernel Tuner writes it, opened and closed."""
    if data is None:
        header = {
            "device_name": device_name,
            "kernel_name": kernel_name,
            "problem_size": problem_size if not callable(problem_size) else "callable",
            "tune_params_keys": list(tune_params.keys()),
            "tune_params": tune_params,
            "objective": objective,
            "cache": {},
        }
        import json

        with open(cachefile, "w") as f:
            f.write(json.dumps(header, cls=util.NpEncoder, indent="")[:-3])
        cache = {}
    else:
        util.correct_open_cache(cachefile, open_cache=True)
        cache = dict(data["cache"])
    for r in results:
        if id(r) not in fresh:
            continue
        entry = {k: v for k, v in r.items() if k not in ("strategy_time", "framework_time")}
        for k, v in entry.items():
            if isinstance(v, float) and not math.isfinite(v):
                entry[k] = None  # JSON has no NaN: a time the backend did not measure
        key = _key(tuple(r[n] for n in tune_params))
        util.store_cache(key, entry, cachefile, cache)
    util.close_cache(cachefile)


def run_kernel(
    kernel_name,
    kernel_source,
    problem_size,
    arguments,
    params,
    grid_div_x=None,
    grid_div_y=None,
    grid_div_z=None,
    lang=None,
    device=0,
    platform=0,
    smem_args=None,
    cmem_args=None,
    texmem_args=None,
    compiler=None,
    compiler_options=None,
    defines=None,
    block_size_names=None,
    quiet=False,
    log=None,
):
    """Compile and run a kernel once for one config, and return every argument after the run:
    arrays (shaped and typed as given) with the kernel's output, scalars as they were."""
    if log:
        logging.basicConfig(filename=kernel_name + datetime.now().strftime("%Y%m%d-%H:%M:%S") + ".log", level=log)
    source = _problem.KernelSource(kernel_name, kernel_source, lang)
    given = arguments
    arguments, device = _problem.host_arguments(arguments)
    _problem.check_arguments(arguments)
    _refuse_unsupported(texmem_args, defines, None, None)
    if not isinstance(params, dict):
        raise TypeError("params should be a dict of parameter name to value")
    tune_params = _space.normalise_tune_params({k: [v] for k, v in params.items()})
    bs_names = _block_size_names(block_size_names, tune_params) if block_size_names is not None else \
        list(util.default_block_size_names)
    cli = Cli()
    backend = cli.backend
    if isinstance(device, (int, np.integer)) and device != 0 and backend == "cuda":
        backend = f"cuda:{int(device)}"
    if cli.kind(backend) != "cuda":
        raise Refusal(
            f"Tilescope cannot run_kernel on the backend '{backend}': no kernel runs there, so there is no "
            "output to return (run the script with --backend cuda)"
        )
    threads = util.get_thread_block_dimensions(tune_params and {k: v[0] for k, v in tune_params.items()}, bs_names)
    if np.prod(threads) > _space.MAX_THREADS:
        raise RuntimeError("cannot create kernel instance, too many threads per block")
    call = _Call(cli, kernel_name, source, problem_size, arguments, tune_params, (grid_div_x, grid_div_y, grid_div_z),
                 bs_names, smem_args, cmem_args, compiler_options, None, 1e-6, None, None, None)
    call.smem_args = smem_args
    config = call.valid[0]
    call.write([config], reference=False, force_configs=True)
    outputs = tempfile.mkdtemp(prefix="outputs-", dir=str(call.problem.parent))
    try:
        args = [call.problem, "--backend", backend, "--db", cli.db, "--strategy", "exhaustive", "--no-verify",
                "--outputs", outputs, "--min-samples", "1", "--sample-time", "0.0001", "--confirm", "0"]
        args = _merge_args(args, _drop_option(cli.tune_args, "--sample-time"))
        _info, raw, _wall = _run_tune(call, args, quiet)
        result = next((r for r in raw if _match_config(tune_params, r.get("config", {})) == config), None)
        if result is None:
            raise RuntimeError(f"Tilescope recorded no result for {util.get_config_string(params)}")
        status = result.get("status")
        message = result.get("message", "")
        if status == "compile_error":
            raise RuntimeError(f"compile_kernel failed due to error: {message}")
        if status == "launch_error":
            raise RuntimeError(f"runtime error occured, too many resources requested ({message})")
        if status not in ("ok", "implausible"):
            raise RuntimeError(f"Tilescope: the kernel did not run correctly ({status}: {message})")
        folder = _outputs_folder(outputs, config)
        out = []
        for a in call.args:
            if not a.kernel_argument:
                continue
            if not isinstance(a.value, np.ndarray):
                out.append(a.value)
                continue
            f = folder / f"{a.index}.bin"
            if not f.is_file():
                raise RuntimeError(f"Tilescope wrote no output of argument {a.index} ({f})")
            out.append(_problem.read_output(f, a))
        # CuPy and PyTorch arrays hold the output afterwards, as they do under Kernel Tuner
        _problem.write_back(given, out, device)
        return out
    finally:
        shutil.rmtree(outputs, ignore_errors=True)


def tune_cache(cache_path, restrictions=None, **kwargs):
    raise Refusal(
        "Tilescope cannot tune_cache: replay the cache with `tilescope-cli tune PROBLEM --backend replay:"
        f"{cache_path}`, or tune_kernel(..., cache=FILE, simulation_mode=True) with the kernel's arguments"
    )


def tune_kernel_T1(input_filepath, *args, **kwargs):
    raise Refusal(
        f"Tilescope cannot tune_kernel_T1 from a script: it tunes T1 files itself, `tilescope-cli tune "
        f"{input_filepath} --backend cuda --db results.db`"
    )
