"""thread/launch-limit: threads per block, or a grid dimension, beyond the target's limits.

A CUDA launch with more than `max_threads_per_block` threads, more than the per-dimension
limit of threadIdx.x/y/z, or more blocks than blockIdx.x/y/z allows, fails at run time
(`invalid configuration argument`), as does one with no thread or no block in a dimension
(an extent below 1); a virtual thread binding (`vthread`, `cthread`) with no virtual thread
is reported too.  Only constant extents are checked."""
from __future__ import annotations

from ..diagnostics import error
from . import register
from ._common import const_int, func_accesses, kernels, target_for

_DIMS = {"x": 0, "y": 1, "z": 2}


@register("thread/launch-limit", fast=True)
def check_launch(func, ctx):
    fa = func_accesses(func, ctx)
    ks = kernels(fa)
    if not ks:
        return []
    t = target_for(func, ctx, fa)
    if not t.is_gpu:
        return []
    out = []
    for root, loops in ks.values():
        seen = {}
        total = 1
        for lp in loops:
            tag = lp.thread_tag or ""
            n = const_int(lp.extent)
            if n is None or tag in seen or lp.span is None:
                continue
            seen[tag] = lp
            kind, _, dim = tag.partition(".")
            d = _DIMS.get(dim)
            if kind in ("threadIdx", "blockIdx") and d is not None and n < 1:
                what = "thread" if kind == "threadIdx" else "block"
                out.append(error("thread/launch-limit",
                                 f"{tag} extent {n}: a launch needs at least one {what} in "
                                 f"each dimension", lp.span))
                continue
            if kind in ("vthread", "cthread") and n < 1:
                out.append(error("thread/launch-limit",
                                 f"{tag} extent {n}: a virtual thread binding needs at least "
                                 "one virtual thread", lp.span))
                continue
            if kind == "threadIdx" and d is not None:
                if n > t.max_thread_dims[d]:
                    out.append(error("thread/launch-limit",
                                     f"{tag} extent {n} exceeds the {t.name} limit of "
                                     f"{t.max_thread_dims[d]} for that dimension", lp.span))
                    total *= n
                    continue
                before = total
                total *= n
                if before <= t.max_threads_per_block < total:
                    rel = [(p.span, f"{p.thread_tag} = {const_int(p.extent)}")
                           for p in seen.values() if p is not lp and p.span is not None
                           and (p.thread_tag or "").startswith("threadIdx")]
                    out.append(error("thread/launch-limit",
                                     f"{total} threads per block exceed the {t.name} limit of "
                                     f"{t.max_threads_per_block}", lp.span, rel))
            elif kind == "blockIdx" and d is not None and n > t.max_grid_dims[d]:
                out.append(error("thread/launch-limit",
                                 f"{tag} extent {n} exceeds the {t.name} grid limit of "
                                 f"{t.max_grid_dims[d]}", lp.span))
    return out
