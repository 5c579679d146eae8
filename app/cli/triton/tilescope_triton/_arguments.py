"""The kernel call's real arguments as T1 Arguments: each tensor's bytes (the memory its view
reaches, from its first element to its last, so that the strides the kernel is passed still
hold) as a BinaryRaw file, each number as a Scalar's FillValue. Tensors are torch tensors,
triton.reinterpret wrappers of them, or anything with Triton's tensor protocol (data_ptr, dtype,
shape, stride, element_size) whose contents NumPy can read (numpy())."""

import math

import numpy as np

from . import _expr
from ._common import Refusal

# dtype names (torch's, NumPy's, triton.language's) -> T1 Type.
_TYPES = {
    "float32": "float",
    "float": "float",
    "fp32": "float",
    "float16": "half",
    "half": "half",
    "fp16": "half",
    "bfloat16": "bfloat16",
    "bf16": "bfloat16",
    "float64": "double",
    "double": "double",
    "fp64": "double",
    "int8": "int8",
    "i8": "int8",
    "int16": "int16",
    "i16": "int16",
    "int32": "int32",
    "i32": "int32",
    "int64": "int64",
    "i64": "int64",
    "uint8": "uint8",
    "u8": "uint8",
    "uint16": "uint16",
    "u16": "uint16",
    "uint32": "uint32",
    "u32": "uint32",
    "uint64": "uint64",
    "u64": "uint64",
    "bool": "bool",
    "int1": "bool",
    "u1": "bool",
    "float8_e4m3fn": "float8_e4m3",
    "fp8e4nv": "float8_e4m3",
    "float8_e5m2": "float8_e5m2",
    "fp8e5": "float8_e5m2",
}


def dtype_name(dtype):
    """"float16" for torch.float16, numpy.float16 and tl.float16 ("fp16")."""
    text = str(dtype)
    for prefix in ("torch.", "triton.language.", "tl."):
        if text.startswith(prefix):
            text = text[len(prefix):]
    return text


def t1_type(dtype, where):
    name = dtype_name(dtype)
    if name not in _TYPES:
        raise Refusal(
            f"Tilescope cannot pass {where}: its dtype {name} has no T1 type (it passes float16, bfloat16, "
            "float32, float64, int8 to int64, uint8 to uint64, bool, float8_e4m3fn and float8_e5m2)"
        )
    return _TYPES[name]


def is_tensor(v):
    return hasattr(v, "data_ptr") and hasattr(v, "dtype")


def _base(t):
    """A triton.reinterpret wrapper's tensor (its bytes), else the tensor."""
    return t.base if type(t).__name__ == "TensorWrapper" and hasattr(t, "base") else t


def span(t):
    """Elements from the tensor's first to the last its strides reach (its numel when it is
    contiguous); 0 for an empty one."""
    shape = tuple(int(n) for n in t.shape)
    strides = t.stride() if callable(getattr(t, "stride", None)) else None
    if strides is None:
        return math.prod(shape)
    strides = tuple(int(s) for s in strides)
    if any(n == 0 for n in shape):
        return 0
    if any(s < 0 for s in strides):
        raise Refusal("Tilescope cannot pass a tensor with a negative stride")
    return 1 + sum((n - 1) * s for n, s in zip(shape, strides))


def tensor_bytes(t):
    """The bytes of the memory the tensor's view reaches, from its first element on, on the host."""
    base = _base(t)
    n = span(base)
    if type(base).__module__.startswith("torch"):
        import torch

        flat = base.detach().as_strided((n,), (1,)).cpu()
        return flat.contiguous().view(torch.uint8).numpy().tobytes()
    if hasattr(base, "numpy"):
        array = np.asarray(base.numpy())
    else:
        array = np.asarray(base)
    if array.ndim == 0:
        return array.tobytes()
    flat = np.lib.stride_tricks.as_strided(array, shape=(n,), strides=(array.itemsize,), writeable=False)
    return flat.tobytes()


