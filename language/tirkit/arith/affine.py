"""Affine canonical form of integer index expressions.

An `Aff` is `const + sum(coeff * key)`, where a key is a variable (`Var`) or an `Atom`: a
floor division, a floor modulo, a product of two non-constant forms, or an opaque term
(a load, a call, a select).  `to_aff(expr, env)` rewrites a `PrimExpr` into this form using
the tables of `simplify.py`; `env` maps variables to the expressions they stand for (block
iterators to their bindings).
"""
from __future__ import annotations

from math import gcd

from ..ir.text import expr_text


class Atom:
    """A non-linear term: `kind` is "fdiv", "fmod", "mul", "min", "max" or "opaque"."""
    __slots__ = ("kind", "args", "c", "expr", "_key")

    def __init__(self, kind, args=(), c=0, expr=None):
        self.kind = kind
        self.args = tuple(args)          # tuple[Aff]
        self.c = c                       # the constant divisor / modulus
        self.expr = expr                 # the source expression (for messages)
        if kind == "opaque":
            self._key = ("opaque", id(expr))
        else:
            self._key = (kind, tuple(a.key() for a in self.args), c)

    def __hash__(self):
        return hash(self._key)

    def __eq__(self, other):
        return isinstance(other, Atom) and self._key == other._key

    def __repr__(self):
        if self.kind == "fdiv":
            return f"({self.args[0]!r}) // {self.c}"
        if self.kind == "fmod":
            return f"({self.args[0]!r}) % {self.c}"
        if self.kind == "mul":
            return f"({self.args[0]!r}) * ({self.args[1]!r})"
        if self.kind in ("min", "max"):
            return f"{self.kind}({self.args[0]!r}, {self.args[1]!r})"
        return _expr_text(self.expr)

    def free_keys(self):
        out = []
        for a in self.args:
            out.extend(a.all_vars())
        return out


class Aff:
    """`const + sum(coeff * key)` with integer coefficients; keys are Vars or Atoms, kept in
    order of first appearance (the order a form is written back in).  `dtype` is the integer
    type of the expression it stands for (not part of its identity)."""
    __slots__ = ("terms", "const", "dtype")

    def __init__(self, terms=None, const=0, dtype="int32"):
        if not terms:
            self.terms = {}
        elif all(terms.values()):
            self.terms = dict(terms)
        else:
            self.terms = {k: v for k, v in terms.items() if v}
        self.const = const
        self.dtype = dtype

    # ---- construction ------------------------------------------------------------------
    @staticmethod
    def of(key, coeff=1):
        return Aff._made({key: coeff} if coeff else {}, 0, "int32")

    @staticmethod
    def _made(terms, const, dtype):
        """An Aff of `terms` that holds no zero coefficient already (not copied again)."""
        out = object.__new__(Aff)
        out.terms, out.const, out.dtype = terms, const, dtype
        return out

    def __add__(self, other):
        if isinstance(other, int):
            return Aff._made(self.terms, self.const + other, self.dtype)
        t = dict(self.terms)
        for k, v in other.terms.items():
            w = t.get(k, 0) + v
            if w:
                t[k] = w
            else:
                t.pop(k, None)
        return Aff._made(t, self.const + other.const, self.dtype)

    def __neg__(self):
        return Aff._made({k: -v for k, v in self.terms.items()}, -self.const, self.dtype)

    def __sub__(self, other):
        if isinstance(other, int):
            return Aff(self.terms, self.const - other, self.dtype)
        return self + (-other)

    def scale(self, c: int):
        if c == 0:
            return Aff._made({}, 0, self.dtype)
        return Aff._made({k: v * c for k, v in self.terms.items()}, self.const * c, self.dtype)

    def add(self, other, scale=1):
        """self + scale * other."""
        return self + other.scale(scale)

    # ---- queries -----------------------------------------------------------------------
    def is_const(self):
        return not self.terms

    def key(self):
        return (frozenset(self.terms.items()), self.const)

    def __eq__(self, other):
        return isinstance(other, Aff) and self.key() == other.key()

    def __hash__(self):
        return hash(self.key())

    def coeff_gcd(self):
        g = 0
        for v in self.terms.values():
            g = gcd(g, v)
        return g

    def vars(self):
        """The variables that appear directly as linear terms."""
        return [k for k in self.terms if not isinstance(k, Atom)]

    def atoms(self):
        return [k for k in self.terms if isinstance(k, Atom)]

    def all_vars(self):
        """Every variable, including those inside atoms."""
        out = []
        for k in self.terms:
            if isinstance(k, Atom):
                out.extend(k.free_keys())
            else:
                out.append(k)
        return out

    def __repr__(self):
        parts = []
        for k, v in self.terms.items():
            name = getattr(k, "name", None) or repr(k)
            parts.append(name if v == 1 else f"{v}*{name}")
        if self.const or not parts:
            parts.append(str(self.const))
        return " + ".join(parts)


def _expr_text(e):
    return expr_text(e)
