"""Kernel Tuner's NVMLObserver: it observes power, energy, clocks and temperatures through NVML. Scripts that build one load; tune_kernel
refuses it by name, since Tilescope measures time its own way and observes none of this."""

from .observer import BenchmarkObserver


class nvml(BenchmarkObserver):
    def __init__(self, *args, **kwargs):
        self.args = args
        self.kwargs = kwargs

    def get_results(self):
        return {}


class NVMLObserver(BenchmarkObserver):
    def __init__(self, *args, **kwargs):
        self.args = args
        self.kwargs = kwargs

    def get_results(self):
        return {}


def get_nvml_pwr_limits(*args, **kwargs):
    raise RuntimeError(
        "Tilescope cannot get_nvml_pwr_limits: it reads no NVML clocks or power limits, and tunes no nvml_ parameters"
    )


def get_nvml_gr_clocks(*args, **kwargs):
    raise RuntimeError(
        "Tilescope cannot get_nvml_gr_clocks: it reads no NVML clocks or power limits, and tunes no nvml_ parameters"
    )


def get_nvml_mem_clocks(*args, **kwargs):
    raise RuntimeError(
        "Tilescope cannot get_nvml_mem_clocks: it reads no NVML clocks or power limits, and tunes no nvml_ parameters"
    )


def get_idle_power(*args, **kwargs):
    raise RuntimeError(
        "Tilescope cannot get_idle_power: it reads no NVML clocks or power limits, and tunes no nvml_ parameters"
    )
