"""Compiling and timing kernels for the dataset: the llvmlite back end, median of repeats.

    m = Measurer(threads=2)
    m.seconds(func, module, reference=None)     # median seconds, or None when it fails

Time is the calling thread's CPU time (`time.thread_time`): a parallel loop runs one chunk
on the calling thread, so on a shared machine the figure is what the kernel takes when its
threads are not kept waiting, and co-running jobs add little noise.
"""
from __future__ import annotations

import time

import numpy as np


def host() -> str:
    """The machine class the measurements stand for: LLVM's CPU name and its feature set."""
    from ..codegen.runtime import cpu_count
    try:
        from ..codegen.llvm.engine import host_target
        t = host_target()
    except ImportError:                 # no llvmlite: the model still loads and predicts
        import platform
        return f"{platform.machine()}, {cpu_count()} threads"
    wide = "avx512f" if "+avx512f" in t["mattr"] else "avx2" if "+avx2" in t["mattr"] else "sse"
    return f"{t['mcpu']} ({wide}), {cpu_count()} threads"


class Measurer:
    def __init__(self, threads=2, repeat=5, min_seconds=0.02, seed=0):
        self.threads, self.repeat, self.min_seconds, self.seed = threads, repeat, min_seconds, seed

    def inputs(self, func):
        from ..codegen.cli import make_inputs
        return make_inputs(func, np.random.default_rng(self.seed))

    def run(self, func, module):
        """(kernel, outputs after one run on the seeded inputs)."""
        from ..codegen import build
        kernel = build(func, module)
        arrays = self.inputs(func)
        kernel(*arrays, threads=self.threads)
        return kernel, arrays

    def seconds(self, func, module, reference=None):
        """Median seconds; None when the outputs differ from `reference` (arrays)."""
        kernel, arrays = self.run(func, module)
        if reference is not None:
            from ..codegen.cli import compare
            for b, out, ref in zip(kernel.buffers, arrays, reference):
                if not compare(out, ref, b.dtype)[0]:
                    return None
        return self.time(kernel, arrays)

    def time(self, kernel, arrays):
        """Median seconds of a built kernel on its arrays."""
        return kernel.time(*arrays, threads=self.threads, repeat=self.repeat,
                           min_seconds=self.min_seconds, clock=time.thread_time)
