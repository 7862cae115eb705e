"""Compiling and timing kernels for the dataset: the llvmlite back end, median of repeats.

    m = Measurer(threads=2)
    m.seconds(func, module, reference=None)     # median seconds, or None when it fails

Time is the calling thread's CPU time (`time.thread_time`): a parallel loop runs one chunk
on the calling thread, which then spins until the other chunks are done (codegen/llvm/pool.py),
so the figure is the kernel's whole time while its thread runs, and the time a busy machine
keeps the calling thread waiting is left out.

`RUNTIME` names the way kernels are run and timed; a dataset record carries the one it was
timed with (`runtime`; records without it were timed with 1). 1: parallel loops launched
through a Python thread pool, each launch some 30-60 us of the calling thread's time, and the
caller's wait for the other chunks not counted; 2: the native pool, a launch under a
microsecond. Times of different runtimes are not comparable: `confirm` times a workload
holding records of another runtime again from scratch.
"""
from __future__ import annotations

import time

import numpy as np

RUNTIME = 2
THREADS = 2        # threads a kernel is timed on (the cycle estimate assumes as many)

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
    def __init__(self, threads=THREADS, repeat=5, min_seconds=0.02, seed=0):
        self.threads, self.repeat, self.min_seconds, self.seed = threads, repeat, min_seconds, seed

    def inputs(self, func):
        from ..codegen.inputs import make_inputs
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
