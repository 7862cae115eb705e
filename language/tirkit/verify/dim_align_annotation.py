"""annotation/buffer-dim-align: a block's `buffer_dim_align` annotation (what
`storage_align` writes) that lowering cannot apply.  The value is a list of
`[buffer_index, axis, factor, offset]`, one per aligned dimension, where `buffer_index`
picks one of the block's `T.writes` regions.  Malformed: an entry that is not four integers,
a buffer index outside the block's writes, an axis outside that buffer's dimensions, a
factor that is not positive, or an offset outside [0, factor) (TVM's `storage_align`
rejects each of these)."""
from __future__ import annotations

from ..diagnostics import error
from ..ir import expr as E
from . import register
from ._common import block_label, func_accesses

KEY = "buffer_dim_align"


def _list(v):
    if isinstance(v, E.ArrayExpr):
        return list(v.elements)
    return list(v) if isinstance(v, (list, tuple)) else None


def _int(x):
    x = getattr(x, "value", x)
    return x if isinstance(x, int) and not isinstance(x, bool) else None


def _problem(entry, writes):
    items = _list(entry)
    if items is None or len(items) != 4 or any(_int(x) is None for x in items):
        return f"entry {entry!r} is not [buffer_index, axis, factor, offset]"
    index, axis, factor, offset = (_int(x) for x in items)
    if not 0 <= index < len(writes):
        return (f"buffer index {index} is outside the block's {len(writes)} written "
                f"buffer{'s' if len(writes) != 1 else ''}")
    buf = writes[index]
    if not 0 <= axis < len(buf.shape):
        return f"axis {axis} is outside the {len(buf.shape)} dimensions of `{buf.name}`"
    if factor <= 0:
        return f"factor {factor} of `{buf.name}` axis {axis} is not positive"
    if not 0 <= offset < factor:
        return f"offset {offset} of `{buf.name}` axis {axis} is outside [0, {factor})"
    return None


@register("annotation/buffer-dim-align", fast=True)
def check_dim_align(func, ctx):
    if ctx.incomplete(func):
        return []         # a statement or buffer may be missing from the IR
    fa = func_accesses(func, ctx)
    out = []
    for r in fa.realizes:
        b = r.block
        ann = dict(b.annotations)
        if KEY not in ann:
            continue
        span = b.name_span or b.span
        if span is None:
            continue
        entries = _list(ann[KEY])
        if entries is None:
            out.append(error("annotation/buffer-dim-align",
                             f"{block_label(b)}: `{KEY}` is not a list of [buffer_index, axis, "
                             f"factor, offset]", span))
            continue
        if b.writes is not None:
            writes = [w.buffer for w in b.writes]
        else:       # not declared: the buffers the body stores to, as TVM infers them
            writes = []
            for a in fa.accesses:
                if a.is_write and a.blocks and a.blocks[-1] is r and a.buffer not in writes:
                    writes.append(a.buffer)
        for e in entries:
            why = _problem(e, writes)
            if why is not None:
                out.append(error("annotation/buffer-dim-align",
                                 f"{block_label(b)}: `{KEY}` {why}", span))
                break
    return out
