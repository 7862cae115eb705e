"""Index expressions simplified by arith's tables and written back into the IR the way TVM
prints them: the arithmetic of the schedule primitives.

    simplify(e, bounds)     bounds: id(Var) -> (lo, hi) inclusive; a var with lo == hi
                            becomes lo only when `bounds` is a `Bounds` that lists it in
                            `fold` (TVM keeps unit loop variables)
    bound_of(e, bounds)     (lo, hi) or None
    to_form(e, bounds)      the `Aff` of e with its `dtype`, keys in TVM's order of first
                            appearance: Vars, fdiv / fmod atoms, and opaque atoms (`expr`)
    to_expr(form)           the form written back (`x - 1`, `9 - i`, or `x + -1` in bindings)

Every form that comes out of here has only Var, "fdiv", "fmod" and "opaque" keys (a product,
min or max of non-constant forms becomes an opaque term written as TVM writes it).
"""
from __future__ import annotations

from ..ir import expr as E
from . import simplify as S
from .affine import Aff, Atom
from .interval import Analyzer, RangesById

_INT_OPS = (E.Add, E.Sub, E.Mul, E.FloorDiv, E.FloorMod)


class Bounds(dict):
    """Variable bounds, id(var) -> (lo, hi) inclusive, with `fold`: the ids of the unit-range
    variables that stand for their value (an immutable set fixed when the bounds are made)."""
    __slots__ = ("fold",)

    def __init__(self, items=(), fold=frozenset()):
        super().__init__(items)
        self.fold = frozenset(fold)


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


class TvmAnalyzer(Analyzer):
    """An Analyzer over a bounds dict, for numeric bounds only: a floor division or modulo
    is bounded even over free symbols (`n % 8` in [0, 7], not the symbol itself), a modulo
    whose argument leaves [0, c) by [0, c - 1] (as TVM's regions do, even where the argument
    stays in one block); products, min and max are not bounded (TVM's bindings keep the
    extents a product of loop variables would narrow)."""

    def __init__(self, bounds):
        super().__init__()
        self.ranges = RangesById(bounds)
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
    return TvmAnalyzer(bounds)


# ---- forms ----------------------------------------------------------------------------------
def _written(x: Aff, dt, bounds) -> Aff:
    """x with dtype dt, its products, min and max turned into opaque terms as TVM writes them
    (inside divisions too)."""
    terms = {}
    for k, v in x.terms.items():
        k = _written_key(k, dt, bounds)
        terms[k] = terms.get(k, 0) + v
    return Aff(terms, x.const, dt)


def _written_key(k, dt, bounds):
    if not isinstance(k, Atom) or k.kind == "opaque" and \
            (not k.args or isinstance(k.expr, (E.Call, E.BufferLoad))):
        return k                # (a call or a load is written back as it stands)
    if k.kind in ("fdiv", "fmod"):
        return Atom(k.kind, (_written(k.args[0], dt, bounds),), k.c)
    a, b = (_written(x, dt, bounds) for x in k.args)
    if k.kind in ("min", "max"):
        # TVM simplifies both sides of a min / max
        e = (E.Min if k.kind == "min" else E.Max)(
            to_expr(order(join(a), bounds)), to_expr(order(join(b), bounds)), dt)
    else:
        e = (E.Mul if k.kind == "mul" else type(k.expr))(to_expr(a), to_expr(b), dt)
    return Atom("opaque", (), 0, e)


def to_form(e, bounds) -> Aff:
    """The form of `e` (a sum keeps its parts; see `join`)."""
    an = analyzer(bounds)
    return _written(S.to_aff(e, an, _Folded(bounds), exact=True),
                    getattr(e, "dtype", "int32"), bounds)


def const_form(value: int, dtype="int32") -> Aff:
    return Aff({}, value, dtype)


def divmod_form(a: Aff, c: int, is_div: bool, bounds) -> Aff:
    """a // c or a % c by arith's FDIV_RULES / FMOD_RULES."""
    an = analyzer(bounds)
    return _written(S.fdiv(a, c, an) if is_div else S.fmod(a, c, an), a.dtype, bounds)


def join(x: Aff) -> Aff:
    """arith's SUM_RULES: `(x // c) * (k*c) + (x % c) * k` -> `x * k`."""
    y = S.join(x)
    return x if y is x else Aff(y.terms, y.const, x.dtype)


def bound_form(x: Aff, bounds):
    lo, hi = analyzer(bounds).const_bound(x)
    return None if lo is None or hi is None else (lo, hi)


def bound_key(k, bounds):
    return bound_form(Aff.of(k), bounds)


def is_var(k) -> bool:
    return not isinstance(k, Atom)


def is_div(k) -> bool:
    return isinstance(k, Atom) and k.kind == "fdiv"


