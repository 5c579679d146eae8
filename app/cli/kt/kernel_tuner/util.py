"""The parts of kernel_tuner.util that tuning scripts use, with Kernel Tuner 1.5's behaviour.

Results carry Kernel Tuner's error markers under "__error__"; the helpers below read and print
results as Kernel Tuner's own do, so that a script's post-processing runs unchanged.
"""

import json
import re
import sys
from math import ceil, floor  # noqa: F401  (names that restrictions and metrics may use)

import numpy as np

default_block_size_names = ["block_size_x", "block_size_y", "block_size_z"]


class ErrorConfig(str):
    """Kernel Tuner's marker for a config that gave no valid result (the value of "__error__")."""

    def __str__(self):
        return self.__class__.__name__

    def __repr__(self):
        return self.__class__.__name__


class InvalidConfig(ErrorConfig):
    pass


class CompilationFailedConfig(ErrorConfig):
    pass


class RuntimeFailedConfig(ErrorConfig):
    pass


_ERROR_MARKERS = {
    "ErrorConfig": ErrorConfig,
    "InvalidConfig": InvalidConfig,
    "CompilationFailedConfig": CompilationFailedConfig,
    "RuntimeFailedConfig": RuntimeFailedConfig,
}


class SkippableFailure(Exception):
    """Raised where compiling or launching a kernel fails for a reason that can be expected."""


class StopCriterionReached(Exception):
    """Raised when a stop criterion has been reached."""


class NpEncoder(json.JSONEncoder):
    """Writes numpy scalars and arrays as JSON numbers and lists."""

    def default(self, obj):
        if isinstance(obj, np.integer):
            return int(obj)
        if isinstance(obj, np.floating):
            return float(obj)
        if isinstance(obj, np.ndarray):
            return obj.tolist()
        return super().default(obj)


# Whether a higher value is better, for the objectives Kernel Tuner knows by name.
objective_default_map = {
    "time": False,
    "energy": False,
    "fitness": True,
    "cost": False,
    "loss": False,
    "GFLOP/s": True,
    "TFLOP/s": True,
    "GB/s": True,
    "TB/s": True,
    "GFLOPS/W": True,
    "TFLOPS/W": True,
    "GFLOP/J": True,
    "TFLOP/J": True,
}


def get_objective_defaults(objective, objective_higher_is_better):
    """The objective ("time" by default) and its direction, known for the objectives above."""
    objective = objective or "time"
    if objective_higher_is_better is None:
        if objective in objective_default_map:
            objective_higher_is_better = objective_default_map[objective]
        else:
            raise ValueError(f"Please specify objective_higher_is_better for objective {objective}")
    return objective, objective_higher_is_better


def check_result_type(r):
    if "__error__" in r:
        return isinstance(r["__error__"], ErrorConfig)
    return True


def get_result_cost(result, objectives, objective_higher_is_better):
    """The cost vector of a result: negated for objectives to maximise, the largest float for errors."""
    if "__error__" in result:
        return [sys.float_info.max] * len(objectives)
    return [-result[o] if hib else result[o] for o, hib in zip(objectives, objective_higher_is_better)]


def get_best_config(results, objective, objective_higher_is_better=False):
    """The best result by `objective`; results with an error or a non-float objective are ignored."""
    func = max if objective_higher_is_better else min
    ignore_val = sys.float_info.max if not objective_higher_is_better else -sys.float_info.max
    return func(
        results,
        key=lambda x: x[objective] if "__error__" not in x and isinstance(x[objective], float) else ignore_val,
    )


def get_pareto_results(results, objectives, objective_higher_is_better, mark_optima=True):
    """The results no other result dominates over `objectives` (each marked "optimal": True)."""
    costs = [get_result_cost(r, objectives, objective_higher_is_better) for r in results]
    front = []
    for i, ci in enumerate(costs):
        dominated = False
        for j, cj in enumerate(costs):
            if j != i and all(a <= b for a, b in zip(cj, ci)) and any(a < b for a, b in zip(cj, ci)):
                dominated = True
                break
        if not dominated:
            front.append(results[i])
    if mark_optima:
        for p in front:
            p["optimal"] = True
    return front


def get_config_string(params, keys=None, units=None):
    """A compact one-line string of a result: "name=value, ..." with floats to three decimals."""

    def compact_number(v):
        if isinstance(v, float):
            return "{:.3f}".format(round(v, 3))
        return str(v)

    items = []
    if not keys:
        keys = params.keys()
    for k, v in params.items():
        if k in keys:
            unit = ""
            if isinstance(units, dict) and not isinstance(v, ErrorConfig):
                unit = units.get(k, "")
            items.append(k + "=" + compact_number(v) + unit)
    return ", ".join(items)


def get_instance_string(params):
    """The parameter values joined by "_"."""
    return "_".join(str(i) for i in params.values())


def print_config_output(tune_params, params, quiet, metrics, units):
    """Prints a result as Kernel Tuner prints each config it measures."""
    keys = list(tune_params.keys()) + ["time"]
    if metrics:
        keys += list(metrics.keys())
    if not quiet:
        print(get_config_string(params, keys, units))


def replace_param_occurrences(string, params):
    """`string` with every token that names a key of `params` replaced by its value."""
    result = ""
    for part in re.split("([a-zA-Z0-9_]+)", string):
        result += str(params[part]) if part in params else part
    return result


def _eval_namespace():
    # What Kernel Tuner's own evaluation of strings sees: its module's names (ceil, floor, numpy).
    return {"ceil": ceil, "floor": floor, "np": np, "numpy": np}


