"""Kernel Tuner's strategy modules (kernel_tuner.strategies.minimize, ...): a script may pass one as
tune_kernel's strategy instead of its name, as Kernel Tuner's vector_add_custom_strategy.py does.
Each module here stands for its name: tune_kernel runs Tilescope's strategy for that name, as for
strategy="minimize"; the module's tune is Kernel Tuner's search loop, which Tilescope does not run."""

import sys
import types

from kernel_tuner.interface import _KT_STRATEGIES as _NAMES  # Kernel Tuner 1.5's strategies


def _module(name):
    module = types.ModuleType(f"{__name__}.{name}", f"Kernel Tuner's {name} strategy, run by Tilescope by its name.")
    module._tilescope_strategy = name

    def tune(searchspace, runner, tuning_options):
        from kernel_tuner._space import Refusal

        raise Refusal(
            f"Tilescope cannot run kernel_tuner.strategies.{name}.tune itself: pass the module (or the name "
            f"'{name}') as tune_kernel's strategy, and Tilescope searches with its counterpart"
        )

    module.tune = tune
    return module


# Registered as submodules, so that `import kernel_tuner.strategies.minimize` and
# `from kernel_tuner.strategies import minimize` find them as well as the attribute does.
for _name in _NAMES:
    _m = _module(_name)
    globals()[_name] = _m
    sys.modules[_m.__name__] = _m

__all__ = list(_NAMES)
