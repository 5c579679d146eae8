"""A Kernel Tuner call written as a T1 tuning problem: the kernel source, the arguments as raw
data files, the launch (problem size, grid divisors, block size names, shared memory), the
reference outputs, and the config space. The problem lives in a folder beside the results
database, so that it opens and tunes again without the script."""

import concurrent.futures
import hashlib
import json
import os
import re
import shutil
import warnings
from pathlib import Path

import numpy as np

from . import util
from ._space import Refusal, function_expression, literal, parameter_type, values_text

# numpy dtype -> T1 Type.
_DTYPES = {
    "bool": "bool",
    "int8": "int8",
    "uint8": "uint8",
    "int16": "int16",
    "uint16": "uint16",
    "int32": "int32",
    "uint32": "uint32",
    "int64": "int64",
    "uint64": "uint64",
    "float16": "half",
    "float32": "float",
    "float64": "double",
    "complex64": "float2",
    "complex128": "double2",
}

# Kernel Tuner's table of the C type names each dtype may be declared as (for its warning).
_C_TYPES = {
    "bool": ["bool"],
    "uint8": ["uchar", "unsigned char", "uint8_t"],
    "int8": ["char", "int8_t"],
    "uint16": ["ushort", "unsigned short", "uint16_t"],
    "int16": ["short", "int16_t"],
    "uint32": ["uint", "unsigned int", "uint32_t"],
    "int32": ["int", "int32_t"],
    "uint64": ["ulong", "unsigned long", "uint64_t"],
    "int64": ["long", "int64_t"],
    "float16": ["half"],
    "float32": ["float"],
    "float64": ["double"],
    "complex64": ["float2"],
    "complex128": ["double2"],
}

CUDA_LANGS = ("CUDA", "CUPY", "NVCUDA", "PYCUDA")


def t1_type(dtype, where):
    name = str(np.dtype(dtype))
    if name not in _DTYPES:
        raise Refusal(
            f"Tilescope cannot pass {where}: its dtype {name} has no T1 type (supported: "
            + ", ".join(sorted(_DTYPES))
            + ")"
        )
    return _DTYPES[name]


# ---- the kernel source ----