def process_metrics(params, metrics):
    """Adds the user's metrics to a result, in order, so that a metric may use those before it.

    A metric is a string (an expression of the parameters, "time" and earlier metrics) or a
    function that takes the result dict.
    """
    if metrics is not None:
        if not isinstance(metrics, dict):
            raise ValueError("metrics should be a dictionary to preserve order and support composability")
        for k, v in metrics.items():
            if isinstance(v, str):
                value = eval(replace_param_occurrences(v, params), _eval_namespace())
            elif callable(v):
                value = v(params)
            else:
                raise ValueError("metric dicts values should be strings or callable")
            params[k] = value
    return params


def looks_like_a_filename(kernel_source):
    """Whether kernel_source is a file name rather than code (Kernel Tuner's test)."""
    result = False
    if isinstance(kernel_source, str):
        result = True
        if len(kernel_source) > 250:
            result = False
        for c in "();{}\\":
            if c in kernel_source:
                result = False
        for s in ["__global__ ", "__kernel ", "void ", "float "]:
            if s in kernel_source:
                result = False
        result = result and any(s in kernel_source for s in (".c", ".opencl", ".F", ".jl"))
    return result


def detect_language(kernel_string):
    """CUDA, OpenCL, Julia or C, from the code."""
    kernel_string = kernel_string.lower().strip()
    if "__global__" in kernel_string:
        return "CUDA"
    if "__kernel" in kernel_string:
        return "OpenCL"
    if any(token in kernel_string for token in ["@cuda", "@kernel", "@device_code"]):
        return "Julia"
    return "C"


def read_file(filename):
    """The contents of a file, or None when there is no such file."""
    try:
        with open(filename, "r") as f:
            return f.read()
    except FileNotFoundError:
        return None


def write_file(filename, string):
    with open(filename, "w", encoding="utf-8") as f:
        f.write(string)


def get_kernel_string(kernel_source, params=None):
    """The code of kernel_source: a file's contents, or the string itself when it is code."""
    from pathlib import Path

    if callable(kernel_source):
        return kernel_source(params)
    if isinstance(kernel_source, Path):
        return read_file(kernel_source)
    if isinstance(kernel_source, str):
        if looks_like_a_filename(kernel_source):
            with open(kernel_source, "r") as f:
                return f.read()
        return kernel_source
    raise TypeError("Error kernel_source is not a string nor a callable function")


def get_thread_block_dimensions(params, block_size_names=None):
    """The block of a config: its block size parameters, or 256, 1, 1."""
    if not block_size_names:
        block_size_names = default_block_size_names
    return (
        int(params.get(block_size_names[0], 256)),
        int(params.get(block_size_names[1], 1)),
        int(params.get(block_size_names[2], 1)),
    )


def get_problem_size(problem_size, params):
    """The problem size of a config, three entries."""
    if callable(problem_size):
        problem_size = problem_size(params)
    if isinstance(problem_size, (str, int, np.integer)):
        problem_size = (problem_size,)
    current = [1, 1, 1]
    for i, s in enumerate(problem_size):
        if isinstance(s, str):
            current[i] = int(eval(replace_param_occurrences(s, params), _eval_namespace()))
        elif isinstance(s, (int, np.integer)):
            current[i] = s
        else:
            raise TypeError("Error: problem_size should only contain strings or integers")
    return current


def normalize_verify_function(v):
    """A user's verify function made to accept the keyword atol."""
    from inspect import signature

    if v is None:
        return None
    if "atol" in signature(v).parameters:
        return v
    return lambda answer, result_host, atol: v(answer, result_host)


def correct_open_cache(cachefile, open_cache=True):
    """The cache file's text, closed where a run stopped before closing it; with open_cache the
    file is reopened for appending entries."""
    with open(cachefile, "r") as f:
        filestr = f.read().strip()
    if len(filestr) > 0 and filestr[-3:] not in ["}\n}", "}}}"]:
        if filestr[-1] == ",":
            filestr = filestr[:-1]
        if len(filestr) > 0:
            filestr = filestr + "}\n}"
    elif open_cache:
        with open(cachefile, "w") as f:
            f.write(filestr[:-3] + ",")
    return filestr


def read_cache(cachefile, open_cache=True):
    """A Kernel Tuner cache file as a dict, error markers as ErrorConfig instances."""
    filestr = correct_open_cache(cachefile, open_cache)
    data = json.loads(filestr)
    for element in data["cache"].values():
        error = None
        for k, v in element.items():
            if isinstance(v, str) and v in _ERROR_MARKERS:
                error = _ERROR_MARKERS[v]()
        if error is not None:
            element["__error__"] = error
    return data


def close_cache(cachefile):
    """Closes a cache file opened for appending, so that JSON readers read it."""
    with open(cachefile, "r") as fh:
        contents = fh.read()
    if contents and contents[-1] == ",":
        with open(cachefile, "w") as fh:
            fh.write(contents[:-1] + "}\n}")


def store_cache(key, params, cachefile, cache):
    """Adds one entry to an open cache file and to `cache`."""
    if isinstance(cache, dict) and key not in cache:
        cache[key] = params
        output_params = {k: (str(v) if isinstance(v, ErrorConfig) else v) for k, v in params.items()}
        if cachefile:
            with open(cachefile, "a") as f:
                f.write("\n" + json.dumps({key: output_params}, cls=NpEncoder)[1:-1] + ",")


def check_matching_problem_size(cached_problem_size, problem_size):
    """Raises ValueError when a cache was recorded for another problem size."""
    a = np.array(cached_problem_size)
    b = np.array(problem_size)
    if a.size != b.size or not (a == b).all():
        raise ValueError(
            f"Cannot load cache which contains results for different problem_size, "
            f"cache: {cached_problem_size}, requested: {problem_size}"
        )
