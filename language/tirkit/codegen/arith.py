"""Small integer arithmetic used by the passes, the vectorizer and the interpreter:
affine forms over variables and interval bounds."""
from __future__ import annotations

from ..ir import expr as E
from ..ir.dtype import is_int

# An affine form: ({key: coeff}, const, {key: expr}); a key is id(Var) for a variable,
# or ("t", id(expr)) for an opaque integer term.


def affine(e):
    """e as sum(coeff * term) + const; non-linear sub-expressions become opaque terms."""
    t = type(e)
    if t is E.IntImm:
        return {}, e.value, {}
    if t is E.Var or t is E.SizeVar:
        return {id(e): 1}, 0, {id(e): e}
    if t is E.Cast and is_int(e.dtype) and is_int(e.value.dtype):
        return affine(e.value)
    if t is E.Add or t is E.Sub:
        ca, ka, ta = affine(e.a)
        cb, kb, tb = affine(e.b)
        s = 1 if t is E.Add else -1
        out = dict(ca)
        for k, v in cb.items():
            out[k] = out.get(k, 0) + s * v
        ta.update(tb)
        return {k: v for k, v in out.items() if v}, ka + s * kb, ta
    if t is E.Mul:
        for x, y in ((e.a, e.b), (e.b, e.a)):
            if type(y) is E.IntImm:
                c, k, terms = affine(x)
                if y.value == 0:
                    return {}, 0, {}
                return {a: v * y.value for a, v in c.items()}, k * y.value, terms
    key = ("t", id(e))
    return {key: 1}, 0, {key: e}


def coefficient(e, var) -> int | None:
    """The coefficient of var in e when e is affine in var (other terms free of var)."""
    coeffs, _, terms = affine(e)
    from ..ir.visit import walk
    for k, term in terms.items():
        if k != id(var) and isinstance(k, tuple):
            found = []
            walk(term, lambda x: found.append(1) if x is var else None)
            if found:
                return None
    return coeffs.get(id(var), 0)


def bound(e, ranges: dict):
    """Interval (lo, hi) of integer expression e, variables bounded by ranges {id(var): (lo, hi)};
    None when unknown."""
    t = type(e)
    if t is E.IntImm:
        return e.value, e.value
    if t is E.Var or t is E.SizeVar:
        return ranges.get(id(e))
    if t is E.Cast:
        return bound(e.value, ranges) if is_int(e.dtype) else None
    if t in (E.Add, E.Sub, E.Mul, E.Min, E.Max, E.FloorDiv, E.FloorMod):
        a = bound(e.a, ranges)
        if t is E.FloorMod and type(e.b) is E.IntImm and e.b.value > 0:
            if a is not None and a[0] >= 0 and a[1] < e.b.value:
                return a
            return 0, e.b.value - 1
        b = bound(e.b, ranges)
        if a is None or b is None:
            return None
        if t is E.Add:
            return a[0] + b[0], a[1] + b[1]
        if t is E.Sub:
            return a[0] - b[1], a[1] - b[0]
        if t is E.Mul:
            c = [a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1]]
            return min(c), max(c)
        if t is E.Min:
            return min(a[0], b[0]), min(a[1], b[1])
        if t is E.Max:
            return max(a[0], b[0]), max(a[1], b[1])
        if t is E.FloorDiv and b[0] == b[1] and b[0] > 0:
            return a[0] // b[0], a[1] // b[0]
    return None


def const_value(e):
    return e.value if isinstance(e, E.IntImm) else None


def _terms_mention(term, var_id) -> bool:
    from ..ir.visit import walk
    found = []
    walk(term, lambda x: found.append(1) if id(x) == var_id else None)
    return bool(found)


def separates(accesses, var_id, ranges, skey) -> bool:
    """Do distinct values of variable `var_id` always reach distinct elements?  `accesses` are
    index tuples of one buffer; `ranges` bounds the variables that vary within one value of
    var (inner loops); other variables are fixed.  True when, in some dimension, every access
    is `a * var + rest` with the same `a`, the fixed part of `rest` is the same and the varying
    part of `rest` spans less than |a| over all accesses."""
    if not accesses:
        return True
    for d in range(len(accesses[0])):
        coeff, keys, lo, hi, ok = set(), set(), None, None, True
        for ix in accesses:
            coeffs, const, terms = affine(ix[d])
            coeff.add(coeffs.get(var_id, 0))
            fixed = []
            a_lo = a_hi = const
            for k, c in coeffs.items():
                if k == var_id:
                    continue
                if isinstance(k, tuple):
                    if _terms_mention(terms[k], var_id):
                        ok = False
                        break
                    r = bound(terms[k], ranges)
                else:
                    r = ranges.get(k)
                if r is None:
                    fixed.append((skey(terms[k]), c))
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