class KernelSource:
    """The kernel's code and files, as Kernel Tuner decides what kernel_source is."""

    def __init__(self, kernel_name, kernel_source, lang):
        sources = kernel_source if isinstance(kernel_source, list) else [kernel_source]
        if not sources:
            raise ValueError("kernel_source is an empty list")
        self.generator = None
        self.files = []  # (name as given, path) of the file sources
        if callable(sources[0]):
            if lang is None:
                raise TypeError("Please specify language when using a code generator function")
            if len(sources) > 1:
                raise Refusal("Tilescope cannot take further files beside a code generator function (kernel_source)")
            # The code comes from realize(), once the valid configs are known.
            self.generator = sources[0]
            self.code = ""
            self.path = None
            self.file_name = (re.sub(r"[^A-Za-z0-9_]+", "_", kernel_name.split("<")[0]).strip("_") or "kernel") + ".cu"
            self.lang = lang.upper()
            self._check_language(lang)
            return
        first = sources[0]
        if isinstance(first, Path) or (isinstance(first, str) and util.looks_like_a_filename(first)):
            path = Path(first)
            if not path.is_file():
                raise FileNotFoundError(f"kernel_source names the file '{first}', which does not exist")
            self.code = path.read_text()
            self.path = path.resolve()
            self.file_name = path.name
        elif isinstance(first, str):
            self.code = first
            self.path = None
            safe = re.sub(r"[^A-Za-z0-9_]+", "_", kernel_name.split("<")[0]).strip("_") or "kernel"
            self.file_name = safe + ".cu"
        else:
            raise TypeError("Error kernel_source is not a string nor a callable function")
        for i, extra in enumerate(sources[1:], start=1):
            if not (isinstance(extra, (str, Path)) and util.looks_like_a_filename(str(extra))):
                raise ValueError("When passing multiple kernel sources, the secondary entries must be filenames")
            p = Path(extra)
            if not p.is_file():
                raise FileNotFoundError(f"kernel_source[{i}] names the file '{extra}', which does not exist")
            if p.is_absolute() or ".." in p.parts:
                raise Refusal(
                    f"Tilescope cannot place kernel_source[{i}] ('{extra}') beside the kernel: give it as a "
                    "path relative to the kernel, as the kernel includes it"
                )
            self.files.append((str(extra), p.resolve()))
        self.lang = (lang or util.detect_language(self.code)).upper()
        self._check_language(lang)

    def _check_language(self, lang):
        if self.lang not in CUDA_LANGS:
            known = ("OPENCL", "HIP", "C", "FORTRAN", "JULIA", "HYPERTUNER")
            if self.lang not in known:
                raise NotImplementedError(
                    "Sorry, support for languages other than CUDA, OpenCL, HIP, C, Julia, Fortran is not implemented yet"
                )
            shown = lang if lang is not None else self.lang
            raise Refusal(
                f"Tilescope cannot tune lang='{shown}' kernels: it compiles (NVRTC) and runs CUDA kernels "
                "only (lang None, 'CUDA', 'cupy', 'nvcuda' or 'pycuda')"
            )


    # A code generator's kernel: one source for every config, each config's code under a
    # preprocessor condition on the parameters (Tilescope defines each parameter with its value).
    MAX_GENERATED_CONFIGS = 20000

    def realize(self, names, configs):
        if self.generator is None:
            return
        if len(configs) > self.MAX_GENERATED_CONFIGS:
            raise Refusal(
                f"Tilescope cannot take kernel_source as a code generator over {len(configs)} configs: it "
                f"writes one source with each config's code (at most {self.MAX_GENERATED_CONFIGS} configs)"
            )
        groups = {}
        for config in configs:
            code = self.generator(dict(zip(names, config)))
            if not isinstance(code, str):
                raise TypeError(f"the code generator returned {type(code).__name__}, not a string of code")
            groups.setdefault(code, []).append(config)
        if len(groups) <= 1:
            self.code = next(iter(groups), "")
            return
        varying = [i for i in range(len(names)) if len({c[i] for c in configs}) > 1]
        for i in varying:
            for c in configs:
                v = c[i]
                if isinstance(v, str) or (isinstance(v, float) and not v.is_integer()):
                    raise Refusal(
                        f"Tilescope cannot take kernel_source as a code generator when its code differs "
                        f"with '{names[i]}', whose value {v!r} the preprocessor cannot compare (integers and "
                        "booleans only)"
                    )

        # Leave out the parameters the code does not depend on: those without which every config
        # still tells its code.
        group_of = {c: g for g, members in enumerate(groups.values()) for c in members}
        for i in list(varying):
            keep = [j for j in varying if j != i]
            seen = {}
            if all(seen.setdefault(tuple(c[j] for j in keep), group_of[c]) == group_of[c] for c in configs):
                varying = keep

        def test(config):
            return " && ".join(f"{names[i]} == {int(config[i])}" for i in varying)

        lines = [
            "// kernel_source is a code generator: each config's code, chosen by its parameters "
            "(each defined with its value)"
        ]
        for n, (code, members) in enumerate(groups.items()):
            tests = list(dict.fromkeys(f"({test(c)})" for c in members))
            lines.append(("#if " if n == 0 else "#elif ") + " || ".join(tests))
            lines.append("#line 1")
            lines.append(code)
        lines.append("#endif")
        self.code = "\n".join(lines) + "\n"


    # Kernel Tuner's `#pragma unroll loop_unroll_factor_N`: the name is a constexpr int only when it
    # is tuned (0 removes the pragma). A kernel whose script does not tune it (Kernel Tuner's own
    # reduction.py) fails under Kernel Tuner with "identifier is undefined"; here the pragma is left
    # to the compiler, as the value 0 would, and a warning names it.
    _UNROLL_PRAGMA = re.compile(r"^[ \t]*#[ \t]*pragma[ \t]+unroll[ \t]+(\w*loop_unroll_factor\w*)[ \t\r]*$", re.M)

    def drop_untuned_unroll_factors(self, tune_params):
        untuned = sorted({m.group(1) for m in self._UNROLL_PRAGMA.finditer(self.code)} - set(tune_params))
        if not untuned:
            return []
        # Each such line becomes empty, so that the compiler's line numbers stay the file's.
        self.code = self._UNROLL_PRAGMA.sub(lambda m: "" if m.group(1) in untuned else m.group(0), self.code)
        warnings.warn(
            "Tilescope leaves the loops under `#pragma unroll " + "`, `#pragma unroll ".join(untuned)
            + "` to the compiler: " + ", ".join(untuned) + (" is" if len(untuned) == 1 else " are")
            + " not among tune_params (Kernel Tuner defines it only when it is tuned; 0 is its value for "
            "no pragma)",
            UserWarning,
            stacklevel=4,  # the script's tune_kernel or run_kernel call
        )
        return untuned


