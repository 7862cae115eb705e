"""Running generated CUDA on a GPU through pycuda (the optional `tirkit[cuda]` extra).

    kernel = build_cuda(func, module)      # nvcc through pycuda.compiler.SourceModule
    kernel(A, B, C)                        # numpy arrays in, outputs copied back in place
    kernel.time(A, B, C)                   # median seconds per launch (CUDA events)

A second build of the same structure (structural hash, code generator version and the
device's compute capability) reuses the compiled module.  Launch extents must be constants.
"""
from __future__ import annotations

import threading
import time

import numpy as np

from ..errors import ARGUMENT, UNSUPPORTED, fail
from ...ir.hash import structural_hash

_LOCK = threading.Lock()
_MODULES: dict = {}           # key -> pycuda module (bounded by the kernels a process builds)


def available() -> str | None:
    """None when a GPU can run kernels here; else why not."""
    try:
        import pycuda.driver as drv
        drv.init()
        if drv.Device.count() == 0:
            return "no CUDA device"
    except Exception as e:          # ImportError, or a driver without a device
        return f"pycuda cannot run kernels here ({type(e).__name__}: {e})"
    return None


def _context():
    import pycuda.autoinit  # noqa: F401  (one context for the process)
    import pycuda.driver as drv
    return drv


def current_device():
    """The device of the process's context."""
    return _context().Context.get_device()


class CudaKernel:
    def __init__(self, func, source, module, key, compile_seconds, cached):
        self.name, self.source, self.module = func.name, source, module
        self.key, self.compile_seconds, self.from_cache = key, compile_seconds, cached
        self.functions = [module.get_function(k.name) for k in source.kernels]
        self.buffers = [func.buffer_of(p) for p in func.params if func.buffer_of(p) is not None]
        self.scalar_dtypes = [p.dtype for p in func.params if func.buffer_of(p) is None]
        for k in source.kernels:
            if not all(isinstance(x, int) for x in k.grid + k.block):
                fail(UNSUPPORTED, f"kernel '{k.name}' has symbolic launch extents")

    def _args(self, arrays, scalars):
        drv = _context()
        if len(arrays) != len(self.buffers):
            fail(ARGUMENT, f"'{self.name}' takes {len(self.buffers)} arrays, got {len(arrays)}")
        dev = [drv.mem_alloc(max(1, a.nbytes)) for a in arrays]
        for d, a in zip(dev, arrays):
            drv.memcpy_htod(d, np.ascontiguousarray(a))
        from ...ir.constants import numpy_dtype
        vals = [numpy_dtype(t).type(v) for t, v in zip(self.scalar_dtypes, scalars)]
        return dev, vals

    def _launch(self, dev, vals):
        for fn, k in zip(self.functions, self.source.kernels):
            fn(*dev, *vals, grid=k.grid[:3], block=k.block[:3])

    def __call__(self, *arrays, scalars=()):
        drv = _context()
        dev, vals = self._args(arrays, scalars)
        self._launch(dev, vals)
        drv.Context.synchronize()
        for d, a in zip(dev, arrays):
            drv.memcpy_dtoh(a, d)
        return arrays

    def time(self, *arrays, scalars=(), repeat=20, warmup=3):
        """Median seconds per launch (all of the function's kernels) over `repeat` runs."""
        drv = _context()
        dev, vals = self._args(arrays, scalars)
        for _ in range(warmup):
            self._launch(dev, vals)
        times = []
        for _ in range(repeat):
            start, end = drv.Event(), drv.Event()
            start.record()
            self._launch(dev, vals)
            end.record()
            end.synchronize()
            times.append(start.time_till(end) / 1e3)
        times.sort()
        return times[len(times) // 2]


def build_cuda(func, module=None, arch=None, options=()):
    """func compiled for this process's GPU (pycuda.compiler.SourceModule, i.e. nvcc)."""
    from . import emit_cuda
    from .. import version
    drv = _context()
    from pycuda.compiler import SourceModule
    if arch is None:
        major, minor = drv.Context.get_device().compute_capability()
        arch = f"sm_{major}{minor}"
    key = structural_hash(func, module.constants if module is not None else None,
                          f"{version()}|cuda|{arch}|{' '.join(options)}")
    src = emit_cuda(func, module)
    t0 = time.perf_counter()
    with _LOCK:
        mod = _MODULES.get(key)
        cached = mod is not None
        if mod is None:
            mod = _MODULES[key] = SourceModule(src.code, no_extern_c=True, arch=arch,
                                               options=list(options))
    return CudaKernel(func, src, mod, key, time.perf_counter() - t0, cached)
