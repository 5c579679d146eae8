"""Kernel Tuner's older module path of its NVML observer (now kernel_tuner.observers.nvml)."""

from kernel_tuner.observers.nvml import (  # noqa: F401
    NVMLObserver,
    get_idle_power,
    get_nvml_gr_clocks,
    get_nvml_mem_clocks,
    get_nvml_pwr_limits,
    nvml,
)
