"""signature/reads-mismatch, signature/writes-mismatch: a block's declared `T.reads` /
`T.writes` miss what its body accesses.

The body's regions are inferred as TVM would fill omitted signatures: in the block's own
iterators, relaxed over the loops and inner blocks below it, guards respected.  An access
is reported when no declared region of its buffer provably covers it and some point of the
iterator domain certainly falls outside (exact for affine indices); blocks without a
declaration are not checked.  The diagnostic sits on the first declared region.
"""
from __future__ import annotations

from ..analysis.regions import analyzer_for, block_regions
from ..arith import Analyzer
from ..arith.affine import Atom
from ..diagnostics import error
from . import register
from ._common import block_label, func_accesses, text


def _decl_ranges(an, region, env):
    out = []
    for rg in region.region:
        lo = an.to_aff(rg.min, env)
        ext = an.to_aff(rg.extent, env)
        out.append((lo, lo + ext - 1))
    return out


def _affine(x):
    return x is not None and not any(isinstance(k, Atom) and k.kind != "fdiv" for k in x.terms)


def _misses(an, acc, decl):
    """True when the access region certainly leaves the declared one in some dimension."""
    for (alo, ahi), (dlo, dhi) in zip(acc, decl):
        if alo is None or ahi is None:
            return False
        if not all(_affine(x) for x in (alo, ahi, dlo, dhi)):
            continue
        if an.can_be_neg(alo - dlo) or an.can_be_pos(ahi - dhi):
            return True
    return False


def _covers(an, acc, decl):
    for (alo, ahi), (dlo, dhi) in zip(acc, decl):
        if alo is None or ahi is None:
            return False
        if not (an.prove_nonneg(alo - dlo) and an.prove_nonneg(dhi - ahi)):
            return False
    return True


def _key(an, a, env):
    return (id(a.buffer), tuple(an.to_aff(i, env).key() for i in a.indices))


def _is_reduction(blk):
    return blk.init is not None or any(iv.kind == "R" for iv in blk.iter_vars)


def _inner_self_read(a, outer):
    """The read is an inner reduction block's read of its own accumulator."""
    for r in reversed(a.blocks):
        if r is outer:
            return False
        blk = r.block
        if _is_reduction(blk) and any(d.buffer is a.buffer for d in (blk.writes or ())):
            return True
    return False


@register("signature", codes=("signature/reads-mismatch", "signature/writes-mismatch"),
          fast=True)
def check_signature(func, ctx):
    if ctx.incomplete(func):
        return []
    fa = func_accesses(func, ctx)
    out = []
    for r in fa.realizes:
        b = r.block
        if b.reads is None and b.writes is None:
            continue
        if not fa.blocks_of[id(r)] and not b.iter_vars:
            continue         # the root block: its signature is not checked by TVM either
        regions = block_regions(fa, r)
        opaque = {id(a.buffer) for a, reg in regions if reg is None}
        own = {iv.var for iv in b.iter_vars}
        plain = Analyzer()        # converts declared regions as the inferred ones were
        env = {v: x for v, x in fa.env.items() if v not in own}
        env.update(fa.lets)
        for is_write, decl, code, word in ((False, b.reads, "signature/reads-mismatch", "reads"),
                                           (True, b.writes, "signature/writes-mismatch",
                                            "writes")):
            if decl is None or (not decl and not b.iter_vars):
                continue     # an opaque block's empty list: TVM's 'not tracked' convention
            missing = []
            written = {id(d.buffer) for d in (b.writes or ())}
            updated = {_key(plain, a, env) for a, _ in regions if a.is_write}
            reduction = b.init is not None or any(iv.kind == "R" for iv in b.iter_vars)
            for a, reg in regions:
                if reg is None or a.is_write != is_write or id(a.buffer) in opaque:
                    continue
                if not a.buffer.shape:
                    continue     # a 0-d buffer: TVM's own schedules leave it undeclared
                if not is_write and _key(plain, a, env) in updated:
                    continue     # X[i] = X[i] op ...: an update in place, as reductions
                if not is_write and (reduction and id(a.buffer) in written or
                                     _inner_self_read(a, r)):
                    continue     # a reduction's self-read: TVM leaves it out of T.reads
                an = analyzer_for(fa, a, env=env, from_loop=len(a.loops), from_block=None,
                                  iter_ranges=b.iter_vars)
                an.constraints = []
                ds = [_decl_ranges(plain, d, env) for d in decl if d.buffer is a.buffer]
                if any(_covers(an, reg, d) for d in ds):
                    continue
                if ds and not all(_misses(an, reg, d) for d in ds):
                    continue
                missing.append(a)
            if not missing:
                continue
            span = decl[0].span if decl and decl[0].span is not None else b.name_span
            if span is None:
                continue
            names = []
            for a in missing:
                t = f"{a.buffer.name}[{', '.join(text(i) for i in a.indices)}]"
                if t not in names:
                    names.append(t)
            shown = ", ".join(f"`{n}`" for n in names[:3])
            more = f" and {len(names) - 3} more" if len(names) > 3 else ""
            out.append(error(
                code, f"{block_label(b)} {word} {shown}{more}, which its T.{word} "
                f"does not cover", span,
                [(a.span, f"the body {word} `{a.buffer.name}` here") for a in missing[:3]
                 if a.span is not None]))
    return out
