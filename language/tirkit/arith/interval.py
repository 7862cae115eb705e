"""Interval analysis over affine forms, with symbolic end points.

An `Analyzer` knows the range of some variables (loops, block iterators: inclusive bounds as
`Aff`, possibly symbolic) and a list of constraints from predicates and guards
(`lo <= C <= hi` for an affine `C`).  `bound(x)` gives inclusive `(lo, hi)` end points as
`Aff` (None: unbounded); variables without a range stay symbolic in the end points.
Free symbols (shape variables) are taken as non-negative by the `prove_*` helpers.
"""
from __future__ import annotations

from ..ir import expr as E
from .affine import Aff, Atom
from . import simplify

# comparison node -> (lhs - rhs) lower bound, upper bound offsets: `a < b` is `a - b <= -1`
COMPARE = {
    E.LT: (None, -1),     # a < b   ->  a - b <= -1
    E.LE: (None, 0),      # a <= b  ->  a - b <= 0
    E.GT: (1, None),      # a > b   ->  a - b >= 1
    E.GE: (0, None),      # a >= b  ->  a - b >= 0
    E.EQ: (0, 0),         # a == b  ->  a - b == 0
}


# not (a OP b) -> a OP' b
NEGATE = {E.LT: E.GE, E.LE: E.GT, E.GT: E.LE, E.GE: E.LT}


class RangesById:
    """An Analyzer's `ranges` read from numeric bounds keyed by variable identity,
    `{id(var): (lo, hi)}` inclusive.  The end points of an empty loop (extent 0: `(0, -1)`)
    are taken in order, `[-1, 0]`."""
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


def interval(e, ranges):
    """Numeric inclusive bounds (lo, hi) of integer expression `e` whose variables range
    over `ranges` ({id(var): (lo, hi)}); None when either end is unknown."""
    t = type(e)
    if t is E.IntImm:
        return e.value, e.value
    if t is E.Var or t is E.SizeVar:
        return ranges.get(id(e))
    if t is E.Ramp:
        base, stride = interval(e.base, ranges), interval(e.stride, ranges)
        if base is None or stride is None or stride[0] != stride[1]:
            return None
        last = stride[0] * (e.lanes - 1)
        return base[0] + min(0, last), base[1] + max(0, last)
    an = Analyzer()
    an.ranges = RangesById(ranges)
    lo, hi = an.const_bound(an.to_aff(e))
    return None if lo is None or hi is None else (lo, hi)


