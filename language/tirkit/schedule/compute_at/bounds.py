"""Bounds for compute_at and reverse_compute_at, as linear forms: an index relaxed over
loops of constant or symbolic extent, the hull of two bounds, a lower bound in which
divisions may cancel (a block's regions, declared or inferred: analysis.regions.regions_of)."""
from __future__ import annotations

from ...ir import expr as E
from ...arith import writeback as A
from ...arith.affine import Aff
from ..analysis import atom_vars


def hull(a, b, pick):
    """The bound of a and b that `pick` (min or max) chooses; None when they do not compare."""
    d = b.add(a, -1)
    if not d.is_const():
        return None
    return b if pick(0, d.const) == d.const and d.const != 0 else a


def hull_box(box, other):
    """The hull of two boxes ([(lo, hi)] per dimension); None when a pair of bounds does not
    compare."""
    merged = []
    for (a0, b0), (a1, b1) in zip(box, other):
        a, b = hull(a0, a1, min), hull(b0, b1, max)
        if a is None or b is None:
            return None
        merged.append((a, b))
    return merged


def relax(e, cb, sym, outer=None):
    """(lo, hi) linear forms of `e` with the loop variables of cb (constant bounds) and of
    sym (loops of symbolic extent) ranging over their loops; None when not affine in them."""
    return _relax_lin(A.join(A.to_form(e, cb)), cb, sym, outer or {})


def _relax_lin(lin, cb, sym, outer):
    lo = A.const_form(lin.const, lin.dtype)
    hi = A.const_form(lin.const, lin.dtype)
    for atom, coef in lin.terms.items():
        vs = atom_vars(atom)
        if A.is_var(atom) and id(atom) in sym:
            loop = sym[id(atom)]
            m = A.to_form(loop.min, {})
            top = A.to_form(loop.extent, {}).add(m) - 1
            if any(id(v) in cb or id(v) in sym for v in lin_vars(m) + lin_vars(top)):
                return None
            a, b = (m, top) if coef > 0 else (top, m)
            lo = lo.add(a, coef)
            hi = hi.add(b, coef)
        elif any(id(v) in cb for v in vs) and not any(id(v) in sym for v in vs):
            if not all(id(v) in cb for v in vs):
                # `(outer + inner) // c`: the division of each end of the inner range
                if not A.is_div(atom):
                    return None
                r = _relax_lin(_arg(atom, lin), cb, sym, outer)
                if r is None:
                    return None
                a, b = _floordiv(r[0], atom.c, outer), _floordiv(r[1], atom.c, outer)
                a, b = (a, b) if coef > 0 else (b, a)
                lo = lo.add(a, coef)
                hi = hi.add(b, coef)
                continue
            bd = A.bound_key(atom, cb)
            if bd is None:
                return None
            x, y = bd[0] * coef, bd[1] * coef
            lo = lo + min(x, y)
            hi = hi + max(x, y)
        elif any(id(v) in sym for v in vs):
            return None
        else:
            lo = lo + Aff.of(atom, coef)
            hi = hi + Aff.of(atom, coef)
    return lo, hi


def _arg(atom, lin):
    """The argument of a division term of `lin`, in lin's dtype."""
    x = atom.args[0]
    return Aff(x.terms, x.const, lin.dtype)


def _floordiv(lin, c, outer):
    """`lin // c` as a linear form: the whole multiples of c taken out when the rest stays in
    [0, c) for the outer loops' bounds; else, with g the common factor of the terms (dividing
    c) and lin = g * m + r, 0 <= r < g, it is `m // (c / g)`."""
    import math
    if lin.is_const():
        return A.const_form(lin.const // c, lin.dtype)
    q = Aff({a: k // c for a, k in lin.terms.items()}, lin.const // c, lin.dtype)
    rest = Aff({a: k % c for a, k in lin.terms.items()}, lin.const % c, lin.dtype)
    b = A.bound_form(rest, outer)
    if b is not None and b[0] >= 0 and b[1] < c:
        return q
    g = c
    for k in lin.terms.values():
        g = math.gcd(g, k)
    m = Aff({a: k // g for a, k in lin.terms.items()}, lin.const // g, lin.dtype)
    c2 = c // g
    if c2 == 1:
        return m
    return A.to_form(E.FloorDiv(A.to_expr(m), E.IntImm(lin.dtype, c2), lin.dtype), {})


def lin_vars(lin):
    return [v for a in lin.terms for v in atom_vars(a)]


def lower(lin, bounds):
    """A lower bound of a linear form: `k*c * (x // c)` is at least `k * (x - c + 1)` and
    `-k*c * (x // c)` at least `-k * x`, which may cancel symbols; None when unbounded."""
    out = A.const_form(lin.const, lin.dtype)
    for atom, coef in lin.terms.items():
        if A.is_div(atom) and coef % atom.c == 0:
            k = coef // atom.c
            out = out.add(_arg(atom, lin), k)
            if k > 0:
                out = out - k * (atom.c - 1)
        else:
            out = out + Aff.of(atom, coef)
    b = A.bound_form(out, bounds)
    return None if b is None else b[0]
