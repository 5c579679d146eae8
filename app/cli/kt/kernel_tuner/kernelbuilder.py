"""Kernel Tuner's PythonKernel: a kernel compiled for one config and called from Python as a
function. Each call runs the kernel once through run_kernel (a run of `tilescope-cli tune` for the
one config, so a call costs a compile from the cache and a launch, not a launch alone), with the
arguments Kernel Tuner's object would hold on the GPU: an argument flagged as an input is the
call's, any other what the previous call left (at first the one given to the constructor)."""

import numpy as np

from ._problem import device_kind
from ._session import Cli
from ._space import Refusal
from .interface import run_kernel


class PythonKernel:
    def __init__(self, kernel_name, kernel_string, problem_size, arguments, params, inputs=None, outputs=None,
                 device=0, platform=0, block_size_names=None, grid_div_x=None, grid_div_y=None, grid_div_z=None,
                 verbose=True, lang=None, **options):
        cli = Cli()
        backend = cli.backend
        if cli.kind(backend) != "cuda":
            raise Refusal(
                f"Tilescope cannot build a PythonKernel on the backend '{backend}': no kernel runs there, so a "
                "call has no output to return (run the script with --backend cuda)"
            )
        self._run = dict(kernel_name=kernel_name, kernel_source=kernel_string, problem_size=problem_size,
                         params=params, grid_div_x=grid_div_x, grid_div_y=grid_div_y, grid_div_z=grid_div_z,
                         lang=lang, device=device, platform=platform, block_size_names=block_size_names,
                         quiet=not verbose, **options)
        self.inputs = inputs if inputs else [True for _ in arguments]
        self.outputs = outputs if outputs else [True for _ in arguments]
        # What Kernel Tuner's object holds on the GPU between calls (CuPy and PyTorch arrays: the
        # arrays themselves, which each call's output is written back into, as Kernel Tuner's runs
        # write into them).
        self._held = [np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in arguments]

    def run_kernel(self, args):
        """Runs the kernel on the arguments flagged as inputs (the others as the last run left
        them) and returns the array arguments flagged as outputs, in a list."""
        given = [a if self.inputs[i] else self._held[i] for i, a in enumerate(args)]
        after = run_kernel(arguments=given, **self._run)
        self._held = [g if device_kind(g) else a for g, a in zip(given, after)]
        return [np.array(a, copy=True) for i, a in enumerate(after)
                if self.outputs[i] and (isinstance(args[i], np.ndarray) or device_kind(args[i]))]

    def __call__(self, *args):
        return self.run_kernel(args)