def scalar_entry(name, value, where):
    """A number argument as a T1 Scalar, typed as Triton passes it (int: int32 when it fits,
    else int64 or uint64; float: float; bool: bool)."""
    v = _expr.plain(value)
    entry = {"Name": name, "MemoryType": "Scalar"}
    if isinstance(v, bool):
        entry["Type"] = "bool"
        entry["FillValue"] = int(v)
    elif isinstance(v, int):
        if -(2**31) <= v < 2**31:
            entry["Type"] = "int32"
        elif -(2**63) <= v < 2**63:
            entry["Type"] = "int64"
        elif 2**63 <= v < 2**64:
            entry["Type"] = "uint64"
        else:
            raise Refusal(f"Tilescope cannot pass {where} ({v}): Triton passes integers of at most 64 bits")
        if abs(v) > 2**53:
            raise Refusal(
                f"Tilescope cannot pass {where} ({v}) exactly: a T1 scalar's FillValue is a double, exact to 2**53"
            )
        entry["FillValue"] = v
    elif isinstance(v, float):
        if not math.isfinite(v):
            raise Refusal(f"Tilescope cannot pass {where} ({v}): a T1 FillValue is a finite number")
        entry["Type"] = "float"
        entry["FillValue"] = v
    elif hasattr(value, "dtype") and hasattr(value, "item") and np.ndim(value) == 0:
        entry["Type"] = t1_type(value.dtype, where)
        entry["FillValue"] = _expr.plain(value.item())
    elif type(value).__name__ == "TensorDescriptor":
        raise Refusal(
            f"Tilescope cannot pass {where}: it is a host-side tensor descriptor ({type(value).__module__}."
            "TensorDescriptor), which Triton's launcher turns into a TMA descriptor; Tilescope passes tensors and "
            "numbers (a descriptor the kernel makes itself from a tensor argument, tl.make_tensor_descriptor, is "
            "kernel code and compiles as any other)"
        )
    elif value is None:
        raise Refusal(
            f"Tilescope cannot pass None as {where}: a T1 argument is a tensor's data or a number (Triton compiles "
            "None in as a constant; pass a tensor)"
        )
    else:
        raise Refusal(
            f"Tilescope cannot pass {where}: a {type(value).__module__}.{type(value).__name__} is neither a tensor "
            "nor a number (what a T1 argument holds)"
        )
    return entry


def argument_entries(kernel, params, reset_to_zero, restore_value, access):
    """T1 Arguments (in the order of the kernel's parameters that are not tl.constexpr), the data
    files they name ((file name, bytes)), and the outputs (Tilescope.Partial: their elements are
    compared where written, not required to be written everywhere)."""
    entries, files, outputs = [], [], []
    pointers = {}
    for name in kernel.runtime:
        if name not in params:
            if kernel.has_default(name):
                params[name] = kernel.default(name)
            else:
                raise TypeError(f"{kernel.name}() missing required argument: '{name}'")
        value = params[name]
        where = f"the argument '{name}' of {kernel.name}"
        if not is_tensor(value):
            entries.append(scalar_entry(name, value, where))
            continue
        base = _base(value)
        kind = access.get(name, "ReadWrite") if access is not None else "ReadWrite"
        address = int(value.data_ptr())
        if address in pointers and address != 0:
            # The same memory under two names (an in-place kernel): Tilescope gives each its own
            # buffer, so both start from the data.
            kind = "ReadWrite"
            for e in entries:
                if e["Name"] == pointers[address] and e.get("AccessType") == "WriteOnly":
                    e["AccessType"] = "ReadWrite"
        pointers.setdefault(address, name)
        if name in reset_to_zero:
            kind = "ReadWrite"
        elif name in restore_value and kind == "WriteOnly":
            kind = "ReadWrite"
        entry = {
            "Name": name,
            "Type": t1_type(value.dtype, where),
            "MemoryType": "Vector",
            "AccessType": kind,
            "Size": span(base),
        }
        if entry["Size"] == 0:
            raise Refusal(f"Tilescope cannot pass {where}: it is an empty tensor")
        if name in reset_to_zero:
            entry["FillType"] = "Constant"
            entry["FillValue"] = 0
        elif kind != "WriteOnly":
            file_name = f"{name}.bin"
            files.append((file_name, tensor_bytes(value)))
            entry["FillType"] = "BinaryRaw"
            entry["DataSource"] = file_name
        if kind != "ReadOnly":
            outputs.append(name)
        entries.append(entry)
    # A WriteOnly output that shares memory with a later argument was made ReadWrite above, and
    # needs its data too.
    for e in entries:
        if e.get("AccessType") == "ReadWrite" and e.get("MemoryType") == "Vector" and "FillType" not in e:
            file_name = f"{e['Name']}.bin"
            files.append((file_name, tensor_bytes(params[e["Name"]])))
            e["FillType"] = "BinaryRaw"
            e["DataSource"] = file_name
    return entries, files, outputs
