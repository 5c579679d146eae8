"""Kernel Tuner's T4 output files: the results of a tuning run (store_output_file) and a
description of where it ran (store_metadata_file), in the T4 1.0.0 layout Kernel Tuner writes."""

import json
import math
import platform
import sys
from pathlib import Path

from kernel_tuner import util

_T4_VERSION = "1.0.0"


def filename_ensure_json_extension(filename):
    filename = str(filename)
    return filename if filename[-5:] == ".json" else filename + ".json"


def make_filenamepath(filenamepath):
    folder = Path(filenamepath).parents[0]
    if not folder.exists():
        folder.mkdir()


def get_configuration_validity(result):
    """"correct", or why the config gave no result: "compile", "runtime", "constraints"."""
    if "__error__" not in result:
        return "correct"
    error = result["__error__"]
    if isinstance(error, util.CompilationFailedConfig):
        return "compile"
    if isinstance(error, util.RuntimeFailedConfig):
        return "runtime"
    if isinstance(error, util.InvalidConfig):  # also a config not measured (the analysis backend)
        return "constraints"
    raise ValueError(f"Unkown error type {type(error)}, value {error}")


def get_t4_results(results, tune_params, objective="time"):
    """The results as a T4 document (a dict)."""
    if isinstance(objective, (list, tuple)):
        if len(objective) > 1:
            raise ValueError("The T4 format does not support multiple objectives.")
        objective = objective[0]
    timing_keys = ["compile_time", "benchmark_time", "framework_time", "strategy_time", "verification_time"]
    not_measurements = list(tune_params.keys()) + timing_keys + ["timestamp", "times", "__error__"]
    out = []
    for result in results:
        entry = {}
        if "timestamp" in result:
            entry["timestamp"] = result["timestamp"]
        entry["configuration"] = {k: v for k, v in result.items() if k in tune_params}
        entry["times"] = {
            "compilation": result["compile_time"],
            "benchmark": result["benchmark_time"],
            "framework": result["framework_time"],
            "search_algorithm": result["strategy_time"],
            "validation": result["verification_time"],
            "runtimes": result.get("times", []),
        }
        entry["invalidity"] = get_configuration_validity(result)
        # Configs that fail verification are not among the results, as in Kernel Tuner.
        entry["correctness"] = 1
        # A marker in place of a value (the time of a config that gave none) is no measurement: the
        # invalidity says why there is none.
        entry["measurements"] = [
            dict(name=k, value=v, unit="ms" if k.startswith("time") else "")
            for k, v in result.items()
            if k not in not_measurements and not isinstance(v, util.ErrorConfig)
        ]
        entry["objectives"] = [objective]
        out.append(entry)
    return dict(results=out, schema_version=_T4_VERSION, metadata={"timeunit": "milliseconds"})


def _finite(obj):
    # JSON has no NaN: a value the backend did not measure (the analysis backend's times) is null.
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj


def store_output_file(output_filename, results, tune_params, objective="time"):
    """Writes the results as a T4 results file (".json" appended when missing)."""
    path = Path(filename_ensure_json_extension(output_filename))
    make_filenamepath(path)
    with open(path, "w+") as fh:
        json.dump(_finite(get_t4_results(results, tune_params, objective)), fh, cls=util.NpEncoder)


def get_t4_metadata():
    """A T4 metadata document: the operating system, and that Tilescope carried out the run (the
    device and its provenance are in the results database)."""
    os_name = {"linux": "Linux", "win32": "Windows", "darwin": "Mac"}.get(sys.platform, "unidentified OS")
    metadata = {
        "operating_system": os_name,
        "hardware": {"hardware_description": [{"machine": platform.machine(), "node": platform.node()}]},
        "environment": {
            "device_query": {},
            "requirements": [f"python=={platform.python_version()}", "tilescope (kernel_tuner stand-in 1.5.0)"],
        },
    }
    return dict(metadata=metadata, schema_version=_T4_VERSION)


def store_metadata_file(metadata_filename):
    """Writes the T4 metadata file (".json" appended when missing)."""
    path = Path(filename_ensure_json_extension(metadata_filename))
    make_filenamepath(path)
    with open(path, "w+") as fh:
        json.dump(get_t4_metadata(), fh, indent="  ")
