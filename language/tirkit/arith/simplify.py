"""Index-expression simplifier: PrimExpr -> `Aff`, by rewrite tables.

Each table row is `(name, rewrite)` with a one-line comment; a rewrite returns an `Aff` or
None when it does not apply, and the first row that applies wins.  Ranges (for the rules
that need `0 <= r < c`) come from the `Analyzer` passed in; its `rules_off` names the rows
of FDIV_RULES, FMOD_RULES and LT_RULES it does without (the schedule writes results back
the way TVM prints them, without some of them).
"""
from __future__ import annotations

from math import gcd

from ..ir import expr as E
from .affine import Aff, Atom


def _split_by(x: Aff, c: int):
    """x = c*q + r: q holds the terms whose coefficient c divides, r the rest (const in [0,c))."""
    q, r = {}, {}
    for k, v in x.terms.items():
        if v % c == 0:
            q[k] = v // c
        else:
            r[k] = v
    return Aff(q, x.const // c), Aff(r, x.const % c)


# ---- floordiv(x, c), c > 0 ---------------------------------------------------------------
def _fdiv_const(x, c, an):
    # k // c -> floor(k / c) for a constant k
    return Aff({}, x.const // c) if x.is_const() else None


def _fdiv_one(x, c, an):
    # x // 1 -> x
    return x if c == 1 else None


def _fdiv_whole(x, c, an):
    # (c*q + r) // c -> q when 0 <= r < c: the rest vanishes
    q, r = _split_by(x, c)
    lo, hi = an.const_bound(r)
    return q if lo is not None and hi is not None and lo >= 0 and hi < c else None


def _fdiv_pull(x, c, an):
    # (c*q + r) // c -> q + r // c: multiples of c leave the division
    q, r = _split_by(x, c)
    if q.is_const() and q.const == 0:
        return None
    return q + fdiv(r, c, an)


def _fdiv_small(x, c, an):
    # r // c -> 0 when 0 <= r < c
    lo, hi = an.const_bound(x)
    if lo is not None and hi is not None and lo >= 0 and hi < c:
        return Aff()
    return None


def _fdiv_block(x, c, an):
    # r // c -> k when r stays within one block [k*c, k*c + c)
    lo, hi = an.const_bound(x)
    if lo is not None and hi is not None and lo // c == hi // c:
        return Aff({}, lo // c)
    return None


def _fdiv_gcd(x, c, an):
    # (g*y + k) // (g*c') -> y // c' for 0 <= k < g (g divides every coefficient and c)
    g = gcd(x.coeff_gcd(), c)
    if g <= 1:
        return None
    y = Aff({k: v // g for k, v in x.terms.items()}, x.const // g)
    return fdiv(y, c // g, an)


def _fdiv_nested(x, c, an):
    # (y // a) // c -> y // (a*c)
    if x.const == 0 and len(x.terms) == 1:
        (k, v), = x.terms.items()
        if v == 1 and isinstance(k, Atom) and k.kind == "fdiv":
            return fdiv(k.args[0], k.c * c, an)
    return None


def _fdiv_of_mod(x, c, an):
    # (y % (c*m)) // c -> (y // c) % m: one canonical form for a digit of y
    if x.const == 0 and len(x.terms) == 1:
        (k, v), = x.terms.items()
        if v == 1 and isinstance(k, Atom) and k.kind == "fmod" and k.c % c == 0:
            return fmod(fdiv(k.args[0], c, an), k.c // c, an)
    return None


FDIV_RULES = [
    ("const", _fdiv_const),
    ("one", _fdiv_one),
    ("whole-multiples", _fdiv_whole),
    ("pull-multiples", _fdiv_pull),
    ("zero", _fdiv_small),
    ("one-block", _fdiv_block),
    ("gcd", _fdiv_gcd),
    ("nested", _fdiv_nested),
    ("of-mod", _fdiv_of_mod),
]


# ---- floormod(x, c), c > 0 ---------------------------------------------------------------
def _fmod_const(x, c, an):
    # k % c -> k mod c for a constant k
    return Aff({}, x.const % c) if x.is_const() else None


def _fmod_one(x, c, an):
    # x % 1 -> 0
    return Aff() if c == 1 else None


def _fmod_drop(x, c, an):
    # (c*q + r) % c -> r % c: multiples of c vanish
    q, r = _split_by(x, c)
    if q.is_const() and x.const == r.const:
        return None
    return fmod(r, c, an)


def _fmod_small(x, c, an):
    # r % c -> r when 0 <= r < c
    lo, hi = an.const_bound(x)
    if lo is not None and hi is not None and lo >= 0 and hi < c:
        return x
    return None


def _fmod_gcd(x, c, an):
    # (g*y + k) % (g*c') -> g*(y % c') + k for 0 <= k < g
    g = gcd(x.coeff_gcd(), c)
    if g <= 1:
        return None
    y = Aff({k: v // g for k, v in x.terms.items()}, x.const // g)
    return fmod(y, c // g, an).scale(g) + (x.const % g)


def _fmod_nested(x, c, an):
    # (y % (c*m)) % c -> y % c
    if x.const == 0 and len(x.terms) == 1:
        (k, v), = x.terms.items()
        if v == 1 and isinstance(k, Atom) and k.kind == "fmod" and k.c % c == 0:
            return fmod(k.args[0], c, an)
    return None


FMOD_RULES = [
    ("const", _fmod_const),
    ("one", _fmod_one),
    ("drop-multiples", _fmod_drop),
    ("small", _fmod_small),
    ("gcd", _fmod_gcd),
    ("nested", _fmod_nested),
]


def fdiv(x: Aff, c: int, an) -> Aff:
    for name, rule in FDIV_RULES:
        if name not in an.rules_off:
            r = rule(x, c, an)
            if r is not None:
                return r
    return Aff.of(Atom("fdiv", (x,), c))


def fmod(x: Aff, c: int, an) -> Aff:
    for name, rule in FMOD_RULES:
        if name not in an.rules_off:
            r = rule(x, c, an)
            if r is not None:
                return r
    return Aff.of(Atom("fmod", (x,), c))


# ---- sums ---------------------------------------------------------------------------------
def _sum_join(x):
    # (y // c) * (k*c) + (y % c) * k -> y * k: a quotient and its remainder rejoin
    for d, cd in x.terms.items():
        if not (isinstance(d, Atom) and d.kind == "fdiv"):
            continue
        m = Atom("fmod", d.args, d.c)
        cm = x.terms.get(m)
        if not cm or cd != cm * d.c:
            continue
        y = d.args[0]
        out = {}
        for k, v in x.terms.items():
            if k == d:                           # y * k takes the quotient's place
                for k2, v2 in y.terms.items():
                    out[k2] = out.get(k2, 0) + v2 * cm
            elif k != m:
                out[k] = out.get(k, 0) + v
        return Aff(out, x.const + y.const * cm)
    return None


SUM_RULES = [
    ("join-div-mod", _sum_join),
]


def join(x: Aff) -> Aff:
    """The sum rules applied until none applies."""
    if not any(isinstance(k, Atom) and k.kind == "fdiv" for k in x.terms):
        return x
    while True:
        for _, rule in SUM_RULES:
            r = rule(x)
            if r is not None:
                x = r
                break
        else:
            return x


# ---- comparisons with a constant: x < k -------------------------------------------------
def _lt_scaled(x, k, an):
    # c*q + r < k -> q < k / c when 0 <= r < c and c divides k (the largest such c)
    for c in sorted({abs(v) for v in x.terms.values()}, reverse=True):
        if c <= 1 or k % c:
            continue
        q, r = _split_by(x, c)
        lo, hi = an.const_bound(r)
        if q.terms and lo is not None and hi is not None and lo >= 0 and hi < c:
            return q, k // c
    return None


LT_RULES = [
    ("scaled", _lt_scaled),
]


def lt_const(x: Aff, k: int, an):
    """`x < k` rewritten by the first row of LT_RULES that applies, as (x', k'); or None."""
    for name, rule in LT_RULES:
        if name not in an.rules_off:
            r = rule(x, k, an)
            if r is not None:
                return r
    return None


# ---- products, min and max ---------------------------------------------------------------
def _mul(a, b, e, an):
    # a * k or k * b -> scaled form; two non-constant factors -> a product atom
    if a.is_const():
        return b.scale(a.const)
    if b.is_const():
        return a.scale(b.const)
    return Aff.of(Atom("mul", (a, b), 0, e))


def _minmax(kind, a, b, e, an):
    # min/max(a, b) -> the side the ranges prove smaller/larger; else a min/max atom
    d = a - b
    lo, hi = an.bound(d)
    if kind == "min":
        if hi is not None and hi.is_const() and hi.const <= 0:
            return a
        if lo is not None and lo.is_const() and lo.const >= 0:
            return b
    else:
        if lo is not None and lo.is_const() and lo.const >= 0:
            return a
        if hi is not None and hi.is_const() and hi.const <= 0:
            return b
    return Aff.of(Atom(kind, (a, b), 0, e))


def _div_const(kind, a, b, e, an):
    # x // c and x % c with a positive constant c -> the floor tables; anything else is opaque
    if b.is_const() and b.const > 0:
        if kind in ("div", "mod"):       # truncating: equal to floor when x >= 0
            lo, _ = an.const_bound(a)
            if lo is None or lo < 0:
                return None
        return fdiv(a, b.const, an) if kind in ("fdiv", "div") else fmod(a, b.const, an)
    return None


# PrimExpr node -> Aff (children converted first); None: opaque
BINARY = {
    E.Add: lambda a, b, e, an: join(a + b),                 # a + b: add the forms, SUM_RULES
    E.Sub: lambda a, b, e, an: join(a - b),                 # a - b: subtract, SUM_RULES
    E.Mul: lambda a, b, e, an: join(_mul(a, b, e, an)),     # a * b: scale or a product atom
    E.FloorDiv: lambda a, b, e, an: _div_const("fdiv", a, b, e, an),   # a // c: FDIV_RULES
    E.FloorMod: lambda a, b, e, an: _div_const("fmod", a, b, e, an),   # a % c: FMOD_RULES
    E.Div: lambda a, b, e, an: _div_const("div", a, b, e, an),         # truncdiv = floordiv, a >= 0
    E.Mod: lambda a, b, e, an: _div_const("mod", a, b, e, an),         # truncmod = floormod, a >= 0
    E.Min: lambda a, b, e, an: _minmax("min", a, b, e, an),            # min: decided or an atom
    E.Max: lambda a, b, e, an: _minmax("max", a, b, e, an),            # max: decided or an atom
}


# the nodes a form that is written back into the IR looks through (`exact`): casts, calls
# and truncating division stay opaque terms there
EXACT = {
    E.Add: lambda a, b, e, an: a + b,           # a + b: add the forms, a written sum kept
    E.Sub: lambda a, b, e, an: a - b,           # a - b: subtract the forms, likewise
    E.Mul: BINARY[E.Mul],                       # a * b: as BINARY (a scaled sum rejoins)
    E.FloorDiv: BINARY[E.FloorDiv],             # a // c: FDIV_RULES
    E.FloorMod: BINARY[E.FloorMod],             # a % c: FMOD_RULES
    E.Min: BINARY[E.Min],                       # min: decided or an atom
    E.Max: BINARY[E.Max],                       # max: decided or an atom
}


# T.<name>(a, b) call spellings of the arithmetic operators
CALL_OPS = {k: v for k, v in E.CALL_OPERATORS.items() if v in E.ARITH}


def to_aff(e, an, env=None, exact=False) -> Aff:
    """The affine form of an integer expression; what is not affine becomes an atom.
    `exact`: only the nodes of EXACT are looked through (casts, calls, truncating division
    stay opaque), for forms that are written back into the IR."""
    t = type(e)
    if t is E.IntImm:
        return Aff({}, int(e.value))
    if t is E.Var or t is E.SizeVar:
        if env is not None:
            b = env.get(e)
            if b is not None:
                return b if isinstance(b, Aff) else to_aff(b, an, env, exact)
        return Aff.of(e)
    if t is int:
        return Aff({}, e)
    rule = (EXACT if exact else BINARY).get(t)
    if rule is not None:
        a = to_aff(e.a, an, env, exact)
        b = to_aff(e.b, an, env, exact)
        r = rule(a, b, e, an)
        if r is not None:
            return r
        return Aff.of(Atom("opaque", (a, b), 0, e))
    if t is E.Call and not (e.op in CALL_OPS and len(e.args) == 2 and not exact):
        return Aff.of(_call_atom(e, e.args, an, env, exact))
    if t is E.BufferLoad:
        return Aff.of(_call_atom(e, e.indices, an, env, exact))
    if exact:
        return Aff.of(Atom("opaque", (), 0, e))
    if t is E.Cast and not e.dtype.startswith(("float", "bfloat")):
        return to_aff(e.value, an, env)
    if t is E.Call:
        # T.Add(a, b), T.floordiv(a, b), ... spelled as calls: the operator itself
        return to_aff(CALL_OPS[e.op](e.args[0], e.args[1], e.dtype), an, env)
    return Aff.of(Atom("opaque", (), 0, e))


def _call_atom(e, operands, an, env, exact):
    """A call (`T.bitwise_xor(tx, j)`, `T.if_then_else(...)`) or a load (`P[tx]`) as an
    opaque term whose arguments are the forms of its integer operands (a call's arguments, a
    load's indices): the term varies with their variables, so its bounds over their ranges
    are unknown; where none of them is ranged it stays one symbol (`A_indptr[i]` for a fixed
    `i`)."""
    args = tuple(to_aff(x, an, env, exact) for x in operands
                 if isinstance(x, E.PrimExpr) and str(getattr(x, "dtype", "")).startswith(
                     ("int", "uint")))
    return Atom("opaque", args, 0, e)

