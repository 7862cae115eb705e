"""The lowering pipeline for CUDA: the shared pipeline (passes/__init__.py) with three GPU
steps: `launch_threads_to_loops` first, `place_scoped_buffers` before region compaction and
`insert_syncs` at the end."""
from __future__ import annotations

from ...ir import expr as E
from ...ir import stmt as S
from ..passes import PIPELINE, LoweredFunc, signature
from ..passes.constants import collect_constants
from ..passes.rewrite import transform
from ..passes.control import check_control_flow, return_dtype
from .scopes import place_scoped_buffers
from .sync import insert_syncs


def launch_threads_to_loops(body):
    """`T.launch_thread(tag, n)` (an AttrStmt thread_extent / virtual_thread on an IterVar)
    is the thread-bound loop `for v in T.thread_binding(n, thread=tag)` over the rest."""
    def fn(x):
        if isinstance(x, S.AttrStmt) and x.attr_key in ("thread_extent", "virtual_thread") \
                and isinstance(x.node, S.IterVar) and x.node.thread_tag:
            v = x.node.var
            return S.For(v, E.IntImm(v.dtype, 0), x.value, "thread_binding", x.body,
                         x.node.thread_tag, span=x.span)
        return None
    return transform(body, fn)


def _gpu_pipeline():
    out = [("launch_threads_to_loops", launch_threads_to_loops)]
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