def is_mod(k) -> bool:
    return isinstance(k, Atom) and k.kind == "fmod"


def key_vars(k):
    """The variables of a key: itself, or those inside a division's argument (an opaque
    term has none here)."""
    if not isinstance(k, Atom):
        return [k]
    if k.kind in ("fdiv", "fmod"):
        return [v for a in k.args[0].terms for v in key_vars(a)]
    return []


# ---- TVM's printing -------------------------------------------------------------------------
def key_expr(k, dtype):
    """The expression a key of a form stands for."""
    if not isinstance(k, Atom):
        return k
    if k.kind == "opaque":
        return k.expr
    inner = to_expr(Aff(k.args[0].terms, k.args[0].const, dtype))
    c = E.IntImm(dtype, k.c)
    return E.FloorDiv(inner, c, dtype) if k.kind == "fdiv" else E.FloorMod(inner, c, dtype)


def to_expr(form: Aff, neg_add=False):
    """The expression of a form; a negative constant is subtracted (`x - 1`), or added
    (`x + -1`, TVM's form for iterator bindings) when neg_add."""
    dt = form.dtype
    out = None
    items = list(form.terms.items())
    const = form.const
    if items and items[0][1] < 0 and const > 0:
        # `9 - i`, not `0 - i + 9`
        out = E.IntImm(dt, const)
        const = 0
    for a, c in items:
        x = key_expr(a, dt)
        mag = abs(c)
        term = x if mag == 1 else E.Mul(x, E.IntImm(dt, mag), dt)
        if out is None:
            out = term if c > 0 else E.Mul(x, E.IntImm(dt, c), dt) if mag != 1 else \
                E.Sub(E.IntImm(dt, 0), x, dt)
        else:
            out = E.Add(out, term, dt) if c > 0 else E.Sub(out, term, dt)
    if out is None:
        return E.IntImm(dt, const)
    if const > 0 or const < 0 and neg_add:
        out = E.Add(out, E.IntImm(dt, const), dt)
    elif const < 0:
        out = E.Sub(out, E.IntImm(dt, -const), dt)
    return out


def order(form: Aff, bounds) -> Aff:
    """TVM's order for a binding: terms over loop variables first (larger scale first, a
    division by more first), then terms over other symbols, then the constant."""
    def rank(t):
        key, coef = t
        looped = all(id(v) in bounds for v in key_vars(key))
        lower = key.c if is_div(key) else 1
        return (0 if looped else 1, -abs(coef), -lower)
    return Aff(dict(sorted(form.terms.items(), key=rank)), form.const, form.dtype)


# ---- conditions -----------------------------------------------------------------------------
def _simplify_other(e, bounds):
    t = type(e)
    if t is E.LT:
        a, b = simplify(e.a, bounds), simplify(e.b, bounds)
        if is_int(a) and is_int(b):
            d = to_form(a, bounds) - to_form(b, bounds)
            bd = bound_form(d, bounds)
            if bd is not None and (bd[1] < 0 or bd[0] >= 0):
                return E.IntImm("bool", int(bd[1] < 0))
            if isinstance(b, E.IntImm):
                # arith's LT_RULES: `q * c + r < k` with 0 <= r < c is `q < k / c`
                r = S.lt_const(to_form(a, bounds), b.value, analyzer(bounds))
                if r is not None:
                    q = order(_written(r[0], a.dtype, bounds), bounds)
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


def is_int(e) -> bool:
    """Is e an integer (not boolean) expression?"""
    return getattr(e, "dtype", "").startswith(("int", "uint"))


def _true(e):
    return isinstance(e, E.IntImm) and e.value == 1 and e.dtype == "bool"


# ---- entry points ---------------------------------------------------------------------------
def simplify(e, bounds=None, binding=False):
    """Simplify an integer expression given variable bounds (`binding`: an iterator binding,
    written the way TVM writes those)."""
    bounds = bounds or {}
    if not is_int(e) or type(e) not in _INT_OPS + (E.IntImm, E.Var, E.SizeVar):
        return _simplify_other(e, bounds)
    return to_expr(order(join(to_form(e, bounds)), bounds), neg_add=binding)


def bound_of(e, bounds):
    if not is_int(e):
        return None
    return bound_form(to_form(e, bounds), bounds)


def loop_bounds(loops) -> dict:
    """Bounds for the loop variables of constant-extent loops."""
    out = {}
    for f in loops:
        if isinstance(f.min, E.IntImm) and isinstance(f.extent, E.IntImm):
            out[id(f.loop_var)] = (f.min.value, f.min.value + f.extent.value - 1)
    return out


def is_opaque(k) -> bool:
    return isinstance(k, Atom) and k.kind == "opaque"
