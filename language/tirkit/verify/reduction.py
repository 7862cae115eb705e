"""loop-nest/reduction-on-parallel: a reduction iterator fed by a loop whose iterations run
at the same time without synchronisation (parallel, vectorized, blockIdx.*, vthread) races
on the accumulator.  A reduction across threadIdx.* is legal: TVM lowers it to a
cross-thread reduction."""
from __future__ import annotations

from ..diagnostics import error
from . import register
from ._common import binding_scope, block_label, func_accesses


def _racy(lp):
    if lp.kind in ("parallel", "vectorized"):
        return lp.kind
    tag = lp.thread_tag or ""
    if lp.kind == "thread_binding" and (tag.startswith("blockIdx") or tag.startswith("vthread")):
        return f"bound to {tag}"
    return None


@register("loop-nest/reduction-on-parallel", fast=True)
def check_reduction(func, ctx):
    fa = func_accesses(func, ctx)
    out = []
    for r in fa.realizes:
        b = r.block
        if not any(iv.kind in ("R", "C") for iv in b.iter_vars):
            continue
        _, loops, _ = binding_scope(fa, r)
        by_var = {lp.var: lp for lp in loops}
        from ..arith import Analyzer
        an = Analyzer()
        for iv, v in zip(b.iter_vars, r.iter_values):
            if iv.kind not in ("R", "C") or iv.span is None:
                continue
            for var in an.to_aff(v).all_vars():
                lp = by_var.get(var)
                why = _racy(lp) if lp is not None else None
                if why:
                    rel = [(lp.span, f"loop `{lp.var.name}` is {why} here")] if lp.span else []
                    out.append(error(
                        "loop-nest/reduction-on-parallel",
                        f"{block_label(b)}: reduction iterator `{iv.var.name}` is fed by "
                        f"loop `{lp.var.name}`, which is {why}: its iterations would update "
                        f"the accumulator at the same time", iv.span, rel))
                    break
    return out
