"""A small integer simplifier for loop bindings: linear forms over variables, floordiv and
floormod atoms, with variable bounds (inclusive) used to drop divisions that cannot carry.

    simplify(e, bounds)     bounds: id(Var) -> (lo, hi); a var with lo == hi becomes lo
                            only when listed in FOLD (TVM keeps unit loop variables)
    bound_of(e, bounds)     (lo, hi) or None
"""
from __future__ import annotations

from ..ir import expr as E

FOLD: dict = {}          # id(var) -> True: unit-range variables replaced by their value

_INT_OPS = (E.Add, E.Sub, E.Mul, E.FloorDiv, E.FloorMod)


class Lin:
    __slots__ = ("terms", "const", "dtype")

    def __init__(self, terms=None, const=0, dtype="int32"):
        self.terms = terms or []        # [[atom, coef]] in order of first appearance
        self.const = const
        self.dtype = dtype

    def key(self):
        return (tuple((_akey(a), c) for a, c in self.terms), self.const)

    def add(self, other, scale=1):
        out = Lin([list(t) for t in self.terms], self.const, self.dtype)
        for a, c in other.terms:
            out._add_term(a, c * scale)
        out.const += other.const * scale
        return out

    def scale(self, k):
        return Lin([[a, c * k] for a, c in self.terms if c * k], self.const * k, self.dtype)

    def _add_term(self, atom, coef):
        k = _akey(atom)
        for t in self.terms:
            if _akey(t[0]) == k:
                t[1] += coef
                if t[1] == 0:
                    self.terms.remove(t)
                return
        if coef:
            self.terms.append([atom, coef])

    def is_const(self):
        return not self.terms


def _akey(a):
    kind = a[0]
    if kind == "var":
        return ("v", id(a[1]))
    if kind in ("div", "mod"):
        return (kind, a[1].key(), a[2])
    return ("o", id(a[1]))


def _fdiv(a, b):
    return a // b


def bound_lin(lin, bounds):
    lo = hi = lin.const
    for a, c in lin.terms:
        b = bound_atom(a, bounds)
        if b is None:
            return None
        x, y = b[0] * c, b[1] * c
        lo += min(x, y)
        hi += max(x, y)
    return lo, hi


def bound_atom(a, bounds):
    kind = a[0]
    if kind == "var":
        return bounds.get(id(a[1]))
    if kind == "div":
        b = bound_lin(a[1], bounds)
        if b is None:
            return None
        return _fdiv(b[0], a[2]), _fdiv(b[1], a[2])
    if kind == "mod":
        b = bound_lin(a[1], bounds)
        if b is not None and b[0] >= 0 and b[1] < a[2]:
            return b
        return 0, a[2] - 1
    return None


def to_lin(e, bounds) -> Lin:
    t = type(e)
    dt = getattr(e, "dtype", "int32")
    if t is E.IntImm:
        return Lin([], e.value, dt)
    if t is E.Var or t is E.SizeVar:
        b = bounds.get(id(e))
        if b is not None and b[0] == b[1] and id(e) in FOLD:
            return Lin([], b[0], dt)
        return Lin([[("var", e), 1]], 0, dt)
    if t is E.Add:
        return to_lin(e.a, bounds).add(to_lin(e.b, bounds))
    if t is E.Sub:
        return to_lin(e.a, bounds).add(to_lin(e.b, bounds), -1)
    if t is E.Mul:
        a, b = to_lin(e.a, bounds), to_lin(e.b, bounds)
        if b.is_const():
            return _merge(a.scale(b.const))
        if a.is_const():
            return _merge(b.scale(a.const))
        return Lin([[("opaque", E.Mul(to_expr(a), to_expr(b), dt)), 1]], 0, dt)
    if t in (E.FloorDiv, E.FloorMod):
        a, b = to_lin(e.a, bounds), to_lin(e.b, bounds)
        if b.is_const() and b.const > 0:
            return _divmod(a, b.const, t is E.FloorDiv, bounds)
        return Lin([[("opaque", t(to_expr(a), to_expr(b), dt)), 1]], 0, dt)
    return Lin([[("opaque", _simplify_other(e, bounds)), 1]], 0, dt)


