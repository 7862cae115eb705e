"""The schedule's view of `tirkit.arith`: integer index expressions simplified by arith's
tables (affine form, floordiv/floormod rules, interval bounds) and written back the way TVM
prints them.

    simplify(e, bounds)     bounds: id(Var) -> (lo, hi) inclusive; a var with lo == hi
                            becomes lo only when `bounds` is a `Bounds` that lists it in
                            `fold` (TVM keeps unit loop variables)
    bound_of(e, bounds)     (lo, hi) or None
    to_lin(e, bounds)       the linear form as a `Lin`: terms [[atom, coef]] in TVM's order of
                            first appearance, atoms ("var", v), ("div", Lin, c), ("mod", Lin, c)
                            or ("opaque", expr)

What is here: the `Lin` view of an `Aff`, the bounds-dict -> `Analyzer` bridge, and TVM's
printing (term order, `x + -1` in bindings, `9 - i`).
"""
from __future__ import annotations

from ..arith import simplify as S
from ..arith.affine import Aff, Atom
from ..arith.interval import Analyzer
from ..ir import expr as E



class Bounds(dict):
    """Variable bounds, id(var) -> (lo, hi) inclusive, with `fold`: the ids of the unit-range
    variables that stand for their value (an immutable set fixed when the bounds are made)."""
    __slots__ = ("fold",)

    def __init__(self, items=(), fold=frozenset()):
        super().__init__(items)
        self.fold = frozenset(fold)

_INT_OPS = (E.Add, E.Sub, E.Mul, E.FloorDiv, E.FloorMod)


class Lin:
    """A linear form as a list of [atom, coef] in order of first appearance."""
    __slots__ = ("terms", "const", "dtype")

    def __init__(self, terms=None, const=0, dtype="int32"):
        self.terms = terms or []
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


# ---- the bridge: bounds dict -> Analyzer, Lin <-> Aff ----------------------------------------
class _Ranges:
    """An Analyzer's `ranges` read from a bounds dict keyed by id(var).  The end points of an
    empty loop (extent 0: `(0, -1)`) are taken in order, `[-1, 0]`, so that no division
    by it vanishes (TVM keeps `i // 8` over an empty loop)."""
    __slots__ = ("bounds",)

    def __init__(self, bounds):
        self.bounds = bounds

    def get(self, var, default=None):
        b = self.bounds.get(id(var))
        return default if b is None else self[var]

    def __getitem__(self, var):
        lo, hi = self.bounds[id(var)]
        return (Aff({}, lo), Aff({}, hi)) if lo <= hi else (Aff({}, hi), Aff({}, lo))

    def __contains__(self, var):
        return id(var) in self.bounds


class _Folded:
    """to_aff's env: the `fold` variables of unit range stand for their value."""
    __slots__ = ("bounds", "fold")

    def __init__(self, bounds):
        self.bounds = bounds
        self.fold = getattr(bounds, "fold", ())

    def get(self, var):
        if id(var) not in self.fold:
            return None
        b = self.bounds.get(id(var))
        return Aff({}, b[0]) if b is not None and b[0] == b[1] else None


# arith rows TVM's simplifier does not apply where the schedule writes results back:
# `(4*a + b) // 2` stays whole (multiples leave a division only when the rest vanishes:
# "whole-multiples"; `(k - 1) // 12` is not tested as a whole either), `(16*a + 8*b) // 32`
# stays (no common factor taken out), `(y % 8) // 2` stays a digit of the remainder
TVM_OFF = frozenset({"pull-multiples", "zero", "gcd", "of-mod"})


class _Bridge(Analyzer):
    """An Analyzer over a bounds dict, for numeric bounds only: a floor division or modulo
    is bounded even over free symbols (`n % 8` in [0, 7], not the symbol itself), a modulo
    whose argument leaves [0, c) by [0, c - 1] (as TVM's regions do, even where the argument
    stays in one block); products, min and max are not bounded (TVM's bindings keep the
    extents a product of loop variables would narrow)."""

    def __init__(self, bounds):
        super().__init__()
        self.ranges = _Ranges(bounds)
        self.rules_off = TVM_OFF

    def _bound_key(self, k):
        if isinstance(k, Atom) and k.kind in ("fdiv", "fmod"):
            return self._bound_atom(k)
        return super()._bound_key(k)

    def _bound_atom(self, k):
        if k.kind in ("mul", "min", "max"):
            return None, None
        if k.kind == "fmod":
            lo, hi = self.const_bound(k.args[0])
            if lo is not None and hi is not None and 0 <= lo and hi < k.c:
                return Aff({}, lo), Aff({}, hi)
            return Aff({}, 0), Aff({}, k.c - 1)
        return super()._bound_atom(k)


