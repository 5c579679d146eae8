"""Tilescope standing in for @triton.autotune's benchmarking: `tilescope-cli triton SCRIPT.py`
runs a script unchanged (`python -m tilescope_triton SCRIPT.py [ARGS...]`), each autotuned
kernel's first call for a new key tuned by Tilescope and the script going on with the winner.
The manual page "Triton scripts" says what maps to what and what is refused."""

from ._common import Refusal as TilescopeRefusal
from ._common import TuneFailed as TilescopeTuneFailed

__all__ = ["TilescopeRefusal", "TilescopeTuneFailed"]