def _divmod(a: Lin, c: int, is_div: bool, bounds) -> Lin:
    if c == 1:
        return a if is_div else Lin([], 0, a.dtype)
    if a.is_const():
        return Lin([], a.const // c if is_div else a.const % c, a.dtype)
    q = Lin([], a.const // c, a.dtype)
    r = Lin([], a.const % c, a.dtype)
    for atom, coef in a.terms:
        if coef % c == 0:
            q._add_term(atom, coef // c)
        else:
            r._add_term(atom, coef)
    b = bound_lin(r, bounds)
    if b is not None and b[0] >= 0 and b[1] < c:
        return q if is_div else r
    if is_div:
        if not q.terms and q.const == 0 and len(r.terms) == 1 and r.const == 0:
            atom, coef = r.terms[0]
            if atom[0] == "div" and coef == 1:
                return Lin([[("div", atom[1], atom[2] * c), 1]], 0, a.dtype)
        return Lin([[("div", a, c), 1]], 0, a.dtype)
    if len(r.terms) == 1 and r.const == 0:
        atom, coef = r.terms[0]
        if atom[0] == "mod" and coef == 1 and atom[2] % c == 0:
            return _divmod(atom[1], c, False, bounds)
    return Lin([[("mod", r, c), 1]], 0, a.dtype)


def _merge(lin: Lin) -> Lin:
    """Fold `(x // c) * (k*c) + (x % c) * k` into `x * k`."""
    changed = True
    while changed:
        changed = False
        for i, (a, ca) in enumerate(lin.terms):
            if a[0] != "div":
                continue
            c = a[2]
            for j, (b, cb) in enumerate(lin.terms):
                if b[0] == "mod" and b[2] == c and b[1].key() == a[1].key() and ca == cb * c:
                    inner = a[1].scale(cb)
                    rest = Lin([t for k, t in enumerate(lin.terms) if k not in (i, j)],
                               lin.const, lin.dtype)
                    head = Lin(lin.terms[:i], 0, lin.dtype)
                    tail = Lin([t for k, t in enumerate(lin.terms) if k > i and k != j], 0,
                               lin.dtype)
                    lin = head.add(inner).add(tail)
                    lin.const += rest.const
                    changed = True
                    break
            if changed:
                break
    return lin


def atom_expr(a, dtype):
    kind = a[0]
    if kind == "var" or kind == "opaque":
        return a[1]
    inner = to_expr(a[1])
    c = E.IntImm(dtype, a[2])
    return E.FloorDiv(inner, c, dtype) if kind == "div" else E.FloorMod(inner, c, dtype)


def to_expr(lin: Lin, neg_add=False):
    """The expression of a linear form; a negative constant is subtracted (`x - 1`), or added
    (`x + -1`, TVM's form for iterator bindings) when neg_add."""
    dt = lin.dtype
    out = None
    if lin.terms and lin.terms[0][1] < 0 and lin.const > 0:
        # `9 - i`, not `0 - i + 9`
        out = E.IntImm(dt, lin.const)
        lin = Lin(lin.terms, 0, dt)
    for a, c in lin.terms:
        x = atom_expr(a, dt)
        mag = abs(c)
        term = x if mag == 1 else E.Mul(x, E.IntImm(dt, mag), dt)
        if out is None:
            out = term if c > 0 else E.Mul(x, E.IntImm(dt, c), dt) if mag != 1 else \
                E.Sub(E.IntImm(dt, 0), x, dt)
        else:
            out = E.Add(out, term, dt) if c > 0 else E.Sub(out, term, dt)
    if out is None:
        return E.IntImm(dt, lin.const)
    if lin.const > 0 or lin.const < 0 and neg_add:
        out = E.Add(out, E.IntImm(dt, lin.const), dt)
    elif lin.const < 0:
        out = E.Sub(out, E.IntImm(dt, -lin.const), dt)
    return out


_CMP = {E.LT: lambda a, b: a < b, E.LE: lambda a, b: a <= b, E.GT: lambda a, b: a > b,
        E.GE: lambda a, b: a >= b, E.EQ: lambda a, b: a == b, E.NE: lambda a, b: a != b}


def _simplify_other(e, bounds):
    t = type(e)
    if t in _CMP:
        a, b = simplify(e.a, bounds), simplify(e.b, bounds)
        if _is_int(a) and _is_int(b):
            d = to_lin(a, bounds).add(to_lin(b, bounds), -1)
            bd = bound_lin(d, bounds)
            if bd is not None:
                lo, hi = bd
                if t is E.LT and (hi < 0 or lo >= 0):
                    return E.IntImm("bool", int(hi < 0))
            if t is E.LT and isinstance(b, E.IntImm):
                r = _scaled_lt(to_lin(a, bounds), b.value, bounds)
                if r is not None:
                    return r
                if t is E.LE and (hi <= 0 or lo > 0):
                    return E.IntImm("bool", int(hi <= 0))
                if t is E.GT and (lo > 0 or hi <= 0):
                    return E.IntImm("bool", int(lo > 0))
                if t is E.GE and (lo >= 0 or hi < 0):
                    return E.IntImm("bool", int(lo >= 0))
        return t(a, b, e.dtype)
    if t in (E.And, E.Or):
        a, b = simplify(e.a, bounds), simplify(e.b, bounds)
        if t is E.And:
            if _true(a):
                return b
            if _true(b):
                return a
        return t(a, b, e.dtype)
    if t in (E.Min, E.Max):
        a, b = simplify(e.a, bounds), simplify(e.b, bounds)
        ba, bb = bound_of(a, bounds), bound_of(b, bounds)
        if ba and bb:
            if t is E.Min and ba[1] <= bb[0] or t is E.Max and ba[0] >= bb[1]:
                return a
            if t is E.Min and bb[1] <= ba[0] or t is E.Max and bb[0] >= ba[1]:
                return b
        return t(a, b, e.dtype)
    return e


def _scaled_lt(lin, k, bounds):
    """`q * c + r < k` with 0 <= r < c and c dividing k is `q < k / c`."""
    for _, c in sorted(lin.terms, key=lambda t: -abs(t[1])):
        c = abs(c)
        if c <= 1 or k % c:
            continue
        q = Lin([], lin.const // c, lin.dtype)
        r = Lin([], lin.const % c, lin.dtype)
        for atom, coef in lin.terms:
            if coef % c == 0:
                q._add_term(atom, coef // c)
            else:
                r._add_term(atom, coef)
        b = bound_lin(r, bounds)
        if q.terms and b is not None and b[0] >= 0 and b[1] < c:
            return E.LT(to_expr(_order(q, bounds)), E.IntImm(lin.dtype, k // c), "bool")
    return None


def _is_int(e):
    return getattr(e, "dtype", "").startswith(("int", "uint"))


def _true(e):
    return isinstance(e, E.IntImm) and e.value == 1 and e.dtype == "bool"


def _order(lin: Lin, bounds) -> Lin:
    """TVM's order for a binding: terms over loop variables first (larger scale first, a
    division by more first), then terms over other symbols, then the constant."""
    def key(t):
        atom, coef = t
        looped = all(id(v) in bounds for v in _atom_vars(atom))
        lower = atom[2] if atom[0] == "div" else 1
        return (0 if looped else 1, -abs(coef), -lower)
    return Lin(sorted(lin.terms, key=key), lin.const, lin.dtype)


def _atom_vars(atom):
    if atom[0] == "var":
        return [atom[1]]
    if atom[0] in ("div", "mod"):
        return [v for a, _ in atom[1].terms for v in _atom_vars(a)]
    return []


def simplify(e, bounds=None, binding=False):
    """Simplify an integer expression given variable bounds (`binding`: an iterator binding,
    written the way TVM writes those)."""
    bounds = bounds or {}
    if not _is_int(e) or type(e) not in _INT_OPS + (E.IntImm, E.Var, E.SizeVar):
        return _simplify_other(e, bounds)
    return to_expr(_order(_merge(to_lin(e, bounds)), bounds), neg_add=binding)


def bound_of(e, bounds):
    if not _is_int(e):
        return None
    return bound_lin(to_lin(e, bounds), bounds)


def loop_bounds(loops) -> dict:
    """Bounds for the loop variables of constant-extent loops."""
    out = {}
    for f in loops:
        if isinstance(f.min, E.IntImm) and isinstance(f.extent, E.IntImm):
            out[id(f.loop_var)] = (f.min.value, f.min.value + f.extent.value - 1)
    return out


def simplify_deep(node, bounds=None):
    """Every integer arithmetic subexpression under `node` simplified (as TVM's Simplify
    does after a substitution)."""
    from . import _ir
    bounds = bounds or {}

    import math

    def fn(y, x):
        if isinstance(y, E.Cast):
            v = y.value
            if v.dtype == y.dtype:
                return v
            if _is_int(y) and isinstance(v, (E.IntImm, E.FloatImm)) and math.isfinite(v.value):
                return E.IntImm(y.dtype, int(v.value))
            return None
        if type(y) in _INT_OPS and _is_int(y):
            return simplify(y, bounds)
        return None
    return _ir.rebuild(node, fn)