def _strip_comments(code):
    code = re.sub(r"/\*.*?\*/", " ", code, flags=re.S)
    return re.sub(r"//[^\n]*", " ", code)


def kernel_parameters(code, kernel_name):
    """The kernel's parameter declarations ("const float* a", ...) from its __global__ signature,
    or None when it cannot be found."""
    code = _strip_comments(code)
    base = kernel_name.split("<")[0].strip()
    best = None
    for m in re.finditer(r"\b" + re.escape(base) + r"\s*\(", code):
        head = code[max(0, m.start() - 400) : m.start()]
        cut = max(head.rfind(";"), head.rfind("}"))
        declaration = head[cut + 1 :]
        depth, i = 1, m.end()
        while i < len(code) and depth:
            if code[i] == "(":
                depth += 1
            elif code[i] == ")":
                depth -= 1
            i += 1
        if depth:
            continue
        inside = code[m.end() : i - 1]
        params, level, current = [], 0, ""
        for ch in inside:
            if ch in "<([":
                level += 1
            elif ch in ">)]":
                level -= 1
            if ch == "," and level == 0:
                params.append(current.strip())
                current = ""
            else:
                current += ch
        if current.strip():
            params.append(current.strip())
        if params == ["void"]:
            params = []
        if "__global__" in declaration:
            return params
        if best is None:
            best = params
    return best


def parameter_name(declaration):
    text = declaration.split("=")[0]
    text = re.sub(r"\[[^\]]*\]", "", text)
    names = re.findall(r"[A-Za-z_][A-Za-z_0-9]*", text)
    return names[-1] if names else None


def access_type(declaration):
    """ReadOnly for a pointer to const, ReadWrite for another pointer, None when not a pointer."""
    text = declaration.split("=")[0]
    if "*" not in text and "[" not in text:
        return None
    before = text[: text.rfind("*")] if "*" in text else text
    return "ReadOnly" if re.search(r"\bconst\b", before) else "ReadWrite"


def check_argument_types(kernel_name, declarations, arguments):
    """Kernel Tuner's warning when the host arguments do not match the kernel's parameters."""
    if declarations is None:
        return
    if len(declarations) != len(arguments):
        warnings.warn(
            f"Kernel ({len(declarations)}) and host argument ({len(arguments)}) lists do not match in size.",
            UserWarning,
        )
        return
    for i, (decl, arg) in enumerate(zip(declarations, arguments)):
        dtype = str(arg.dtype)
        ok = not (isinstance(arg, np.ndarray) and "*" not in decl and "[" not in decl)
        ok = ok and (dtype not in _C_TYPES or any(s in decl for s in _C_TYPES[dtype]))
        if not ok:
            warnings.warn(f"Argument at position {i} of dtype: {dtype} does not match {decl}.", UserWarning)
            return


# ---- arguments ----


class Argument:
    def __init__(self, index, value, name, access):
        self.index = index
        self.value = value
        self.name = name
        self.access = access
        self.symbol = None  # the __constant__ variable it also fills (cmem_args)
        self.answer = None
        self.kernel_argument = True  # False for a cmem_args array that is not among the arguments

    @property
    def is_array(self):
        return isinstance(self.value, np.ndarray)


def device_kind(arg):
    """"cupy" or "torch" for an array of theirs (on the GPU or not), else None."""
    package = type(arg).__module__.split(".")[0]
    if package == "cupy" and hasattr(arg, "get") and hasattr(arg, "set"):
        return "cupy"
    if package == "torch" and hasattr(arg, "detach") and hasattr(arg, "copy_"):
        return "torch"
    return None


def host_arguments(arguments):
    """The arguments with CuPy and PyTorch arrays copied to NumPy arrays (Kernel Tuner's CuPy backend
    takes them as they are; Tilescope's worker reads every argument's data from a file), and the
    positions of those arrays, for write_back. Anything else as it is."""
    if not isinstance(arguments, (list, tuple)):
        return arguments, []
    host, device = [], []
    for i, arg in enumerate(arguments):
        kind = device_kind(arg)
        if kind == "cupy":
            host.append(arg.get())
        elif kind == "torch":
            host.append(arg.detach().cpu().numpy())
        else:
            host.append(arg)
            continue
        device.append(i)
    return host, device


