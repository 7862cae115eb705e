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
from ..ir.visit import substitute


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
    (analysis.regions): the loops below the accesses' common ancestor, the single-trip ones
    and those `relax_loop(Loop)` says are relaxed; the allocated size where an extent is
    not a constant."""
    from .regions import single_trip
    acc = [a for a in fa.accesses + fa.matched if a.buffer is buffer]
    shape = [s.value if isinstance(s, E.IntImm) else None for s in buffer.shape]
    if not acc or any(a.opaque for a in acc):
        return shape
    common = 0
    first = acc[0].loops
    while common < len(first) and all(len(a.loops) > common and a.loops[common] is
                                      first[common] for a in acc):
        common += 1
    kept = {id(lp) for lp in first[:common] if not relax_loop(lp) and not single_trip(lp)}
    env = {id(v): b for v, b in fa.env.items()}
    env.update({id(v): b for v, b in fa.lets.items()})
    ranges, tuples = {}, []
    for a in acc:
        for lp in a.loops:
            if id(lp) not in kept and isinstance(lp.min, E.IntImm) and \
                    isinstance(lp.extent, E.IntImm):
                ranges[id(lp.var)] = (lp.min.value, lp.min.value + lp.extent.value - 1)
        tuples.extend(_corners(tuple(_resolved(i, env) for i in a.indices[:len(shape)])))
    out = []
    for d, (b, s) in enumerate(zip(box(tuples, ranges, len(shape)), shape)):
        ext = compacted_extent(b, s)
        out.append(s if ext is None else ext)
    return out


def _resolved(e, env, depth=8):
    """e over loop variables: block iterators and let variables replaced by their values."""
    for _ in range(depth):
        e2 = substitute(e, env)
        if e2 is e:
            return e
        e = e2
    return e


def _corners(ix):
    """An index tuple with vector ramps as its two corner tuples."""
    if not any(isinstance(i, E.Ramp) for i in ix):
        return [ix]
    lo = tuple(i.base if isinstance(i, E.Ramp) else i for i in ix)
    hi = tuple(E.Add(i.base, E.Mul(i.stride, E.IntImm(i.base.dtype, i.lanes - 1),
                                   i.base.dtype), i.base.dtype)
               if isinstance(i, E.Ramp) else i for i in ix)
    return [lo, hi]
