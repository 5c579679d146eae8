"""python -m tilescope_triton SCRIPT.py [ARGS...]: runs the script as `python SCRIPT.py ARGS`
would, with Tilescope's autotuner in place of Triton's. Exit status: the script's; 2 when Python
has no triton module or Tilescope refuses what the script asks (the message says what)."""

import importlib.util
import os
import runpy
import sys
import traceback

_HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _hide_shim():
    """The script sees the Python path it would see without Tilescope (the shim's folder out)."""
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]
    parts = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    kept = [p for p in parts if os.path.abspath(p) != _HERE]
    if kept:
        os.environ["PYTHONPATH"] = os.pathsep.join(kept)
    else:
        os.environ.pop("PYTHONPATH", None)


def _error(message, status):
    sys.stdout.flush()
    print(f"error: {message}", file=sys.stderr, flush=True)
    return status


def _at(script):
    """"SCRIPT line N: " for the script's innermost line in the exception's traceback."""
    tb = sys.exc_info()[2]
    line = None
    while tb is not None:
        if os.path.abspath(tb.tb_frame.f_code.co_filename) == script:
            line = tb.tb_lineno
        tb = tb.tb_next
    return f"{os.path.basename(script)} line {line}: " if line else ""


def _script_traceback(script):
    """The exception's traceback from the script's first frame on (the runner's frames left out)."""
    kind, value, tb = sys.exc_info()
    first = tb
    while first is not None and os.path.abspath(first.tb_frame.f_code.co_filename) != script:
        first = first.tb_next
    traceback.print_exception(kind, value, first or tb)


def main(argv):
    if not argv:
        return _error("give the Python script to run: python -m tilescope_triton SCRIPT.py [ARGS...]", 2)
    script = os.path.abspath(argv[0])
    if not os.path.isfile(script):
        return _error(f"{argv[0]}: no such script", 2)
    _hide_shim()
    if importlib.util.find_spec("triton") is None:
        return _error(
            f"the Python that runs the script ({sys.executable}) has no triton module: install Triton into it "
            "(`python -m pip install triton`, with PyTorch for scripts that use it: `python -m pip install torch`), "
            "or name a Python that has it with tilescope-cli triton --python",
            2,
        )
    from tilescope_triton import _autotuner
    from tilescope_triton._common import Refusal, TuneFailed

    _autotuner.install()
    sys.argv = [argv[0]] + list(argv[1:])
    # The script's folder first on the path, where `python -m` put the current folder.
    if sys.path and os.path.abspath(sys.path[0] or os.curdir) == os.getcwd():
        sys.path[0] = os.path.dirname(script)
    else:
        sys.path.insert(0, os.path.dirname(script))
    try:
        runpy.run_path(script, run_name="__main__")
    except Refusal as e:
        return _error(_at(script) + str(e), 2)
    except TuneFailed as e:
        return _error(_at(script) + str(e), e.status if e.status not in (0, None) else 1)
    except SystemExit:
        raise
    except KeyboardInterrupt:
        return 130
    except BaseException:
        _script_traceback(script)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
