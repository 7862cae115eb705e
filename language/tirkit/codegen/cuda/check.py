"""A thread-bound kernel on the GPU (pycuda), checked against the thread interpreter on the
CPU: the elements the sampled thread blocks write must match (`tirkit run --target cuda
--check`, benchmarks/gpu_check.py)."""
from __future__ import annotations

import dataclasses
import time

import numpy as np


@dataclasses.dataclass
class GpuRun:
    kernel: object              # runtime.CudaKernel
    arrays: list                # the GPU's outputs (in place of the inputs)
    scalars: list
    ok: bool = True
    worst: float = 0.0          # the largest relative error (floats) or mismatch count
    checked: int = 0            # elements compared
    blocks_run: int = 0         # blocks the thread interpreter ran
    cpu_seconds: float = 0.0


def run_on_gpu(func, module, rng, sizes=None, check=True, blocks=2, reference=None):
    """Build func for this GPU and run it on random inputs; with `check`, compare with the
    thread interpreter (`blocks` per blockIdx dimension), or with `reference(*inputs) ->
    (expected output, its index)` when given (numpy, for kernels too large to interpret)."""
    from ..cli import compare
    from ..inputs import make_inputs, make_scalars, run_bounds
    from .runtime import build_cuda
    from .threads import run_threads
    arrays = make_inputs(func, rng, sizes)
    scalars = make_scalars(func, rng, sizes)
    found = run_bounds(func, scalars, sizes)
    if found:                   # a GPU write outside its buffer: stop before it runs
        from ...diagnostics import TirkitError
        raise TirkitError(found)
    inputs = [a.copy() for a in arrays]
    kernel = build_cuda(func, module)
    kernel(*arrays, scalars=scalars)
    out = GpuRun(kernel, arrays, scalars)
    if not check:
        return out
    t0 = time.perf_counter()
    if reference is not None:
        want, i = reference(*[a.copy() for a in inputs])
        b = kernel.buffers[i]
        out.ok, out.worst = compare(arrays[i], np.asarray(want).astype(arrays[i].dtype),
                                    b.dtype)
        out.checked = arrays[i].size
    else:
        it = run_threads(func, inputs, scalars, module=module, blocks=blocks)
        out.blocks_run = it.blocks_run
        for b, got, want in zip(kernel.buffers, arrays, inputs):
            mask = it.written_mask(want)
            if mask is None or not mask.any():
                continue
            good, err = compare(got[mask], want[mask], b.dtype)
            out.ok, out.worst = out.ok and good, max(out.worst, err)
            out.checked += int(mask.sum())
    out.cpu_seconds = time.perf_counter() - t0
    return out


def device_peak(dtype: str) -> tuple[float, str]:
    """(peak ops/s for dtype, label) of this device's architecture in the target table."""
    from ... import target as targets
    from .device import device_attributes
    found = device_attributes()
    arch = f"cuda-sm{found[1][0]}{found[1][1]}" if found else targets.DEFAULT_CUDA
    peaks = targets.PEAKS.get(arch) or targets.PEAKS[targets.DEFAULT_CUDA]
    return peaks.get(dtype, peaks["default"]), peaks["label"]
