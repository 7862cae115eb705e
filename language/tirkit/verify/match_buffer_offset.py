"""signature/match-buffer: a `T.match_buffer` whose declared `elem_offset` or `strides`
provably differ from the region it views; TVM's `LowerMatchBuffer` binds them to the
region's and stops with "The buffer's elem_offset/strides do not match" when they are
constants that disagree.

The region's offset is the source buffer's `elem_offset` (0 unless declared) plus each
dimension's start times its stride (the source's declared strides, else the compact ones).
Reported when the declared offset is a constant and the region's offset differs from it for
some block instance (`elem_offset=0` on a region that moves with the loop), or when a
declared constant stride differs from the source's constant stride of that dimension.
Symbolic offsets and strides (`elem_offset=off`, `strides=[s0, s1]`) bind freely and are
never reported."""
from __future__ import annotations

from ..arith import Analyzer
from ..arith.affine import Atom
from ..diagnostics import error
from ..ir import expr as E
from . import register
from ._common import func_accesses


def _strides(buf):
    if buf.strides:
        return list(buf.strides)
    out, acc = [], E.IntImm("int32", 1)
    for d in reversed(buf.shape):
        out.append(acc)
        acc = E.Mul(acc, d, "int32") if not (isinstance(acc, E.IntImm) and acc.value == 1) \
            else d
    return list(reversed(out))


def _const(an, e):
    a = an.to_aff(e)
    return a.const if a.is_const() else None


@register("signature/match-buffer", fast=True)
def check_match_buffer(func, ctx):
    fa = func_accesses(func, ctx)
    out = []
    for r in fa.realizes:
        if not r.block.match_buffers:
            continue
        an = Analyzer()
        for outer in fa.blocks_of[id(r)] + (r,):
            for iv in outer.block.iter_vars:
                an.bind_extent(iv.var, iv.dom.min, iv.dom.extent)
        for m in r.block.match_buffers:
            buf, src = m.buffer, m.source.buffer
            span = m.span or buf.span
            if span is None or len(m.source.region) != len(src.shape):
                continue
            sstr = _strides(src)
            found = None
            # strides: the matched buffer's dimensions are the source's last ones
            if buf.strides and len(buf.strides) <= len(sstr):
                for k, st in enumerate(buf.strides):
                    want = sstr[len(sstr) - len(buf.strides) + k]
                    a, b = _const(an, st), _const(an, want)
                    if a is not None and b is not None and a != b:
                        found = (f"`T.match_buffer` declares stride {a} for dimension {k} of "
                                 f"`{buf.name}`, but the region of `{src.name}` it views has "
                                 f"stride {b} there")
                        break
            declared = _const(an, buf.elem_offset) if buf.elem_offset is not None else None
            if found is None and declared is not None and \
                    (src.elem_offset is None or _const(an, src.elem_offset) is not None):
                off = an.to_aff(src.elem_offset) if src.elem_offset is not None else \
                    an.to_aff(0)
                for rng, st in zip(m.source.region, sstr):
                    off = off + an.to_aff(E.Mul(rng.min, st, "int32"))
                if not any(isinstance(k, Atom) for k in off.terms):
                    lo, hi = an.bound(off - declared)
                    if lo is not None and hi is not None and lo.is_const() and hi.is_const() \
                            and (lo.const != 0 or hi.const != 0):
                        moving = lo.const != hi.const
                        found = (f"`T.match_buffer` declares elem_offset={declared} for "
                                 f"`{buf.name}`, but the region of `{src.name}` it views "
                                 + (f"starts at offset `{off!r}`, which moves with the block's "
                                    f"iterators" if moving else
                                    f"starts at offset {lo.const + declared}"))
            if found is not None:
                out.append(error("signature/match-buffer", found, span))
    return out