def analyzer(bounds) -> Analyzer:
    return _Bridge(bounds)


def _aff(lin: Lin, memo) -> Aff:
    terms = {}
    for atom, coef in lin.terms:
        kind = atom[0]
        if kind == "var":
            k = atom[1]
        elif kind in ("div", "mod"):
            k = Atom("fdiv" if kind == "div" else "fmod", (_aff(atom[1], memo),), atom[2])
        else:
            k = Atom("opaque", (), 0, atom[1])
            memo[k] = atom
        terms[k] = terms.get(k, 0) + coef
    return Aff(terms, lin.const)


def _lin(x: Aff, dt, bounds, memo=None) -> Lin:
    return Lin([[_atom(k, dt, bounds, memo), v] for k, v in x.terms.items()], x.const, dt)


def _atom(k, dt, bounds, memo):
    if not isinstance(k, Atom):
        return ("var", k)
    if k.kind in ("fdiv", "fmod"):
        return ("div" if k.kind == "fdiv" else "mod", _lin(k.args[0], dt, bounds, memo), k.c)
    if memo and k in memo:
        return memo[k]
    if k.kind == "opaque" and not k.args:
        return ("opaque", k.expr)
    a, b = (_lin(x, dt, bounds, memo) for x in k.args)
    if k.kind in ("min", "max"):
        # TVM simplifies both sides of a min / max
        e = (E.Min if k.kind == "min" else E.Max)(
            to_expr(_order(_merge(a), bounds)), to_expr(_order(_merge(b), bounds)), dt)
    else:
        e = (E.Mul if k.kind == "mul" else type(k.expr))(to_expr(a), to_expr(b), dt)
    return ("opaque", e)


def to_lin(e, bounds) -> Lin:
    """The linear form of `e` (a sum keeps its parts; see `_merge`)."""
    an = analyzer(bounds)
    return _lin(S.to_aff(e, an, _Folded(bounds), exact=True), getattr(e, "dtype", "int32"),
                bounds)


def _divmod(a: Lin, c: int, is_div: bool, bounds) -> Lin:
    """a // c or a % c by arith's FDIV_RULES / FMOD_RULES."""
    memo = {}
    x = _aff(a, memo)
    an = analyzer(bounds)
    return _lin(S.fdiv(x, c, an) if is_div else S.fmod(x, c, an), a.dtype, bounds, memo)


def _merge(lin: Lin) -> Lin:
    """arith's SUM_RULES: `(x // c) * (k*c) + (x % c) * k` -> `x * k`."""
    memo = {}
    x = _aff(lin, memo)
    y = S.join(x)
    return lin if y is x else _lin(y, lin.dtype, {}, memo)


def bound_lin(lin, bounds):
    lo, hi = analyzer(bounds).const_bound(_aff(lin, {}))
    return None if lo is None or hi is None else (lo, hi)


def bound_atom(a, bounds):
    return bound_lin(Lin([[a, 1]]), bounds)


# ---- TVM's printing -------------------------------------------------------------------------
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


# ---- conditions -----------------------------------------------------------------------------
def _simplify_other(e, bounds):
    t = type(e)
    if t is E.LT:
        a, b = simplify(e.a, bounds), simplify(e.b, bounds)
        if _is_int(a) and _is_int(b):
            d = to_lin(a, bounds).add(to_lin(b, bounds), -1)
            bd = bound_lin(d, bounds)
            if bd is not None and (bd[1] < 0 or bd[0] >= 0):
                return E.IntImm("bool", int(bd[1] < 0))
            if isinstance(b, E.IntImm):
                # arith's LT_RULES: `q * c + r < k` with 0 <= r < c is `q < k / c`
                an = analyzer(bounds)
                memo = {}
                r = S.lt_const(_aff(to_lin(a, bounds), memo), b.value, an)
                if r is not None:
                    q = _order(_lin(r[0], a.dtype, bounds, memo), bounds)
                    return E.LT(to_expr(q), E.IntImm(a.dtype, r[1]), "bool")
        return t(a, b, e.dtype)
    if t in (E.LE, E.GT, E.GE, E.EQ, E.NE, E.Or):
        return t(simplify(e.a, bounds), simplify(e.b, bounds), e.dtype)
    if t is E.And:
        a, b = simplify(e.a, bounds), simplify(e.b, bounds)
        return b if _true(a) else a if _true(b) else t(a, b, e.dtype)
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


def _is_int(e):
    return getattr(e, "dtype", "").startswith(("int", "uint"))


def _true(e):
    return isinstance(e, E.IntImm) and e.value == 1 and e.dtype == "bool"


# ---- the schedule's entry points ------------------------------------------------------------
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
