"""Bounds for compute_at and reverse_compute_at, as linear forms: a block's regions (declared
or inferred), an index relaxed over loops of constant or symbolic extent, the hull of two
bounds, a lower bound in which divisions may cancel."""
from __future__ import annotations

from ...ir import expr as E
from .. import _arith as A
from ..analysis import atom_vars, infer_regions


def regions_of(block):
    """(reads, writes) of a block: as declared, or inferred where not declared."""
    r, w = block.reads, block.writes
    if r is None or w is None:
        r2, w2 = infer_regions(block)
        r = r if r is not None else r2
        w = w if w is not None else w2
    return r, w


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
    return _relax_lin(A._merge(A.to_lin(e, cb)), cb, sym, outer or {})


def _relax_lin(lin, cb, sym, outer):
    lo = A.Lin([], lin.const, lin.dtype)
    hi = A.Lin([], lin.const, lin.dtype)
    for atom, coef in lin.terms:
        vs = atom_vars(atom)
        if atom[0] == "var" and id(atom[1]) in sym:
            loop = sym[id(atom[1])]
            m = A.to_lin(loop.min, {})
            top = A.to_lin(loop.extent, {}).add(m)
            top.const -= 1
            if any(id(v) in cb or id(v) in sym for v in lin_vars(m) + lin_vars(top)):
                return None
            a, b = (m, top) if coef > 0 else (top, m)
            lo = lo.add(a, coef)
            hi = hi.add(b, coef)
        elif any(id(v) in cb for v in vs) and not any(id(v) in sym for v in vs):
            if not all(id(v) in cb for v in vs):
                # `(outer + inner) // c`: the division of each end of the inner range
                if atom[0] != "div":
                    return None
                r = _relax_lin(atom[1], cb, sym, outer)
                if r is None:
                    return None
                a, b = _floordiv(r[0], atom[2], outer), _floordiv(r[1], atom[2], outer)
                a, b = (a, b) if coef > 0 else (b, a)
                lo = lo.add(a, coef)
                hi = hi.add(b, coef)
                continue
            bd = A.bound_atom(atom, cb)
            if bd is None:
                return None
            x, y = bd[0] * coef, bd[1] * coef
            lo.const += min(x, y)
            hi.const += max(x, y)
        elif any(id(v) in sym for v in vs):
            return None
        else:
            lo._add_term(atom, coef)
            hi._add_term(atom, coef)
    return lo, hi


def _floordiv(lin, c, outer):
    """`lin // c` as a linear form: the whole multiples of c taken out when the rest stays in
    [0, c) for the outer loops' bounds; else, with g the common factor of the terms (dividing
    c) and lin = g * m + r, 0 <= r < g, it is `m // (c / g)`."""
    import math
    if lin.is_const():
        return A.Lin([], lin.const // c, lin.dtype)
    q = A.Lin([], lin.const // c, lin.dtype)
    rest = A.Lin([], lin.const % c, lin.dtype)
    for a, k in lin.terms:
        q._add_term(a, k // c)
        rest._add_term(a, k % c)
    b = A.bound_lin(rest, outer)
    if b is not None and b[0] >= 0 and b[1] < c:
        return q
    g = c
    for _, k in lin.terms:
        g = math.gcd(g, k)
    m = A.Lin([[a, k // g] for a, k in lin.terms], lin.const // g, lin.dtype)
    c2 = c // g
    if c2 == 1:
        return m
    return A.to_lin(E.FloorDiv(A.to_expr(m), E.IntImm(lin.dtype, c2), lin.dtype), {})


def lin_vars(lin):
    return [v for a, _ in lin.terms for v in atom_vars(a)]


def lower(lin, bounds):
    """A lower bound of a linear form: `k*c * (x // c)` is at least `k * (x - c + 1)` and
    `-k*c * (x // c)` at least `-k * x`, which may cancel symbols; None when unbounded."""
    out = A.Lin([], lin.const, lin.dtype)
    for atom, coef in lin.terms:
        if atom[0] == "div" and coef % atom[2] == 0:
            k = coef // atom[2]
            out = out.add(atom[1], k)
            if k > 0:
                out.const -= k * (atom[2] - 1)
        else:
            out._add_term(atom, coef)
    b = A.bound_lin(out, bounds)
    return None if b is None else b[0]
