"""Substitution with simplification for blockize: what a substitution changes is simplified
the way TVM's simplifier writes it, knowing the bounds of the inner iterators (index
divisions and remainders, sums in TVM's order, casts of constants folded, comparisons the
bounds decide)."""
from __future__ import annotations

import math

from ...ir import expr as E
from .. import _arith as A
from .. import _common as common
from .. import _ir
from ..analysis import atom_vars


_ARITH = (E.Add, E.Sub, E.Mul, E.FloorDiv, E.FloorMod)


def substitute(node, vmap, bounds):
    def fn(new, old):
        if isinstance(old, E.Var):
            return vmap.get(id(old))
        if new is old or not isinstance(new, E.PrimExpr):
            return None
        return _simp(new, bounds)
    return _ir.rebuild(node, fn)


def _simp(e, bounds):
    t = type(e)
    if t is E.GE or t is E.GT:
        flip = (E.LE if t is E.GE else E.LT)(e.b, e.a, e.dtype)
        out = _simp(flip, bounds)
        return flip if out is None else out
    if t in (E.LE, E.LT) and A._is_int(e.a) and A._is_int(e.b):
        a, b = _fold_casts(e.a), _fold_casts(e.b)
        if affine(a) and affine(b):
            d = A.to_lin(a, bounds).add(A.to_lin(b, bounds), -1)
            bd = A.bound_lin(d, bounds)
            if bd is not None:
                lo, hi = bd
                if t is E.LE and (hi <= 0 or lo > 0):
                    return E.IntImm("bool", int(hi <= 0))
                if t is E.LT and (hi < 0 or lo >= 0):
                    return E.IntImm("bool", int(hi < 0))
        return None
    if t is E.And:
        if common.is_true(e.a):
            return e.b
        if common.is_true(e.b):
            return e.a
        return None
    if t is E.Cast:
        return _cast(e)
    if t in _ARITH and A._is_int(e):
        e = _fold_casts(e)
        if affine(e):
            return _index(e, bounds)
        return e
    return None


def _cast(e):
    v = e.value
    if v.dtype == e.dtype:
        return v
    if A._is_int(e) and isinstance(v, (E.IntImm, E.FloatImm)) and math.isfinite(v.value):
        return E.IntImm(e.dtype, int(v.value))
    return None


def _fold_casts(e):
    """Casts of constants folded (TVM's simplifier folds them under what it rewrites)."""
    def fn(new, old):
        return _cast(new) if isinstance(new, E.Cast) else None
    return _ir.rebuild(e, fn)


def _bounded(atom, bounds):
    return all(id(v) in bounds for v in atom_vars(atom))


def _index(e, bounds):
    """An index expression simplified the way TVM's simplifier writes it, knowing the bounds
    of the inner iterators: multiples of the divisor leave a division, `(x * g + y) // c`
    with a single unbounded term x and 0 <= y < g divides x alone, `x // a % b` is
    `x % (a * b) // a`."""
    t = type(e)
    if t in (E.FloorDiv, E.FloorMod) and isinstance(e.b, E.IntImm) and e.b.value > 0:
        c = e.b.value
        lin = A.to_lin(e.a, bounds)
        dt = lin.dtype
        q = A.Lin([], 0, dt)
        r = A.Lin([], lin.const, dt)
        for a, k in lin.terms:
            if k % c == 0 and not _bounded(a, bounds):
                q._add_term(a, k // c)
            else:
                r._add_term(a, k)
        if q.terms:
            if t is E.FloorMod:
                return _index(E.FloorMod(A.to_expr(A._merge(r)), e.b, dt), bounds)
            rest = _index(E.FloorDiv(A.to_expr(A._merge(r)), e.b, dt), bounds)
            qe = A.to_expr(A._merge(q))
            if isinstance(rest, E.IntImm) and rest.value == 0:
                return qe
            return norm(E.Add(qe, rest, dt), bounds)
        d = _divmod_scaled(lin, t is E.FloorDiv, c, bounds)
        if d is not None:
            return d
        if t is E.FloorMod and isinstance(e.a, E.FloorDiv) and isinstance(e.a.b, E.IntImm) \
                and len(lin.terms) == 1 and lin.terms[0][0][0] == "div" and not lin.const:
            x, k = e.a.a, e.a.b.value
            bd = A.bound_of(x, bounds)
            if bd is None or bd[0] < 0 or bd[1] >= k * c:
                return E.FloorDiv(E.FloorMod(x, common.int32(k * c, dt), dt), e.a.b, dt)
    return norm(e, bounds)


def norm(e, bounds):
    """A sum in TVM's order: larger scale first, then a division by more first."""
    return A.to_expr(A._order(A._merge(A.to_lin(e, bounds)), {}))


def affine(e) -> bool:
    """Integer arithmetic over variables and constants only (no loads, calls...)."""
    t = type(e)
    if t in (E.IntImm, E.Var, E.SizeVar):
        return True
    if t in _ARITH:
        return affine(e.a) and affine(e.b)
    return False


def _divmod_scaled(lin, is_div, c, bounds):
    """`(x * g + y) // c` with g dividing c and 0 <= y < g is `x // (c / g)`; the remainder
    `(x * g + y) % c` is `x % (c / g) * g + y` (x the only unbounded term)."""
    free = [(a, k) for a, k in lin.terms if not _bounded(a, bounds)]
    if len(free) != 1:
        return None
    g = math.gcd(c, free[0][1])
    if g <= 1:
        return None
    dt = lin.dtype
    q = A.Lin([], lin.const // g, dt)
    rest = A.Lin([], lin.const % g, dt)
    for a, k in lin.terms:
        if k % g == 0 and not _bounded(a, bounds):
            q._add_term(a, k // g)
        else:
            rest._add_term(a, k)
    bd = A.bound_lin(rest, bounds)
    if bd is None or bd[0] < 0 or bd[1] >= g:
        return None
    n = c // g
    qe = A.to_expr(A._merge(q))
    if is_div:
        return qe if n == 1 else E.FloorDiv(qe, common.int32(n, dt), dt)
    head = None if n == 1 else E.Mul(E.FloorMod(qe, common.int32(n, dt), dt),
                                     common.int32(g, dt), dt)
    re = A.to_expr(rest) if rest.terms or rest.const else None
    if head is None:
        return re if re is not None else common.int32(0, dt)
    return head if re is None else E.Add(head, re, dt)