def write_back(arguments, results, device):
    """Copies each result at a position of `device` into the CuPy or PyTorch array given there, as
    Kernel Tuner's run leaves the kernel's output in them."""
    for i in device:
        target, value = arguments[i], results[i]
        if device_kind(target) == "cupy":
            target.set(np.ascontiguousarray(value.reshape(target.shape)))
        else:
            import torch  # the argument is a torch.Tensor: torch is there

            target.copy_(torch.from_numpy(np.ascontiguousarray(value.reshape(tuple(target.shape)))))


def check_arguments(arguments):
    if not isinstance(arguments, (list, tuple)):
        raise TypeError(f"arguments should be a list, got {type(arguments).__name__}")
    for i, arg in enumerate(arguments):
        if isinstance(arg, (np.ndarray, np.generic)):
            continue
        kind = type(arg).__module__ + "." + type(arg).__name__
        if kind.startswith(("torch.", "cupy.", "hip.")):
            raise Refusal(
                f"Tilescope cannot pass argument {i}, a {kind}: it takes NumPy arrays and scalars, and CuPy "
                "and PyTorch arrays (copied to the host: the data go to a file the Tilescope worker reads)"
            )
        raise TypeError(
            f"Argument at position {i} of type: {type(arg)} should be of type "
            "np.ndarray, numpy scalar, HIP Python DeviceArray, Julia VectorValue type"
        )


def make_arguments(arguments, declarations, tune_params, cmem_args):
    """The T1 arguments: names from the kernel's parameters (else arg<i>), access from const-ness."""
    usable = declarations is not None and len(declarations) == len(arguments)
    taken = set(tune_params) | set((cmem_args or {}).keys())
    out = []
    for i, value in enumerate(arguments):
        name = parameter_name(declarations[i]) if usable else None
        if not name or name in taken or name in ("ProblemSize", "True", "False", "None"):
            name = f"arg{i}"
        while name in taken:
            name = "_" + name
        taken.add(name)
        access = access_type(declarations[i]) if usable else None
        if isinstance(value, np.ndarray):
            # An empty array (Kernel Tuner passes it; a kernel that reads none of it runs) goes to
            # the GPU as one element of zero: a buffer has at least one.
            t1_type(value.dtype, f"argument {i}")
        else:
            t1_type(value.dtype, f"argument {i}")
            access = None
        out.append(Argument(i, value, name, access))
    for symbol, value in (cmem_args or {}).items():
        if not isinstance(symbol, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z_0-9]*", symbol):
            raise ValueError(f"cmem_args key {symbol!r} is not the name of a __constant__ variable")
        if not isinstance(value, np.ndarray):
            raise Refusal(
                f"Tilescope cannot fill cmem_args['{symbol}'] from a {type(value).__name__}: give a numpy array"
            )
        t1_type(value.dtype, f"cmem_args['{symbol}']")
        same = [a for a in out if a.value is value and a.symbol is None and a.kernel_argument]
        if same:
            # One T1 argument is both the kernel's argument and the __constant__ variable's
            # contents; its Name is the variable's.
            a = same[0]
            a.symbol = symbol
            a.name = symbol
        else:
            a = Argument(None, value, symbol, "ReadOnly")
            a.symbol = symbol
            a.kernel_argument = False
            out.append(a)
    return out


# ---- the launch ----


def _divisor_expression(d, where):
    if isinstance(d, (bool, np.bool_)):
        raise TypeError(f"{where} is a bool")
    if isinstance(d, (int, np.integer)):
        return str(int(d))
    if isinstance(d, str):
        text = d.strip()
        if re.fullmatch(r"[A-Za-z_][A-Za-z_0-9]*|[0-9]+", text):
            return text
        # Kernel Tuner takes int() of each divisor: truncation, floor for the positive sizes here.
        return f"floor({text})"
    raise TypeError(f"{where} should be an int, a string or a function, got {type(d).__name__}")


