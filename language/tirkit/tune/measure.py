"""Builder and measurement: candidates compiled to object code here, timed by a runner.

    built = build_candidate(func, module)          # Built: the object code and its signature
    task = MeasureTask(key, reference, built, seed=0, threads=1)
    result = measure(task)                         # run anywhere the task was shipped

`measure` is what every runner calls (in a pool process, in a Ray worker): it loads the
object code, runs the reference (the untuned kernel, built once per workload and process)
and the candidate on the same random inputs (seeded, never zero), compares every output
(exact for integers, relative error for floats, as `tirkit run --check`) and times the
candidate: median seconds per call, in CPU time on one thread (a busy machine only makes a
wall-clock run slower), wall time on more, on `placements` copies of the inputs and the
median of those: where arrays sit in memory decides how a kernel's rows share the cache
sets (one 1024³ GEMM kernel ran 1.65x apart between two placements), and a kernel picked
for one lucky placement is slow for the user.  A candidate with a wrong result is never timed.
A candidate for a CUDA target travels as its CUDA C: the runner compiles it for its GPU
(pycuda), checks it against the reference run on the CPU and times it with CUDA events.
"""
from __future__ import annotations

import dataclasses
import os
import time

from ..lru import LRU

_REFERENCES = LRU(4)        # workload key -> (inputs, reference outputs) in this process


@dataclasses.dataclass
class Built:
    """A compiled kernel that travels: the function (for its signature) and object code."""
    func: object                 # the PrimFunc
    obj: bytes                   # object code; for a GPU candidate its CUDA C
    entry: str
    seconds: float = 0.0         # compile time
    module: object = None        # a GPU candidate's module (compiled where it is measured)


@dataclasses.dataclass
class MeasureTask:
    key: str                     # the workload (structural hash of the untuned function)
    reference: Built
    candidate: Built
    seed: int = 0
    threads: int = 1
    repeat: int = 5
    min_seconds: float = 0.05
    index: int = 0               # the candidate's place in its batch
    placements: int = 3          # copies of the inputs, each timed (the median is the result)


@dataclasses.dataclass
class MeasureResult:
    index: int
    seconds: float | None        # None: failed (error says why)
    error: str | None = None
    pid: int = 0                 # the process that measured it


def build_candidate(func, module=None, target=None) -> Built:
    """Compile a function for this CPU, or emit its CUDA C for a CUDA target (compiled by
    the runner, on its GPU); raises TirkitError for what the back end refuses."""
    from .. import target as targets
    from ..codegen import compile_native
    t0 = time.perf_counter()
    tgt = targets.get(target) if target is not None else None
    if tgt is not None and tgt.is_gpu:
        from ..codegen.cuda import emit_cuda
        src = emit_cuda(func, module)
        return Built(func, src.code.encode(), "cuda", time.perf_counter() - t0, module)
    obj, entry, _ = compile_native(func, module)
    return Built(func, obj, entry, time.perf_counter() - t0)


def load(built: Built):
    """The callable kernel of a Built (codegen's Kernel, loaded into this process)."""
    from ..codegen.llvm import engine
    from ..codegen.passes import signature
    from ..codegen.passes.control import return_dtype
    from ..codegen.runtime import Kernel
    buffers, scalars, sources = signature(built.func)
    return Kernel(built.func.name, buffers, scalars, sources, engine.Loaded(built.obj),
                  built.entry, built.seconds, False, None, None, return_dtype(built.func))


def _reference(task: MeasureTask):
    hit = _REFERENCES.get((task.key, task.seed))
    if hit is not None:
        return hit
    import numpy as np
    from ..codegen.inputs import aligned_copy, make_inputs, make_scalars
    rng = np.random.default_rng(task.seed)
    func = task.reference.func
    arrays = make_inputs(func, rng)
    scalars = make_scalars(func, rng)
    out = [aligned_copy(a) for a in arrays]
    load(task.reference)(*out, scalars=scalars, threads=task.threads)
    hit = (arrays, scalars, out)
    _REFERENCES.put((task.key, task.seed), hit)
    return hit


def measure(task: MeasureTask) -> MeasureResult:
    """Check and time one candidate; never raises (a failure is the result's error)."""
    pid = os.getpid()
    try:
        arrays, scalars, ref = _reference(task)
        if task.candidate.entry == "cuda":
            return _measure_cuda(task, arrays, scalars, ref, pid)
        from ..codegen.inputs import aligned_copy
        kernel = load(task.candidate)
        mine = [aligned_copy(a) for a in arrays]
        kernel(*mine, scalars=scalars, threads=task.threads)
        wrong = _mismatch(kernel, mine, ref)
        if wrong:
            return MeasureResult(task.index, None, wrong, pid)
        clock = time.thread_time if task.threads == 1 else None
        secs, held = [], [mine]
        for p in range(max(1, task.placements)):
            if p:                               # kept alive: the next copy lands elsewhere
                held.append([aligned_copy(a) for a in arrays])
            secs.append(kernel.time(*held[-1], scalars=scalars, threads=task.threads,
                                    repeat=task.repeat, min_seconds=task.min_seconds,
                                    clock=clock))
        return MeasureResult(task.index, sorted(secs)[len(secs) // 2], None, pid)
    except Exception as e:                      # a failing candidate is a result, not a crash
        return MeasureResult(task.index, None, f"{type(e).__name__}: {e}", pid)


def _mismatch(kernel, got, ref) -> str | None:
    """Why a candidate's outputs differ from the reference's, or None when they agree."""
    from ..codegen.cli import compare
    for b, mine, want in zip(kernel.buffers, got, ref):
        ok, err = compare(mine, want, b.dtype)
        if not ok:
            return f"wrong result in '{b.name}' (error {err:.3g})"
    return None


def _measure_cuda(task, arrays, scalars, ref, pid) -> MeasureResult:
    """A GPU candidate compiled and run on this process's GPU, checked, timed (CUDA
    events, median of the launches)."""
    from ..codegen.cuda.runtime import available, build_cuda
    why = available()
    if why is not None:
        return MeasureResult(task.index, None, f"no GPU to measure on: {why}", pid)
    kernel = build_cuda(task.candidate.func, task.candidate.module)
    mine = [a.copy() for a in arrays]
    kernel(*mine, scalars=scalars)
    wrong = _mismatch(kernel, mine, ref)
    if wrong:
        return MeasureResult(task.index, None, wrong, pid)
    sec = kernel.time(*mine, scalars=scalars, repeat=max(task.repeat, 20))
    return MeasureResult(task.index, sec, None, pid)


__all__ = ["Built", "MeasureTask", "MeasureResult", "build_candidate", "load", "measure"]
