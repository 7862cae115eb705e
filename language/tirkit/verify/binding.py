"""loop-nest/non-affine, loop-nest/not-bijective: block bindings should be a quasi-affine,
one-to-one map of the loops between the block and its parent block (splits, fusions and
their combinations).  Reported on the binding, with the reason the iterator-map analysis
gives; the other binding involved is a related location.

Severities: `not-bijective` is an error (two block iterators driven by the same loop
digits, or a reduction iterator that visits a value twice: the block instances are not the
independent points its iterators declare).  `non-affine` is a warning: TVM runs such
blocks (they appear after `compute_at` with symbolic extents), but most schedule
primitives refuse them."""
from __future__ import annotations

from ..diagnostics import error, warning
from . import register
from ._common import block_label, func_accesses, iter_map_of


@register("loop-nest/binding", codes=("loop-nest/non-affine", "loop-nest/not-bijective"),
          fast=True)
def check_binding(func, ctx):
    fa = func_accesses(func, ctx)
    out = []
    for r in fa.realizes:
        b = r.block
        if not b.iter_vars or not r.iter_values:
            continue
        m, _ = iter_map_of(fa, r, ctx)
        for f in m.failures:
            iv = b.iter_vars[f.index]
            span = iv.span or b.name_span
            if span is None:
                continue
            related = []
            if f.other is not None:
                o = b.iter_vars[f.other]
                if o.span is not None and o.span != span:
                    related.append((o.span, f"`{o.var.name}` is bound here"))
            what = ("is not a quasi-affine map of the loops" if f.code == "non-affine"
                    else "makes the block iterators dependent")
            make = error if f.code == "not-bijective" else warning
            out.append(make(f"loop-nest/{f.code}",
                             f"{block_label(b)}: the binding of `{iv.var.name}` {what}: "
                             f"{f.reason}", span, related))
    return out
