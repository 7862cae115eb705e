"""thread/inconsistent-extent: one thread tag bound with different extents in one kernel.

A kernel launches with one extent per thread tag; a second loop bound to the same tag with
another extent would run with the first one's (too many or too few threads for its body).
Reported on the later loop, with the first binding as related location."""
from __future__ import annotations

from ..arith import Analyzer
from ..diagnostics import error
from . import register
from ._common import func_accesses, kernels, text


@register("thread/inconsistent-extent", fast=True)
def check_thread_extent(func, ctx):
    fa = func_accesses(func, ctx)
    out = []
    an = Analyzer()
    for root, loops in kernels(fa).values():
        first = {}
        for lp in loops:
            tag = lp.thread_tag
            if tag == "env_thread":
                continue            # a launch whose tag the IR does not carry
            if tag not in first:
                first[tag] = lp
                continue
            f = first[tag]
            d = an.to_aff(lp.extent) - an.to_aff(f.extent)
            if d.is_const() and d.const == 0:
                continue
            if lp.span is None:
                continue
            out.append(error(
                "thread/inconsistent-extent",
                f"`{tag}` is bound with extent {text(lp.extent)} by loop `{lp.var.name}`, but "
                f"with extent {text(f.extent)} by loop `{f.var.name}` in the same kernel",
                lp.span, [(f.span, f"`{tag}` is bound with extent {text(f.extent)} here")]
                if f.span else []))
    return out
