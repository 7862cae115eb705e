"""dataflow/uncovered-read: a block reads a region of an allocated buffer that no earlier
producer in its scope writes (it would read garbage).  Function parameters count as
written; buffers filled through intrinsics (passed whole or by pointer) are not checked.
Regions are bounding boxes relaxed over every loop.  Reported on the load, with the
producer as related location.  A block that updates what it reads (`acc[vi] = acc[vi] +
...`) fills its own reads, except where it has no `T.init()` and nothing writes the buffer
before it: its first instance then reads garbage (an unguarded read; a forgotten init).
Shared buffers inside a kernel are the business of thread/cooperative-coverage."""
from __future__ import annotations

from ..diagnostics import error
from . import register
from ._common import block_label
from ._coverage import once_key, uncovered
from .bounds import out_of_bounds_spans


def _block(a):
    """How a message names the block of an access (None outside blocks with iterators)."""
    return block_label(a.blocks[-1].block) if a.blocks and a.blocks[-1].block.iter_vars \
        else None


def related(prods):
    out = []
    for p in prods[-2:]:
        b = p.blocks[-1].block if p.blocks else None
        span = (b.name_span if b is not None and b.iter_vars else None) or p.span
        if span is not None:
            who = block_label(b) if b is not None and b.iter_vars else "a store"
            out.append((span, f"{who} writes `{p.buffer.name}` here"))
    return out


@register("dataflow/uncovered-read")
def check_uncovered(func, ctx):
    out = []
    seen = set()
    oob = out_of_bounds_spans(func, ctx)
    for a, prods, coop, msg in uncovered(func, ctx):
        key = once_key(a)
        if coop or a.span is None or key in seen or \
                (a.span.line, a.span.column) in oob:
            continue
        seen.add(key)
        name = _block(a)
        where = f"{name} " if name else ""
        out.append(error("dataflow/uncovered-read", f"{where}{msg}", a.span, related(prods)))
    return out
