"""Kernel Tuner's NVMLObserver: it observes power, energy, clocks and temperatures through NVML. tune_kernel honours
"nvml_energy" and "nvml_power" with Tilescope's energy measurement (tune --metrics energy: joules per launch and mean
power from NVML's energy counter, over a loop of about a second a config), and "core_freq", "mem_freq" and
"temperature" with the GPU state NVML reads right after each config's samples (tune --metrics gpu-state); it refuses
the other observables by name."""

from .observer import BenchmarkObserver


class nvml(BenchmarkObserver):
    def __init__(self, *args, **kwargs):
        self.args = args
        self.kwargs = kwargs

    def get_results(self):
        return {}


class NVMLObserver(BenchmarkObserver):
    # Observables Tilescope measures, and the metric of its results that holds each.
    TILESCOPE_METRICS = {
        "nvml_energy": "energy",
        "nvml_power": "power",
        "core_freq": "gpu.sm_clock_mhz",
        "mem_freq": "gpu.memory_clock_mhz",
        "temperature": "gpu.temperature_c",
    }

    def __init__(self, observables=None, *args, **kwargs):
        self.observables = list(observables or [])
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