def grid_divisors(grid_div, axis, block_size_names, tune_params):
    """A GridDiv list for one axis: Kernel Tuner's divisors, never empty (an empty T1 list would
    mean Tilescope's default). None when a divisor is a function (evaluated per config instead)."""
    where = f"grid_div_{'xyz'[axis]}"
    if grid_div is None:
        name = block_size_names[axis]
        return [name] if name in tune_params else ["1"]
    if callable(grid_div):
        return None
    if isinstance(grid_div, (int, str, np.integer)):
        grid_div = [grid_div]
    if not hasattr(grid_div, "__iter__"):
        raise ValueError(
            "Error: unrecognized type in grid divisor list, should be any of int, str, callable, or iterable"
        )
    out = []
    for k, d in enumerate(grid_div):
        if callable(d):
            return None
        out.append(_divisor_expression(d, f"{where}[{k}]"))
    return out or ["1"]


def kt_divisor(d, default, config):
    """Kernel Tuner's divisor of one axis for a config (get_dimension_divisor)."""
    if d is None:
        return config.get(default, 1)
    if isinstance(d, (int, np.integer)) and not isinstance(d, bool):
        return d
    if callable(d):
        return d(config)
    if isinstance(d, str):
        return int(eval(util.replace_param_occurrences(d, config), util._eval_namespace()))
    if np.iterable(d):
        n = 1
        for x in d:
            n *= kt_divisor(x, 1, config)
        return n
    raise ValueError("Error: unrecognized type in grid divisor list, should be any of int, str, callable, or iterable")


def kt_launch(config, problem_size, grid_div, block_size_names):
    """Kernel Tuner's block and grid of a config (setup_block_and_grid)."""
    threads = util.get_thread_block_dimensions(config, block_size_names)
    current = util.get_problem_size(problem_size, config)
    divisors = [kt_divisor(d, block_size_names[i], config) for i, d in enumerate(grid_div)]
    grid = tuple(int(np.ceil(float(current[i]) / float(d))) for i, d in enumerate(divisors))
    return threads, grid


def shared_memory(smem_args, names, configs, tune_params):
    """T1 SharedMemory for smem_args["size"]: an integer or an expression ("" when absent)."""
    if not smem_args:
        return ""
    if not isinstance(smem_args, dict):
        raise TypeError("smem_args should be a dict with the key 'size'")
    for key in smem_args:
        if key != "size":
            raise Refusal(f"Tilescope cannot take smem_args['{key}']: only 'size' (bytes of dynamic shared memory)")
    if "size" not in smem_args:
        return ""
    size = smem_args["size"]
    if isinstance(size, (int, np.integer)) and not isinstance(size, bool):
        return int(size)
    values = [util_smem(size, dict(zip(names, c))) for c in configs]
    if isinstance(size, str) and all(isinstance(v, int) for v in values):
        text = size.strip()
        return text if re.fullmatch(r"[A-Za-z_0-9 +*\-]+", text) else f"floor({text})"
    return function_expression("smem_args['size']", names, configs, values)


def util_smem(size, params):
    if callable(size):
        return size(params)
    if isinstance(size, str):
        return int(eval(util.replace_param_occurrences(size, params), util._eval_namespace()))
    raise TypeError(f"smem_args['size'] should be an int, a string or a function, got {type(size).__name__}")


# ---- writing the problem ----


def _digest(parts):
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode() if isinstance(p, str) else p)
        h.update(b"\0")
    return h.hexdigest()


def _bytes_of(data):
    """A C-contiguous array's bytes without copying them (hashed and written as they are)."""
    return data.reshape(-1).view(np.uint8)


def _place_data(root, target, blob, blob_digest):
    """Puts an array's bytes at `target`: a hard link to the copy under root/data/ named by its
    hash, written there once, so that the calls of a script that pass the same arrays (several
    kernels, several tune_kernel calls) write them once; a plain copy where links cannot be made."""
    store = root / "data" / f"{blob_digest}.bin"
    try:
        if not store.is_file():
            store.parent.mkdir(parents=True, exist_ok=True)
            part = store.with_name(f"{store.name}.tmp{os.getpid()}")
            part.write_bytes(blob)
            os.replace(part, store)
        os.link(store, target)
        return
    except OSError:
        pass
    target.write_bytes(blob)


