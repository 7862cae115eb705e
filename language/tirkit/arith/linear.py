"""Plain linear forms of index expressions, for code that writes an index's terms back as they
are (the code generator's region compaction, vectorizer and interpreter).

    linear_form(e)                  Aff: sums, products by a constant and integer casts looked
                                    through; any other node an opaque atom keeping its `expr`
    term_expr(key)                  the expression of a form's key (a Var, or an atom's expr)
    coefficient(e, var)             the coefficient of var when e is linear in it, else None
    separates(accesses, var, ranges[, domain])  distinct values of var reach distinct elements

No rewrite rule is applied (see `simplify` for those); bounds come from `interval`.
"""
from __future__ import annotations

from ..ir import expr as E
from ..ir.hash import structural_key
from ..ir.visit import uses_var, vars_in
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
        if uses_var(k.expr, var):
            return None
    return form.terms.get(var, 0)


def separates(accesses, var, ranges, domain=None) -> bool:
    """Do distinct values of variable `var` always reach distinct elements?  `accesses` are
    index tuples of one buffer; `ranges` ({id(v): (lo, hi)}) bounds the variables that vary
    within one value of var (inner loops); other variables are fixed.  True when, in some
    dimension, every access is `a * var + rest` with the same `a`, the fixed part of `rest`
    is the same and the varying part of `rest` spans less than |a| over all accesses.

    A fused loop reaches the buffer through parts of its variable instead (`f // 16` in one
    dimension, `f % 16` in another).  With `domain`, var's own (lo, hi), a set of such parts
    separates when each separates its dimension as above and together they tell every value
    of var from every other (checked by evaluating them over the domain, at most
    `DOMAIN_LIMIT` values)."""
    if not accesses:
        return True
    parts = []
    for d in range(len(accesses[0])):
        key = _separating_term(accesses, d, var, ranges)
        if key is var:
            return True
        if key is not None:
            parts.append(key.expr)
    return bool(parts) and domain is not None and _tells_apart(parts, var, domain)


DOMAIN_LIMIT = 1 << 14


def _separating_term(accesses, d, var, ranges):
    """The term of dimension d through which var moves every access of it by more than the
    rest of the index spans (var itself or an atom of var alone), or None."""
    coeff, keys, lo, hi, term, shape = set(), set(), None, None, None, None
    for ix in accesses:
        form = linear_form(ix[d])
        fixed = []
        own = None
        a_lo = a_hi = form.const
        for k, c in form.terms.items():
            if k is var or isinstance(k, Atom) and uses_var(k.expr, var):
                if own is not None:
                    return None
                own = (k, c)
                continue
            r = key_range(k, ranges)
            if r is None:
                fixed.append((structural_key(term_expr(k)), c))
                continue
            a_lo += min(c * r[0], c * r[1])
            a_hi += max(c * r[0], c * r[1])
        if own is None:
            return None
        k, c = own
        k_shape = "var" if k is var else structural_key(k.expr)
        if shape is not None and k_shape != shape:
            return None
        shape, term = k_shape, k
        coeff.add(c)
        keys.add(tuple(sorted(fixed, key=repr)))
        lo = a_lo if lo is None else min(lo, a_lo)
        hi = a_hi if hi is None else max(hi, a_hi)
    if len(coeff) != 1 or len(keys) != 1:
        return None
    a = abs(coeff.pop())
    if not (a and hi - lo < a):
        return None
    if term is not var and any(v is not var for v in vars_in(term.expr)):
        return None
    return term


def _tells_apart(parts, var, domain) -> bool:
    lo, hi = domain
    if hi - lo + 1 > DOMAIN_LIMIT:
        return False
    seen = set()
    for v in range(lo, hi + 1):
        point = {id(var): (v, v)}
        values = []
        for p in parts:
            r = interval(p, point)
            if r is None or r[0] != r[1]:
                return False
            values.append(r[0])
        values = tuple(values)
        if values in seen:
            return False
        seen.add(values)
    return True


def _is_int(dtype):
    return dtype.startswith(("int", "uint"))
