"""Tilescope's stand-in for Kernel Tuner (1.5): scripts written for Kernel Tuner run unchanged
under `tilescope-cli kt SCRIPT.py`, their tune_kernel and run_kernel carried out by Tilescope.
The manual page "Kernel Tuner scripts" says what maps to what and what is refused."""

import sys as _sys

try:
    import numpy as _numpy  # noqa: F401
except ImportError:
    raise ImportError(
        f"Tilescope's kernel_tuner needs NumPy in the Python that runs the script ({_sys.executable}): install "
        "it (Debian: python3-numpy; pip install numpy), or name another interpreter with tilescope-cli kt --python"
    ) from None

from kernel_tuner._space import Refusal as TilescopeRefusal
from kernel_tuner.interface import run_kernel, tune_cache, tune_kernel, tune_kernel_T1
from kernel_tuner import strategies  # noqa: F401 (kernel_tuner.strategies.minimize, as Kernel Tuner has it)

__version__ = "1.5.0"

__all__ = ["TilescopeRefusal", "run_kernel", "tune_kernel", "tune_cache", "tune_kernel_T1", "__version__"]


def __getattr__(name):
    if name in ("store_results", "create_device_targets"):
        raise AttributeError(
            f"Tilescope cannot provide kernel_tuner.{name} (Kernel Tuner's integration module): export the "
            "tuned configs with `tilescope-cli export DB --format json` or `--format cpp` instead"
        )
    raise AttributeError(f"module 'kernel_tuner' has no attribute {name!r}")
