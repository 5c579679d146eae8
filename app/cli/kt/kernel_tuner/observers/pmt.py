"""Kernel Tuner's PMTObserver: it observes power through the Power Measurement Toolkit. Scripts that build one load; tune_kernel
refuses it by name, since Tilescope measures time its own way and observes none of this."""

from .observer import BenchmarkObserver


class PMTObserver(BenchmarkObserver):
    def __init__(self, *args, **kwargs):
        self.args = args
        self.kwargs = kwargs

    def get_results(self):
        return {}


class PMTContinuousObserver(BenchmarkObserver):
    def __init__(self, *args, **kwargs):
        self.args = args
        self.kwargs = kwargs

    def get_results(self):
        return {}
