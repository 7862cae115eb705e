"""loop-nest/domain-mismatch: a binding must stay inside its iterator's declared domain.

Error when the binding provably leaves the domain (`T.axis.spatial(128, i)` with `i` up to
255): the block would run on iterator values it declares impossible.  Warning when a
reduction iterator provably covers only part of its domain (legal, but a partial sum).
A spatial iterator covering part of its domain is common and legal (after `compute_at`
a producer computes only what its consumer needs) and is not reported.  The predicate (`T.where`) is respected.
A binding through a loop whose extent depends on another loop (`range(T.min(31, 126 - i * 32)
+ 1)`) is not checked: the interval bound is not reached there.
"""
from __future__ import annotations

from ..arith.affine import Atom
from ..diagnostics import error, warning
from . import register
from ._common import binding_scope, block_label, func_accesses, iter_map_of, loose_vars, text


def _exact(aff):
    return all(not isinstance(k, Atom) or k.kind in ("fdiv", "fmod") for k in aff.terms)


@register("loop-nest/domain", codes=("loop-nest/domain-mismatch",), fast=True)
def check_domain(func, ctx):
    fa = func_accesses(func, ctx)
    out = []
    for r in fa.realizes:
        b = r.block
        if not b.iter_vars or len(r.iter_values) != len(b.iter_vars):
            continue
        m, an = iter_map_of(fa, r, ctx)
        bad = {f.index for f in m.failures if f.code == "non-affine"}
        dependent = {f.index for f in m.failures}
        loose = loose_vars(binding_scope(fa, r)[1])
        for k, (iv, v) in enumerate(zip(b.iter_vars, r.iter_values)):
            if k in bad or iv.span is None:
                continue
            aff = an.to_aff(v)
            if not _exact(aff) or loose & set(aff.all_vars()):
                continue
            lo, hi = an.bound(aff)
            dlo = an.to_aff(iv.dom.min)
            dhi = dlo + an.to_aff(iv.dom.extent) - 1
            dom = f"[{text(iv.dom.min)}, {text(iv.dom.min) + ' + ' if not _zero(iv.dom.min) else ''}" \
                  f"{text(iv.dom.extent)})"
            if hi is not None and an.prove_nonneg(hi - dhi - 1):
                out.append(error("loop-nest/domain-mismatch",
                                 f"{block_label(b)}: `{iv.var.name}` = `{text(v)}` reaches "
                                 f"{hi!r}, outside its domain {dom}", iv.span))
            elif lo is not None and an.prove_neg(lo - dlo):
                out.append(error("loop-nest/domain-mismatch",
                                 f"{block_label(b)}: `{iv.var.name}` = `{text(v)}` goes "
                                 f"down to {lo!r}, outside its domain {dom}", iv.span))
            elif iv.kind == "R" and k not in dependent and aff.all_vars() and ((hi is not None and an.prove_neg(hi - dhi)) or
                                     (lo is not None and an.prove_nonneg(lo - dlo - 1))):
                out.append(warning("loop-nest/domain-mismatch",
                                   f"{block_label(b)}: reduction `{iv.var.name}` = "
                                   f"`{text(v)}` covers only [{lo!r}, {hi!r}] of its domain "
                                   f"{dom}: a partial reduction", iv.span))
    return out


def _zero(e):
    return getattr(e, "value", None) == 0
