"""The base classes of Kernel Tuner's observers, so that scripts that define or import observers
load; tune_kernel refuses an observer it cannot honour, naming it."""

from abc import ABC, abstractmethod


class BenchmarkObserver(ABC):
    def register_device(self, dev):
        self.dev = dev

    def register_configuration(self, params):
        pass

    def before_start(self):
        pass

    def after_start(self):
        pass

    def during(self):
        pass

    def after_finish(self):
        pass

    @abstractmethod
    def get_results(self):
        pass


class IterationObserver(BenchmarkObserver):
    pass


class ContinuousObserver(BenchmarkObserver):
    def __init__(self, name, observables, parent, continuous_duration=1):
        self.name = name
        self.observables = observables
        self.parent = parent
        self.continuous_duration = continuous_duration

    def get_results(self):
        return {}


class OutputObserver(BenchmarkObserver):
    def process_output(self, answer, output):
        pass


class PrologueObserver(BenchmarkObserver):
    def before_start(self):
        pass

    def after_finish(self):
        pass
