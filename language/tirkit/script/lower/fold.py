"""Folding as TVM's operators fold: integer and float constants, casts of constants,
constant slice extents."""
from __future__ import annotations

import math

from ...arith.alu import ALU, fold
from ...arith.linear import linear_form
from ...ir import dtype as D
from ...ir import expr as E
from ...ir.equality import identical

# the operators TVM folds as it builds them (arith.alu says what each computes)
_FOLDED = (E.Add, E.Sub, E.Mul, E.FloorDiv, E.FloorMod)


def fold_int(cls, a, b):
    """Two integer constants of one dtype fold into one, as TVM's operators fold them."""
    if type(a) is not E.IntImm or type(b) is not E.IntImm or a.dtype != b.dtype:
        return None
    if not D.is_int(a.dtype) or D.is_bool(a.dtype) or cls not in _FOLDED:
        return None
    v = fold(cls, a.value, b.value)
    if v is None:
        return None
    lo, hi = D.int_range(a.dtype)
    if not lo <= v <= hi:
        return None
    return E.IntImm(a.dtype, v)


# and those it folds on two float constants (a division by zero stays a division)
_FLOAT_FOLDED = (E.Add, E.Sub, E.Mul, E.Div)


def fold_float(cls, a, b):
    """Two float constants of one dtype fold into one, as TVM's operators fold them (the
    value is kept as computed, in double precision, as TVM's FloatImm keeps it)."""
    if type(a) is not E.FloatImm or type(b) is not E.FloatImm or a.dtype != b.dtype:
        return None
    if D.lanes_of(a.dtype) != 1 or cls not in _FLOAT_FOLDED or \
            (cls is E.Div and b.value == 0):
        return None
    return E.FloatImm(a.dtype, float(ALU[cls](a.value, b.value, False)))


def fold_minmax(cls, a, b):
    """`T.min`/`T.max` of two constants of one dtype is that constant, as TVM folds it."""
    if type(a) is not type(b) or type(a) not in (E.IntImm, E.FloatImm) or a.dtype != b.dtype:
        return None
    return type(a)(a.dtype, ALU[cls](a.value, b.value, type(a) is E.IntImm))


def slice_extent(lo, hi) -> E.PrimExpr:
    """`hi - lo`, folded when it is a constant (`i * 4 : i * 4 + 4` has extent 4)."""
    if isinstance(lo, E.IntImm) and isinstance(hi, E.IntImm):
        return E.IntImm(hi.dtype, hi.value - lo.value)
    if isinstance(lo, E.IntImm) and lo.value == 0:
        return hi
    if isinstance(hi, E.Add) and isinstance(hi.b, E.IntImm) and identical(hi.a, lo):
        return hi.b
    diff = linear_form(E.Sub(hi, lo, hi.dtype))       # `i * 4 + 1 : i * 4 + 5` too
    if diff.is_const() and D.is_int(hi.dtype) and D.is_int(lo.dtype):
        return E.IntImm(hi.dtype, diff.const)
    return E.Sub(hi, lo, hi.dtype)


def as_float(v) -> float:
    """A number as a Python float; an int too large for one is an infinity of its sign (its
    range error is reported where the constant is made)."""
    try:
        return float(v)
    except OverflowError:
        return math.inf if v > 0 else -math.inf


def cast_folded(dtype, value, span=None):
    """The Cast TVM's `tvm::cast` makes: a constant becomes a constant of the new type (where
    its value is one of that type's: a value out of range stays a Cast); `span`: the Cast's,
    the value's when None."""
    d = D.parse_dtype(dtype)
    if value.dtype == dtype:
        return value
    if type(value) in (E.IntImm, E.FloatImm) and d is not None and d.lanes == 1:
        v = value.value
        if d.is_float:
            return E.FloatImm(dtype, as_float(v), value.span)
        if d.kind == "bool":
            return E.IntImm(dtype, int(bool(v)), value.span)
        if d.is_int and (type(v) is int or math.isfinite(v)):
            lo, hi = D.int_range(dtype)
            if lo <= int(v) <= hi:          # a float constant is truncated, as TVM's is
                return E.IntImm(dtype, int(v), value.span)
    return E.Cast(dtype, value, value.span if span is None else span)