def _in_threads(work, items):
    """[work(item) for item in items], the items in threads where there are several (hashing and
    writing large arrays let go of the GIL: a script's three 40 MB arrays take a third of the time)."""
    if len(items) < 2:
        return [work(item) for item in items]
    with concurrent.futures.ThreadPoolExecutor(max_workers=min(len(items), os.cpu_count() or 1, 8)) as pool:
        return list(pool.map(work, items))


def write_problem(folder_root, kernel_name, source, t1, data_files):
    """Writes the problem into <folder_root>/<kernel>-<hash of its contents>/ (an identical call
    finds its folder already there) and returns the T1 file's path."""
    text = json.dumps(t1, indent=2) + "\n"
    blob_digests = _in_threads(lambda blob: hashlib.sha256(blob).hexdigest(), [blob for _, blob in data_files])
    digest = _digest(
        [text, source.code]
        + [name for name, _ in data_files]
        + blob_digests
        + [p.read_bytes() for _, p in source.files]
    )[:12]
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", kernel_name.split("<")[0]).strip("_") or "kernel"
    folder = Path(folder_root) / f"{safe}-{digest}"
    problem = folder / "problem.json"
    if problem.is_file():
        return problem
    if folder.exists():
        shutil.rmtree(folder, ignore_errors=True)  # left unfinished by an earlier run
    tmp = folder.with_name(folder.name + f".tmp{os.getpid()}")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    (tmp / source.file_name).write_text(source.code)
    for given, path in source.files:
        target = tmp / given
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    _in_threads(lambda entry: _place_data(Path(folder_root), tmp / entry[0][0], entry[0][1], entry[1]),
                list(zip(data_files, blob_digests)))
    (tmp / "problem.json").write_text(text)
    try:
        tmp.rename(folder)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)  # another process wrote the same folder first
    return problem


def remove_problem(problem):
    """Removes a problem folder written by write_problem."""
    shutil.rmtree(Path(problem).parent, ignore_errors=True)


def tuning_parameters(tune_params):
    return [
        {"Name": name, "Type": parameter_type(name, values), "Values": values_text(values)}
        for name, values in tune_params.items()
    ]


def argument_entries(args, reference, reference_threshold):
    """T1 Arguments and ReferenceArguments, and the data files they name."""
    entries, references, files = [], [], []
    for a in args:
        v = a.value
        e = {"Name": a.name, "Type": t1_type(v.dtype, a.name)}
        if isinstance(v, np.ndarray):
            data = np.ascontiguousarray(v) if v.size > 0 else np.zeros(1, dtype=v.dtype)
            file_name = f"{a.name}.bin"
            files.append((file_name, _bytes_of(data)))
            e["MemoryType"] = "Vector"
            if a.access:
                e["AccessType"] = a.access
            e["Size"] = int(data.size)
            e["FillType"] = "BinaryRaw"
            e["DataSource"] = file_name
            if a.symbol is not None:
                e["MemType"] = "Constant"
            if a.answer is not None:
                e["Output"] = True
        else:
            value = v.item()
            if isinstance(value, complex):
                raise Refusal(f"Tilescope cannot pass argument {a.index}, a complex scalar")
            if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 2**53:
                raise Refusal(
                    f"Tilescope cannot pass argument {a.index} ({value}) exactly: a scalar's FillValue is a "
                    "double, exact to 2**53"
                )
            e["MemoryType"] = "Scalar"
            e["FillValue"] = float(value) if isinstance(value, float) else int(value)
        entries.append(e)
    for a in args:
        if a.answer is None or not reference or a.answer.size == 0:
            continue
        file_name = f"{a.name}.answer.bin"
        files.append((file_name, _bytes_of(np.ascontiguousarray(a.answer.astype(a.value.dtype, copy=False)))))
        references.append(
            {
                "Name": f"{a.name}_answer",
                "TargetName": a.name,
                "FillType": "BinaryRaw",
                "DataSource": file_name,
                "ValidationMethod": "SideBySideComparison",
                "ValidationThreshold": reference_threshold(a),
            }
        )
    return entries, references, files


def literal_list(values):
    return [literal(v) for v in values]


def read_output(path, argument):
    """An output file Tilescope wrote (--outputs) as the argument's array: its shape, and empty
    where the argument was (its one-element buffer aside)."""
    data = np.fromfile(path, dtype=argument.value.dtype)
    if argument.value.size == 0:
        return np.empty_like(argument.value)
    return data.reshape(argument.value.shape)
