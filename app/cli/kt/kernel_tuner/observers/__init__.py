"""Kernel Tuner's observer classes. Tilescope honours RegisterObserver (registers per thread, as
"num_regs"); tune_kernel refuses the others by name: it measures time its own way."""

from .observer import BenchmarkObserver, ContinuousObserver, IterationObserver, OutputObserver, PrologueObserver

__all__ = ["BenchmarkObserver", "ContinuousObserver", "IterationObserver", "OutputObserver", "PrologueObserver"]
