"""The lowering pipeline for CUDA: the shared pipeline (passes/__init__.py) with the GPU
steps: `launch_threads_to_loops` first, then the lowering of cross-thread reductions
(crossthread.py, allreduce.py), `place_scoped_buffers` before region compaction,
`inject_virtual_threads` after flattening, and `insert_syncs` at the end."""
from __future__ import annotations

from ...ir import expr as E
from ...ir import stmt as S
from ..passes import PIPELINE, LoweredFunc, check_regions, signature
from ..handles import with_param_buffers
from ..passes.attrs import attr_statements
from ..passes.constants import collect_constants
from ..passes.rewrite import transform
from ..passes.control import check_control_flow, return_dtype
from .allreduce import lower_thread_allreduce
from .crossthread import lower_cross_thread_reductions
from .scopes import place_scoped_buffers
from .sync import insert_syncs
from .vthreads import inject_virtual_threads


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


# `T.ptx.<op>.rn.f32(dst, a, b)`: the float32 operation, rounded to nearest (IEEE's default);
# `T.ptx.max.f32` / `min.f32` as T.max / T.min
PTX_ARITH = {"ptx.add.rn.f32": E.Add, "ptx.sub.rn.f32": E.Sub, "ptx.mul.rn.f32": E.Mul,
             "ptx.max.f32": E.Max, "ptx.min.f32": E.Min}


def ptx_arith_to_stores(body):
    """`T.ptx.add.rn.f32(C[i], A[i], B[i])` is the store `C[i] = A[i] + B[i]`."""
    def fn(x):
        if isinstance(x, S.Evaluate) and isinstance(x.value, E.Call) and \
                x.value.op in PTX_ARITH and isinstance(x.value.args[0], E.BufferLoad):
            dst, a, b = x.value.args
            return S.BufferStore(dst.buffer, PTX_ARITH[x.value.op](a, b, "float32"),
                                 dst.indices, span=x.span)
        return None
    return transform(body, fn)


def _gpu_pipeline():
    out = [("attr_statements", attr_statements),
           ("launch_threads_to_loops", launch_threads_to_loops),
           ("ptx_arith_to_stores", ptx_arith_to_stores),
           ("lower_cross_thread_reductions", lower_cross_thread_reductions),
           ("lower_thread_allreduce", lower_thread_allreduce)]
    for name, step in PIPELINE:
        if name == "attr_statements":           # the first step above
            continue
        if name == "compact_regions":
            out.append(("place_scoped_buffers", place_scoped_buffers))
        out.append((name, step))
        if name == "flatten_buffers":
            out.append(("inject_virtual_threads", inject_virtual_threads))
    out.append(("insert_syncs", insert_syncs))
    return tuple(out)


CUDA_PIPELINE = _gpu_pipeline()


def lower_gpu(func, module=None, trace=None, skip=(), calls=True) -> LoweredFunc:
    """func through CUDA_PIPELINE (steps named in `skip` left out: a test plants a missing
    barrier with skip=("insert_syncs",)), and (`calls`) every function it calls, each
    lowered once, as its `callees` (device functions: source.py)."""
    from ..module_calls import lowered_callees
    func = with_param_buffers(func, module)
    check_control_flow(func)
    check_regions(func)
    buffers, scalars, sources = signature(func)
    body = func.body
    for name, step in CUDA_PIPELINE:
        if name in skip:
            continue
        body = step(body)
        if trace is not None:
            trace.append((name, body))
    consts = collect_constants(body, module.constants if module is not None else None)
    callees = lowered_callees(func, module, lambda g: lower_gpu(g, module, calls=False)) \
        if calls else ()
    return LoweredFunc(func.name, buffers, scalars, sources, body, consts, return_dtype(func),
                       tuple(func.buffer_of(p) is not None for p in func.params), callees)
