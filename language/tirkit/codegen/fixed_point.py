"""TVM's fixed-point multiplications of quantized kernels, `T.q_multiply_shift(x, y, q, s)` and
`T.q_multiply_shift_per_axis(x, y, left_shift, right_shift, q, is_lshift_required,
is_rshift_required)`, spelled out in integer arithmetic as TVM legalizes them
(`src/target/intrin_rule.cc`), so every back end runs them with its existing operators (the
`operator_calls` pass rewrites them; the reference interpreter runs that pass too).

The multiply, for int32 x and multiplier y and shifts of int32:
1. x and y widened to int64; x shifted left by `left_shift` where `is_lshift_required`;
2. their product;
3. plus `1 << (right_shift + q - 1)` (round half up);
4. shifted right (arithmetic) by `right_shift + q`;
5. narrowed to int32.

`q_multiply_shift(x, y, q, s)` takes a left shift of `s` where s > 0, else a right shift of
`-s`.  Its multiplier `1 << 30` (0.5 in Q31) with a constant `s` is a power of two, which TVM
computes as a shift alone: `x << (s - 1)` where s > 1, else `(x + (1 << (-e - 1))) >> -e` in
int32 with e = s - 1 (for e = 0 that is `(x + (1 << -1)) >> 0` in TVM; here x itself)."""
from __future__ import annotations

from ..ir import expr as E
from ..ir.dtype import lanes_of, parse_dtype
from .errors import UNSUPPORTED, fail

OPS = ("q_multiply_shift", "q_multiply_shift_per_axis")
_ARITY = {"q_multiply_shift": 4, "q_multiply_shift_per_axis": 7}


def is_fixed_point(e) -> bool:
    return type(e) is E.Call and e.op in OPS


def _typed(dtype, e):
    """e as dtype (an int of the same lanes, or a scalar broadcast to dtype's lanes)."""
    if e.dtype == dtype:
        return e
    n = lanes_of(dtype)
    if type(e) is E.IntImm:
        value = E.IntImm(parse_dtype(dtype).with_lanes(1), e.value, span=e.span)
        return E.Broadcast(value, n, dtype, span=e.span) if n > 1 else value
    if lanes_of(e.dtype) == 1 and n > 1:
        return E.Broadcast(_typed(parse_dtype(dtype).with_lanes(1), e), n, dtype, span=e.span)
    return E.Cast(dtype, e, span=e.span)


def _call(op, a, b, span):
    return E.Call(a.dtype, op, (a, b), span=span)


def _of(kind, n) -> str:
    """The dtype of n lanes of kind (`int64`, `int32`, `bool`)."""
    return parse_dtype(kind).with_lanes(n)


def _multiply_shift(e, x, y, q, left, right, is_left):
    n = lanes_of(x.dtype)
    wide, narrow = _of("int64", n), _of("int32", n)
    sp = e.span
    x, y = _typed(wide, x), _typed(wide, y)
    x = E.Select(_truth(is_left, n), _call("shift_left", x, _typed(wide, left), sp), x, wide,
                 span=sp)
    x = E.Mul(x, y, wide, span=sp)
    total = E.Add(_typed(wide, right), _typed(wide, q), wide, span=sp)
    one = _typed(wide, E.IntImm("int64", 1, span=sp))
    rounding = _call("shift_left", one, E.Sub(total, one, wide, span=sp), sp)
    x = _call("shift_right", E.Add(x, rounding, wide, span=sp), total, sp)
    return E.Cast(narrow, x, span=sp)


def _truth(c, n):
    """A condition of n lanes: a bool as it is, an integer compared with 0."""
    if str(c.dtype).startswith("bool"):
        return c if lanes_of(c.dtype) == n else E.Broadcast(c, n, _of("bool", n), span=c.span)
    return _truth(E.NE(c, _typed(c.dtype, E.IntImm("int32", 0)), _of("bool", lanes_of(c.dtype)),
                       span=c.span), n)


def _const(x):
    if type(x) is E.Broadcast:
        x = x.value
    return x.value if type(x) is E.IntImm else None


def legalize(e: E.Call):
    """The integer arithmetic e stands for (see the module docstring)."""
    if len(e.args) != _ARITY[e.op]:
        fail(UNSUPPORTED, f"T.{e.op} takes {_ARITY[e.op]} arguments, got {len(e.args)}", e)
    for a in e.args:
        if not str(a.dtype).startswith(("int", "bool")):
            fail(UNSUPPORTED, f"T.{e.op} takes integers, got {a.dtype}", e)
    if e.op == "q_multiply_shift_per_axis":
        x, y, left, right, q, is_left, _ = e.args
        return _multiply_shift(e, x, y, q, left, right, is_left)
    x, y, q, s = e.args
    narrow = _of("int32", lanes_of(x.dtype))
    if _const(y) == 1 << 30 and _const(s) is not None:
        exp = _const(s) - 1
        x = _typed(narrow, x)
        if exp > 0:
            return _call("shift_left", x, _typed(narrow, E.IntImm("int32", exp)), e.span)
        if exp == 0:
            return x
        rounded = E.Add(x, _typed(narrow, E.IntImm("int32", 1 << (-exp - 1))), narrow,
                        span=e.span)
        return _call("shift_right", rounded, _typed(narrow, E.IntImm("int32", -exp)), e.span)
    s = _typed("int32", s) if lanes_of(s.dtype) == 1 else s
    zero = _typed(s.dtype, E.IntImm("int32", 0))
    positive = E.GT(s, zero, _of("bool", lanes_of(s.dtype)), span=e.span)
    left = E.Select(positive, s, zero, s.dtype, span=e.span)
    right = E.Select(positive, zero, E.Sub(zero, s, s.dtype, span=e.span), s.dtype,
                     span=e.span)
    return _multiply_shift(e, x, y, q, left, right, positive)
