"""What the stand-in says: its refusals, a tune that failed, and notes on stderr."""

import sys


class Refusal(ValueError):
    """What Tilescope cannot honour in a script; the message starts with "Tilescope cannot" and
    names what (an argument of @triton.autotune, a kernel argument, a config). `tilescope-cli
    triton` ends the script with exit status 2 and the message."""


Refusal.__name__ = Refusal.__qualname__ = "TilescopeRefusal"
Refusal.__module__ = "tilescope_triton"


class TuneFailed(RuntimeError):
    """tilescope-cli ended with an error; the message is its own, `status` its exit status."""

    def __init__(self, message, status=1):
        super().__init__(message)
        self.status = status


TuneFailed.__name__ = TuneFailed.__qualname__ = "TilescopeTuneFailed"
TuneFailed.__module__ = "tilescope_triton"


def note(message):
    """A note for the person running the script, on stderr."""
    sys.stdout.flush()
    print(f"tilescope: {message}", file=sys.stderr, flush=True)
