"""One autotuned call written as a T1 problem in Triton's form: the file that defines the kernel,
its configs (Tilescope.Configs, or the widened value lists), the call's arguments as data, the
grid as GlobalSize expressions, the key's values as the shape. The problem lives in a folder
beside the results database, so that it opens and tunes again without the script."""

import hashlib
import json
import os
import re
import shutil
from pathlib import Path

from . import _arguments, _grid, _source
from ._common import Refusal


def build(kernel, space, params, key_dims, reset_to_zero, restore_value, grid):
    """(the T1 document, its files as (name, bytes): the kernel file (_source), then the
    arguments' data; the grids per config [x, y, z])."""
    pointers = [n for n in kernel.runtime if n in params and _arguments.is_tensor(params[n])]
    entries, files, outputs = _arguments.argument_entries(kernel, dict(params), set(reset_to_zero),
                                                          set(restore_value), kernel.access(pointers))
    expressions, grids = _grid.grid_expressions(grid, space.metas, space.names, space.rows, kernel.where)
    file_name = os.path.basename(kernel.file)
    with open(kernel.file, encoding="utf-8") as f:
        files.insert(0, (file_name, _source.reduce(f.read(), kernel.name, file_name).encode("utf-8")))
    global_size = {"X": expressions[0]}
    if expressions[1] != "1" or expressions[2] != "1":
        global_size["Y"] = expressions[1]
    if expressions[2] != "1":
        global_size["Z"] = expressions[2]
    spec = {
        "Language": "Triton",
        "KernelName": kernel.name,
        "KernelFile": file_name,
        "GlobalSizeType": "CUDA",
        "GlobalSize": global_size,
        "Arguments": entries,
    }
    doc = {
        "General": {"FormatVersion": 1, "BenchmarkName": kernel.name},
        "ConfigurationSpace": {"TuningParameters": space.parameters(), "Conditions": []},
        "KernelSpecification": spec,
    }
    ours = {}
    shape = {k: v for k, v in key_dims.items() if k not in space.names}
    if shape:
        ours["Shapes"] = [shape]
    if not space.product:
        ours["Configs"] = [list(r) for r in space.rows]
    if outputs:
        ours["Partial"] = outputs
    if ours:
        doc["Tilescope"] = ours
    return doc, files, grids


def key_dims(autotuner_keys, params):
    """The key's numbers by name (the problem's shape): the key's arguments that are numbers."""
    out = {}
    for k in autotuner_keys:
        v = params.get(k)
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            continue
        if not re.fullmatch(r"[A-Za-z_][A-Za-z_0-9]*", k):
            continue
        out[k] = v
    return out


def _digest(parts):
    h = hashlib.sha256()
    for p in parts:
        h.update(p if isinstance(p, bytes) else p.encode())
        h.update(b"\0")
    return h.hexdigest()


def write(root, kernel, doc, files):
    """Writes the problem (the T1 document and its files: the kernel file and the data) into
    <root>/<kernel>-<hash of its contents>/ (an identical call finds its folder there already)
    and returns the T1 file's path."""
    text = json.dumps(doc, indent=2) + "\n"
    digest = _digest([text] + [name for name, _ in files] + [hashlib.sha256(b).hexdigest() for _, b in files])
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", kernel.name).strip("_") or "kernel"
    folder = Path(root) / f"{safe}-{digest[:12]}"
    problem = folder / "problem.json"
    if problem.is_file():
        return problem
    if folder.exists():
        shutil.rmtree(folder, ignore_errors=True)  # left unfinished by an earlier run
    tmp = folder.with_name(folder.name + f".tmp{os.getpid()}")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    names = {"problem.json"}
    for name, _ in files:
        if name in names:
            raise Refusal(f"Tilescope cannot write the problem of {kernel.where}: two of its files are named {name}")
        names.add(name)
    for name, blob in files:
        (tmp / name).write_bytes(blob)
    (tmp / "problem.json").write_text(text)
    try:
        tmp.rename(folder)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)  # another process wrote the same folder first
    return problem


def remove(problem):
    shutil.rmtree(Path(problem).parent, ignore_errors=True)


def launch_mismatch(info, space, grids):
    """Where `space --json`'s launches of its sampled configs differ from the script's grid: a
    message, or None when they agree (or space gave no launches)."""
    samples = info.get("samples") or []
    launches = info.get("launches") or []
    for sample, launch in zip(samples, launches):
        if not isinstance(sample, dict) or not isinstance(launch, dict) or "grid" not in launch:
            continue
        row = space.index(sample)
        if row is None:
            continue
        shown = ", ".join(f"{n}={sample.get(n)!r}" for n in space.names)
        if list(launch["grid"]) != list(grids[row]):
            return f"for {shown} Tilescope launches the grid {launch['grid']}, the script {grids[row]}"
        if "num_warps" in space.names and isinstance(launch.get("block"), list):
            threads = 32 * space.rows[row][space.names.index("num_warps")]
            if list(launch["block"]) != [threads, 1, 1]:
                return f"for {shown} Tilescope launches blocks of {launch['block']}, Triton of [{threads}, 1, 1]"
    return None
