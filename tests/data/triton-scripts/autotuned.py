"""A script that autotunes Triton kernels as users write them, run by tst_cli_triton under
`tilescope-cli triton` with Triton's interpreter (TRITON_INTERPRET=1) and NumPy-backed tensors
(fakes.py), so that it runs to the end without a GPU: the configs are measured by a recording
(--backend replay:add.t4.json) and the kernels then run on the CPU with the winner.

python autotuned.py [CASE]: CASE is add (the default), reset, or one that Tilescope refuses
(pre_hook, post_hook, do_bench, config_pre_hook, nested, none_argument, tensor_descriptor). The last line printed
is "SUMMARY <json>"."""

import json
import sys

import numpy as np
import triton
import triton.language as tl

from fakes import tensor

CASE = sys.argv[1] if len(sys.argv) > 1 else "add"
CONFIGS = [
    triton.Config({"BLOCK": 64}, num_warps=2),
    triton.Config({"BLOCK": 128}, num_warps=4),
    triton.Config({"BLOCK": 256}, num_warps=4),
]


@triton.autotune(configs=CONFIGS, key=["n"])
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


@triton.autotune(configs=CONFIGS, key=["n"], reset_to_zero=["out_ptr"])
@triton.jit
def accumulate_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.atomic_add(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask), mask=mask)


@triton.jit
def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=offsets < n), mask=offsets < n)


def autotuned(**options):
    """copy_kernel under @triton.autotune with these options."""
    return triton.autotune(configs=options.pop("configs", CONFIGS), key=["n"], **options)(copy_kernel)


def nested():
    @triton.autotune(configs=CONFIGS, key=["n"])
    @triton.jit
    def inner_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=offsets < n), mask=offsets < n)

    return inner_kernel


def grid(n):
    return lambda META: (triton.cdiv(n, META["BLOCK"]), )


n = 1000
x = tensor(np.arange(n))
y = tensor(np.ones(n))
out = tensor(np.zeros(n))
summary = {"case": CASE}
if CASE == "add":
    add_kernel[grid(n)](x, y, out, n)
    summary["ok"] = bool((out.numpy() == np.arange(n) + 1).all())
    add_kernel[grid(n)](y, y, out, n)  # the same key: no tuning
    summary["ok_again"] = bool((out.numpy() == 2).all())
    summary["best"] = add_kernel.best_config.all_kwargs()
    summary["cache"] = len(add_kernel.cache)
    summary["timings"] = len(getattr(add_kernel, "configs_timings", {}) or {})
elif CASE == "reset":
    out.numpy()[:] = 5  # Triton zeroes a reset_to_zero argument after tuning; the launch adds x
    accumulate_kernel[grid(n)](x, out, n)
    summary["ok"] = bool((out.numpy() == np.arange(n)).all())
    summary["best"] = accumulate_kernel.best_config.all_kwargs()
elif CASE == "nested":
    nested()[grid(n)](x, out, n)
elif CASE == "none_argument":
    add_kernel[grid(n)](x, None, out, n)
elif CASE == "tensor_descriptor":
    from triton.tools.tensor_descriptor import TensorDescriptor

    autotuned()[grid(n)](TensorDescriptor(x, [n], [1], [64]), out, n)
elif CASE == "config_pre_hook":
    configs = [triton.Config({"BLOCK": 64}, pre_hook=lambda args: None), triton.Config({"BLOCK": 128})]
    autotuned(configs=configs)[grid(n)](x, out, n)
else:
    options = {
        "pre_hook": {"pre_hook": lambda args, reset_only=False: None},
        "post_hook": {"post_hook": lambda args, exception: None},
        "do_bench": {"do_bench": lambda fn, quantiles: [1.0, 1.0, 1.0]},
    }[CASE]
    autotuned(**options)[grid(n)](x, out, n)
print("SUMMARY " + json.dumps(summary))
