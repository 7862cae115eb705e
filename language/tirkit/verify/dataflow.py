"""dataflow/uncovered-read: a block reads a region of an allocated buffer that no earlier
producer in its scope writes (it would read garbage).  Function parameters count as
written; buffers filled through intrinsics (passed whole or by pointer) are not checked.
Regions are bounding boxes relaxed over every loop.  Reported on the load, with the
producer as related location.  Shared buffers inside a kernel are the business of
thread/cooperative-coverage."""
from __future__ import annotations

from ..diagnostics import error
from . import register
from ._coverage import uncovered


def _block(a):
    return a.blocks[-1].block.name_hint if a.blocks and a.blocks[-1].block.iter_vars \
        else None


def related(prods):
    out = []
    for p in prods[-2:]:
        b = p.blocks[-1].block if p.blocks else None
        span = (b.name_span if b is not None and b.iter_vars else None) or p.span
        if span is not None:
            who = f"block '{b.name_hint}'" if b is not None and b.iter_vars else "a store"
            out.append((span, f"{who} writes `{p.buffer.name}` here"))
    return out


@register("dataflow/uncovered-read")
def check_uncovered(func, ctx):
    out = []
    seen = set()
    for a, prods, coop, msg in uncovered(func, ctx):
        if coop or a.span is None or id(a.span) in seen:
            continue
        seen.add(id(a.span))
        name = _block(a)
        where = f"block '{name}' " if name else ""
        out.append(error("dataflow/uncovered-read", f"{where}{msg}", a.span, related(prods)))
    return out
