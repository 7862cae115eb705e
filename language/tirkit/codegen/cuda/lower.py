"""The lowering pipeline for CUDA: the shared pipeline (passes/__init__.py) with two GPU steps,
`place_scoped_buffers` before region compaction and `insert_syncs` at the end."""
from __future__ import annotations

from ..passes import PIPELINE, LoweredFunc, signature
from ..passes.constants import collect_constants
from ..passes.control import check_control_flow, return_dtype
from .scopes import place_scoped_buffers
from .sync import insert_syncs


def _gpu_pipeline():
    out = []
    for name, step in PIPELINE:
        if name == "compact_regions":
            out.append(("place_scoped_buffers", place_scoped_buffers))
        out.append((name, step))
    out.append(("insert_syncs", insert_syncs))
    return tuple(out)


CUDA_PIPELINE = _gpu_pipeline()


def lower_gpu(func, module=None, trace=None, skip=()) -> LoweredFunc:
    """func through CUDA_PIPELINE (steps named in `skip` left out: a test plants a missing
    barrier with skip=("insert_syncs",))."""
    check_control_flow(func)
    buffers, scalars, sources = signature(func)
    body = func.body
    for name, step in CUDA_PIPELINE:
        if name in skip:
            continue
        body = step(body)
        if trace is not None:
            trace.append((name, body))
    consts = collect_constants(body, module.constants if module is not None else None)
    return LoweredFunc(func.name, buffers, scalars, sources, body, consts, return_dtype(func))