class Analyzer:
    def __init__(self):
        self.ranges = {}            # Var -> (lo Aff, hi Aff), inclusive
        self.constraints = []       # [(Aff C, lo int|None, hi int|None)]
        self.atom_ranges = {}       # Atom -> (lo, hi) ints from constraints
        self.rules_off = frozenset()    # names of simplify's table rows not applied
        self._depth = 0

    # ---- facts -------------------------------------------------------------------------
    def bind(self, var, lo, hi):
        """var in [lo, hi] (inclusive); lo/hi are Aff or int."""
        self.ranges[var] = (_aff(lo), _aff(hi))

    def bind_extent(self, var, mn, extent, env=None):
        """var in [mn, mn + extent) for PrimExpr min and extent."""
        lo = self.to_aff(mn, env)
        ext = self.to_aff(extent, env)
        self.ranges[var] = (lo, lo + ext - 1)

    def assume(self, cond, env=None):
        """Record what a true condition says (conjunctions of comparisons; others ignored)."""
        if isinstance(cond, E.And):
            self.assume(cond.a, env)
            self.assume(cond.b, env)
            return
        if isinstance(cond, E.Call) and cond.op in ("likely",) and cond.args:
            self.assume(cond.args[0], env)
            return
        if isinstance(cond, E.Not) and type(cond.a) in NEGATE:
            c = cond.a
            self.assume(NEGATE[type(c)](c.a, c.b, c.dtype), env)
            return
        if isinstance(cond, E.Not) and isinstance(cond.a, E.Or):
            self.assume(E.Not(cond.a.a), env)
            self.assume(E.Not(cond.a.b), env)
            return
        off = COMPARE.get(type(cond))
        if off is None:
            return
        d = self.to_aff(cond.a, env) - self.to_aff(cond.b, env)
        lo, hi = off
        if d.is_const():
            return
        if len(d.terms) == 1:
            (k, v), = d.terms.items()
            if isinstance(k, Atom) and abs(v) == 1:
                # +-atom + c in [lo, hi]: remember the atom's own range
                if v == 1:
                    nlo = None if lo is None else lo - d.const
                    nhi = None if hi is None else hi - d.const
                else:
                    nlo = None if hi is None else d.const - hi
                    nhi = None if lo is None else d.const - lo
                olo, ohi = self.atom_ranges.get(k, (None, None))
                self.atom_ranges[k] = (_imax(olo, nlo), _imin(ohi, nhi))
            if not isinstance(k, Atom) and abs(v) == 1 and k in self.ranges:
                # +-k + c in [lo, hi]: tighten k's own range
                rlo, rhi = self.ranges[k]
                if v == 1:
                    nlo = None if lo is None else Aff({}, lo - d.const)
                    nhi = None if hi is None else Aff({}, hi - d.const)
                else:
                    nlo = None if hi is None else Aff({}, d.const - hi)
                    nhi = None if lo is None else Aff({}, d.const - lo)
                self.ranges[k] = (_tighter(rlo, nlo, self, True), _tighter(rhi, nhi, self, False))
        self.constraints.append((Aff(d.terms, 0), None if lo is None else lo - d.const,
                                 None if hi is None else hi - d.const))

    def copy(self):
        a = Analyzer()
        a.ranges = dict(self.ranges)
        a.constraints = list(self.constraints)
        a.atom_ranges = dict(self.atom_ranges)
        a.rules_off = self.rules_off
        return a

    # ---- conversion ----------------------------------------------------------------------
    def to_aff(self, e, env=None) -> Aff:
        if isinstance(e, Aff):
            return e
        if isinstance(e, int):
            return Aff({}, e)
        return simplify.to_aff(e, self, env)

    # ---- bounds --------------------------------------------------------------------------
    def bound(self, x: Aff):
        """Inclusive (lo, hi) of x as Aff end points; None where unbounded."""
        if self._depth > 12:
            return None, None
        self._depth += 1
        try:
            lo, hi = self._bound_terms(x)
            for c0, clo0, chi0 in self.constraints:
                # a constraint bounds c and -c alike
                for c, clo, chi in ((c0, clo0, chi0),
                                    (-c0, None if chi0 is None else -chi0,
                                     None if clo0 is None else -clo0)):
                    lo, hi = self._apply(x, c, clo, chi, lo, hi)
            if self.constraints:
                lo, hi = self._bound_joined(x, lo, hi)
            return lo, hi
        finally:
            self._depth -= 1

    def _apply(self, x, c, clo, chi, lo, hi):
        """Tighten (lo, hi) of x with the constraint clo <= c <= chi."""
        d = x - c
        if d.is_const() or all(k not in self.ranges and not isinstance(k, Atom)
                               for k in d.terms):
            if chi is not None:
                hi = _tighter(hi, d + chi, self, False)
            if clo is not None:
                lo = _tighter(lo, d + clo, self, True)
        else:
            # k*x = c + d for the k that cancels a shared term: k*x <= chi + max(d) and
            # k*x >= clo + min(d) (sums of bounds bound the sum, correlated or not)
            for key, cv in c.terms.items():
                xv = x.terms.get(key)
                if not xv or cv % xv or cv // xv <= 0:
                    continue
                k = cv // xv
                d = x.scale(k) - c
                if len(d.terms) >= len(x.terms) + len(c.terms):
                    continue
                dlo, dhi = self._bound_terms(d)
                if chi is not None and dhi is not None and dhi.is_const():
                    hi = _tighter(hi, Aff({}, (chi + dhi.const) // k), self, False)
                if clo is not None and dlo is not None and dlo.is_const():
                    lo = _tighter(lo, Aff({}, -((-(clo + dlo.const)) // k)), self, True)
                break
        return lo, hi

    def _bound_joined(self, x, lo, hi):
        """q + r // c is (c*q + r) // c for integer q: bound the joined numerator, which
        keeps the correlation a constraint on it states (`6*i + j < 18` bounds
        `2*i + j // 3` by 5 where the terms alone give 6)."""
        divs = [(k, v) for k, v in x.terms.items() if isinstance(k, Atom) and k.kind == "fdiv"]
        if len(divs) != 1 or divs[0][1] != 1:
            return lo, hi
        k, _ = divs[0]
        q = Aff({t: v for t, v in x.terms.items() if t is not k}, x.const)
        jlo, jhi = self.bound(q.scale(k.c) + k.args[0])
        if jhi is not None and jhi.is_const():
            hi = _tighter(hi, Aff({}, jhi.const // k.c), self, False)
        if jlo is not None and jlo.is_const():
            lo = _tighter(lo, Aff({}, jlo.const // k.c), self, True)
        return lo, hi

    def _bound_terms(self, x: Aff):
        lo = Aff({}, x.const)
        hi = Aff({}, x.const)
        for k, v in x.terms.items():
            klo, khi = self._bound_key(k)
            if v < 0:
                klo, khi = khi, klo
            lo = None if lo is None or klo is None else lo + klo.scale(v)
            hi = None if hi is None or khi is None else hi + khi.scale(v)
        return lo, hi

    def _bound_key(self, k):
        if not isinstance(k, Atom):
            r = self.ranges.get(k)
            if r is None:
                return Aff.of(k), Aff.of(k)          # a free symbol stays symbolic
            lo, hi = r
            # the end points may mention ranged variables themselves (outer loops)
            if lo is not None and any(j in self.ranges for j in lo.all_vars()):
                lo = self.bound(lo)[0]
            if hi is not None and any(j in self.ranges for j in hi.all_vars()):
                hi = self.bound(hi)[1]
            return lo, hi
        if not any(j in self.ranges for j in k.free_keys()):
            return Aff.of(k), Aff.of(k)          # nothing ranged inside: stays symbolic
        lo, hi = self._bound_atom(k)
        r = self.atom_ranges.get(k)
        if r is not None:
            if r[0] is not None:
                lo = _tighter(lo, Aff({}, r[0]), self, True)
            if r[1] is not None:
                hi = _tighter(hi, Aff({}, r[1]), self, False)
        return lo, hi

    def _bound_atom(self, k):
        if k.kind == "fdiv":
            alo, ahi = self.bound(k.args[0])
            # floor division by a positive constant is monotone
            return (None if alo is None else simplify.fdiv(alo, k.c, self),
                    None if ahi is None else simplify.fdiv(ahi, k.c, self))
        if k.kind == "fmod":
            alo, ahi = self.bound(k.args[0])
            if alo is not None and ahi is not None and alo.is_const() and ahi.is_const() \
                    and 0 <= alo.const and ahi.const < k.c:
                return alo, ahi
            if alo is not None and ahi is not None and alo.is_const() and ahi.is_const() \
                    and alo.const // k.c == ahi.const // k.c:
                return Aff({}, alo.const % k.c), Aff({}, ahi.const % k.c)
            return Aff({}, 0), Aff({}, k.c - 1)
        if k.kind in ("min", "max"):
            a = self.bound(k.args[0])
            b = self.bound(k.args[1])
            if k.kind == "min":
                return (_pick(a[0], b[0], self, True), _pick_any(a[1], b[1], self, True))
            return (_pick_any(a[0], b[0], self, False), _pick(a[1], b[1], self, False))
        if k.kind == "mul":
            a = self.const_bound(k.args[0])
            b = self.const_bound(k.args[1])
            if None in a or None in b:
                return None, None
            ps = [a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1]]
            return Aff({}, min(ps)), Aff({}, max(ps))
        return None, None

    def const_bound(self, x: Aff):
        """Numeric (lo, hi) of x; None where not a constant."""
        lo, hi = self.bound(x)
        return (lo.const if lo is not None and lo.is_const() else None,
                hi.const if hi is not None and hi.is_const() else None)

    # ---- proofs --------------------------------------------------------------------------
    def prove_nonneg(self, x: Aff) -> bool:
        lo, _ = self.bound(x)
        return lo is not None and min_over_symbols(lo) >= 0

    def prove_neg(self, x: Aff) -> bool:
        """x < 0 everywhere."""
        _, hi = self.bound(x)
        return hi is not None and max_over_symbols(hi) < 0

    def can_be_neg(self, x: Aff) -> bool:
        """Some point of the ranges makes x negative (exact for affine forms over boxes)."""
        lo, _ = self.bound(x)
        return lo is not None and lo.is_const() and lo.const < 0

    def can_be_pos(self, x: Aff) -> bool:
        _, hi = self.bound(x)
        return hi is not None and hi.is_const() and hi.const > 0

    def prove_le(self, a, b) -> bool:
        return self.prove_nonneg(self.to_aff(b) - self.to_aff(a))


def min_over_symbols(x: Aff):
    """The least value of x when free symbols range over [0, inf); -inf if unbounded."""
    v = x.const
    for k, c in x.terms.items():
        if c < 0 and not _nonneg_atom_bounded(k):
            return float("-inf")
        if c < 0:
            v += c * (k.c - 1)
    return v


def max_over_symbols(x: Aff):
    v = x.const
    for k, c in x.terms.items():
        if c > 0 and not _nonneg_atom_bounded(k):
            return float("inf")
        if c > 0:
            v += c * (k.c - 1)
    return v


def _nonneg_atom_bounded(k):
    return isinstance(k, Atom) and k.kind == "fmod"


def _imax(a, b):
    return b if a is None else a if b is None else max(a, b)


def _imin(a, b):
    return b if a is None else a if b is None else min(a, b)


def _aff(x):
    if x is None or isinstance(x, Aff):
        return x
    return Aff({}, int(x))


def floor_lower(x: Aff):
    """An affine lower bound of x without floor divisions by constants, or None:
    `v * (a // c)` is at least `v/c * (a - c + 1)` for v > 0 and at least `v/c * a` for
    v < 0 (v a multiple of c), so `32 * ((n + 31) // 32) - n` is at least 0."""
    out = Aff({}, x.const)
    for k, v in x.terms.items():
        if not isinstance(k, Atom):
            out = out + Aff.of(k, v)
        elif k.kind == "fdiv" and k.c > 0 and v % k.c == 0:
            q = v // k.c
            out = out + (k.args[0] - (k.c - 1)).scale(q) if v > 0 else out + k.args[0].scale(q)
        else:
            return None
    return out


def _tighter(cur, new, an, lower):
    """The tighter of two bounds when comparable; the known one when one is None."""
    if new is None:
        return cur
    if cur is None:
        return new
    d = new - cur
    if d.is_const():
        return (new if d.const > 0 else cur) if lower else (new if d.const < 0 else cur)
    # a constraint's end point against one rounded up from the ranges (`n + 1` against
    # `32 * ((n + 31) // 32) + 1`): the tighter one when floor division decides
    lb = floor_lower(d if lower else cur - new)
    if lb is not None and lb.is_const() and lb.const >= 0:
        return new
    return cur          # not comparable: keep the range-derived end point


def _pick(a, b, an, smaller):
    """min (smaller=True) or max of two end points when their order is known."""
    if a is None or b is None:
        return None
    d = a - b
    if d.is_const():
        return (a if d.const <= 0 else b) if smaller else (a if d.const >= 0 else b)
    return None


def _pick_any(a, b, an, smaller):
    """An upper end of min(a, b) (either is valid) / a lower end of max(a, b)."""
    if a is None:
        return b
    if b is None:
        return a
    return _pick(a, b, an, smaller) or (a if a.is_const() else b)
