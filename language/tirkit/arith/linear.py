"""Plain linear forms of index expressions, for code that writes an index's terms back as they
are (the code generator's region compaction, vectorizer and interpreter).

    linear_form(e)                  Aff: sums, products by a constant and integer casts looked
                                    through; any other node an opaque atom keeping its `expr`
    term_expr(key)                  the expression of a form's key (a Var, or an atom's expr)
    coefficient(e, var)             the coefficient of var when e is linear in it, else None
    separates(accesses, var, ranges)  distinct values of var reach distinct elements

No rewrite rule is applied (see `simplify` for those); bounds come from `interval`.
"""
from __future__ import annotations

from ..ir import expr as E
from ..ir.hash import structural_key
from .affine import Aff, Atom
from .interval import interval


def linear_form(e) -> Aff:
    t = type(e)
    if t is E.IntImm:
        return Aff({}, int(e.value))
    if t is E.Var or t is E.SizeVar:
        return Aff.of(e)
    if t is E.Cast and _is_int(e.dtype) and _is_int(e.value.dtype):
        return linear_form(e.value)
    if t is E.Add:
        return linear_form(e.a) + linear_form(e.b)
    if t is E.Sub:
        return linear_form(e.a) - linear_form(e.b)
    if t is E.Mul:
        a, b = linear_form(e.a), linear_form(e.b)
        if a.is_const():
            return b.scale(a.const)
        if b.is_const():
            return a.scale(b.const)
    return Aff.of(Atom("opaque", (), 0, e))


def term_expr(key):
    return key.expr if isinstance(key, Atom) else key


def key_range(key, ranges):
    """Numeric bounds of one term of a linear form over `ranges` ({id(var): (lo, hi)})."""
    return interval(key.expr, ranges) if isinstance(key, Atom) else ranges.get(id(key))


def coefficient(e, var) -> int | None:
    """The coefficient of var in e when e is linear in var (other terms free of var)."""
    form = linear_form(e)
    for k in form.atoms():
        if _mentions(k.expr, var):
            return None
    return form.terms.get(var, 0)


def _mentions(e, var) -> bool:
    from ..ir.visit import walk
    found = []
    walk(e, lambda x: found.append(1) if x is var else None)
    return bool(found)


def separates(accesses, var, ranges) -> bool:
    """Do distinct values of variable `var` always reach distinct elements?  `accesses` are
    index tuples of one buffer; `ranges` ({id(v): (lo, hi)}) bounds the variables that vary
    within one value of var (inner loops); other variables are fixed.  True when, in some
    dimension, every access is `a * var + rest` with the same `a`, the fixed part of `rest`
    is the same and the varying part of `rest` spans less than |a| over all accesses."""
    if not accesses:
        return True
    for d in range(len(accesses[0])):
        coeff, keys, lo, hi, ok = set(), set(), None, None, True
        for ix in accesses:
            form = linear_form(ix[d])
            coeff.add(form.terms.get(var, 0))
            fixed = []
            a_lo = a_hi = form.const
            for k, c in form.terms.items():
                if k is var:
                    continue
                if isinstance(k, Atom) and _mentions(k.expr, var):
                    ok = False
                    break
                r = key_range(k, ranges)
                if r is None:
                    fixed.append((structural_key(term_expr(k)), c))
                    continue
                a_lo += min(c * r[0], c * r[1])
                a_hi += max(c * r[0], c * r[1])
            if not ok:
                break
            keys.add(tuple(sorted(fixed, key=repr)))
            lo = a_lo if lo is None else min(lo, a_lo)
            hi = a_hi if hi is None else max(hi, a_hi)
        if not ok or len(coeff) != 1 or len(keys) != 1:
            continue
        a = abs(coeff.pop())
        if a and hi - lo < a:
            return True
    return False


def _is_int(dtype):
    return dtype.startswith(("int", "uint"))
