"""The box a buffer is allocated with after region compaction: one definition, used by the
code generator's compaction pass (which allocates it) and by the shared-memory rule (which
sizes what will be allocated), so the two cannot disagree.

    split_index(index, ranges)        one index as its inner part (terms over the relaxed loops,
                                      `ranges` {id(var): (lo, hi)}) and its outer part
    box(index_tuples, ranges, ndim)   per dimension (lo, hi, part) covering every access, or
                                      None where the accesses' outer parts differ
    footprint(fa, buffer, relax_loop) extents per dimension of a buffer of a function

Indices are read as plain linear forms (arith.linear): a term whose range the relaxed loops
fix is inner, anything else (outer loops, symbols, loads) is outer and must be the same in
every access (as written, or in arith's canonical form), so the box is a constant window
that moves with the outer part.  Guards do not
shrink it: lowering allocates for every index the code can form.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..arith.affine import Aff
from ..arith.interval import Analyzer
from ..arith.linear import key_range, linear_form, term_expr
from ..ir import expr as E
from ..ir.hash import structural_key


@dataclass(frozen=True)
class IndexSplit:
    inner: dict                  # key -> coefficient: terms over the relaxed loops
    span: tuple                  # (lo, hi) of inner terms plus the constant
    outer_key: tuple             # structural key of the outer terms
    outer: dict                  # key -> coefficient: the rest
    terms: dict                  # key -> expression
    const: int


def split_index(index, ranges) -> IndexSplit:
    form = linear_form(index)
    terms = {k: term_expr(k) for k in form.terms}
    inner, outer = {}, {}
    lo = hi = form.const
    for k, c in form.terms.items():
        r = key_range(k, ranges)
        if r is None:
            outer[k] = c
            continue
        inner[k] = c
        a, b = c * r[0], c * r[1]
        lo += min(a, b)
        hi += max(a, b)
    okey = tuple(sorted((structural_key(terms[k]), c) for k, c in outer.items()))
    return IndexSplit(inner, (lo, hi), okey, outer, terms, form.const)


def box(index_tuples, ranges, ndim):
    """Per dimension (lo, hi, IndexSplit of the first access) covering all accesses, or None
    where the outer parts differ."""
    out = []
    for d in range(ndim):
        parts = [split_index(ix[d], ranges) for ix in index_tuples]
        if len({p.outer_key for p in parts}) != 1 and not _same_outer(parts):
            out.append(None)
            continue
        out.append((min(p.span[0] for p in parts), max(p.span[1] for p in parts), parts[0]))
    return out


def _same_outer(parts) -> bool:
    """Outer parts spelled apart but equal in arith's canonical form (`x % 16 // 2` and
    `x // 2 % 8`)."""
    an = Analyzer()

    def canonical(p):
        total = Aff()
        for k, c in p.outer.items():
            total = total + an.to_aff(p.terms[k]).scale(c)
        return total
    first = canonical(parts[0])
    return all((canonical(p) - first) == Aff() for p in parts[1:])


def compacted_extent(b, size):
    """The extent a dimension is allocated with: the box's, when it is known, inside the
    buffer and smaller; else None (the dimension keeps its size)."""
    if b is None:
        return None
    lo, hi, part = b
    ext = hi - lo + 1
    if size is not None and ext >= size or ext <= 0 or lo < 0 and not part.outer:
        return None
    return ext


def footprint(fa, buffer, relax_loop):
    """Extents per dimension of `buffer` after compaction in a function's accesses `fa`
    (analysis.regions): accesses relaxed over every loop below their common ancestor and
    over the loops `relax_loop(Loop)` says, by the Analyzer (guards included); the allocated
    shape where an extent is not a constant."""
    from .regions import analyzer_for, index_range, single_trip
    acc = [a for a in fa.accesses + fa.matched if a.buffer is buffer]
    shape = [s.value if isinstance(s, E.IntImm) else None for s in buffer.shape]
    if not acc or any(a.opaque for a in acc):
        return shape
    common = 0
    first = acc[0].loops
    while common < len(first) and all(len(a.loops) > common and a.loops[common] is
                                      first[common] for a in acc):
        common += 1
    keep_all = first[:common]
    los = [None] * len(shape)
    his = [None] * len(shape)
    for a in acc:
        keep = frozenset(lp.var for lp in keep_all
                         if not relax_loop(lp) and not single_trip(lp))
        env = dict(fa.env)
        env.update(fa.lets)
        an = analyzer_for(fa, a, keep, env=env)
        for d, idx in enumerate(a.indices[:len(shape)]):
            lo, hi = index_range(an, idx, env)
            los[d] = _merge(los[d], lo, True, a is acc[0])
            his[d] = _merge(his[d], hi, False, a is acc[0])
    out = []
    for d, s in enumerate(shape):
        lo, hi = los[d], his[d]
        if lo is None or hi is None or lo is _UNKNOWN or hi is _UNKNOWN:
            out.append(s)
            continue
        ext = hi - lo + 1
        if ext.is_const() and ext.const > 0:
            out.append(ext.const if s is None else min(ext.const, s))
        else:
            out.append(s)
    return out


_UNKNOWN = object()


def _merge(cur, new, lower, first):
    if first:
        return new if new is not None else _UNKNOWN
    if cur is _UNKNOWN or new is None or cur is None:
        return _UNKNOWN
    d = new - cur
    if not d.is_const():
        return _UNKNOWN
    if lower:
        return new if d.const < 0 else cur
    return new if d.const > 0 else cur
