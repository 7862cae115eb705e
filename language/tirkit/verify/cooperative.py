"""thread/cooperative-coverage: a shared buffer filled by a thread group must cover what the
group reads.  Writes and reads are compared per thread block: threadIdx/vthread loops and
the loops below the common ancestor are relaxed, blockIdx and enclosing serial loops stay
fixed (so a tile loaded at step k is compared with the tile read at step k)."""
from __future__ import annotations

from ..diagnostics import error
from . import register
from ._coverage import once_key, uncovered
from .bounds import out_of_bounds_spans
from .dataflow import _block, related


@register("thread/cooperative-coverage")
def check_cooperative(func, ctx):
    out = []
    seen = set()
    oob = out_of_bounds_spans(func, ctx)
    for a, prods, coop, msg in uncovered(func, ctx):
        key = once_key(a)
        if not coop or a.span is None or key in seen or \
                (a.span.line, a.span.column) in oob:
            continue           # one diagnostic per root cause: per buffer and line
        seen.add(key)
        name = _block(a)
        where = f"{name} " if name else ""
        out.append(error("thread/cooperative-coverage",
                         f"{where}{msg} (per thread block)", a.span, related(prods)))
    return out
