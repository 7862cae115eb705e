"""Operators spelled as calls: `T.Div(a, b)`, `T.LT(a, b)`, `T.truncmod(a, b)`, `T.Not(c)`, and
`T.floor(x)` of an integer reach the code generator as `Call` nodes.  `as_operator` turns such a
call into the operator node it stands for, so the LLVM backend (the `operator_calls` pass) and
the reference interpreter run it with their existing operator code.  The table of spellings is
`ir.expr.CALL_OPERATORS`, which the lowering and the simplifier read too.

TVM's semantics, for each spelling:
- `T.Add/Sub/Mul`, `T.Min/Max`: the operator; `T.Div` is truncating division for integers
  (`T.truncdiv`) and true division for floats; `T.Mod` is the remainder of truncating division
  (`T.truncmod`; `fmod` for floats); `T.FloorDiv/T.FloorMod` (`T.floordiv/floormod`) round
  toward minus infinity.
- `T.EQ/NE/LT/LE/GT/GE`: comparisons, a bool result; `T.And/T.Or/T.Not`: logic on bools.
- Both operands have one dtype.  TVM's node constructors refuse two; here a literal operand
  takes the other's dtype (`T.Div(x_int64, 7)` divides by an int64 7), and only two
  non-literal operands of different dtypes are refused.
- `T.floor/ceil/trunc/round/nearbyint` of an integer are the integer itself (TVM folds them
  so when building the call).
"""
from __future__ import annotations

from ..ir import expr as E
from ..ir.dtype import is_float, lanes_of, parse_dtype
from .errors import UNSUPPORTED, fail

INTEGER_IDENTITY = frozenset({"floor", "ceil", "trunc", "round", "nearbyint"})


def is_operator_call(e) -> bool:
    """Is e a call that `as_operator` rewrites?"""
    if type(e) is not E.Call:
        return False
    op = e.op
    if op in E.CALL_OPERATORS or op in E.UNARY_CALL_OPERATORS:
        return True
    return op in INTEGER_IDENTITY and len(e.args) == 1 and not is_float(e.args[0].dtype)


def _literal(x) -> bool:
    return type(x) in (E.IntImm, E.FloatImm)


def _retype(x, dtype):
    if type(x) is E.IntImm and not is_float(dtype):
        return E.IntImm(dtype, x.value, span=x.span)
    if _literal(x) and is_float(dtype):
        return E.FloatImm(dtype, float(x.value), span=x.span)
    return E.Cast(dtype, x, span=x.span)


def as_operator(e: E.Call):
    """The operator node the call `e` spells (see the module docstring)."""
    op = e.op
    if op in INTEGER_IDENTITY:
        return e.args[0]
    if op in E.UNARY_CALL_OPERATORS:
        if len(e.args) != 1:
            fail(UNSUPPORTED, f"T.{op} takes one operand, got {len(e.args)}", e)
        return E.Not(e.args[0], "bool" if lanes_of(e.args[0].dtype) == 1 else
                     parse_dtype("bool").with_lanes(lanes_of(e.args[0].dtype)), span=e.span)
    cls = E.CALL_OPERATORS[op]
    if len(e.args) != 2:
        fail(UNSUPPORTED, f"T.{op} takes two operands, got {len(e.args)}", e)
    return binary(cls, e.args[0], e.args[1], e, f"T.{op}")


def binary(cls, a, b, node, name):
    """cls(a, b) with TVM's dtype rules (see the module docstring); node gives the span."""
    if a.dtype != b.dtype:
        if _literal(b) and not _literal(a):
            b = _retype(b, a.dtype)
        elif _literal(a) and not _literal(b):
            a = _retype(a, b.dtype)
        elif _literal(a) and _literal(b):       # 1 < 2.5 compares floats; else the wider
            want = max((a.dtype, b.dtype), key=lambda d: (is_float(d), parse_dtype(d).bits))
            a, b = _retype(a, want), _retype(b, want)
        else:
            fail(UNSUPPORTED, f"{name} of {a.dtype} and {b.dtype}: both operands need one "
                 "dtype (cast one of them)", node)
    if cls in E.COMPARISONS:
        n = lanes_of(a.dtype)
        dtype = "bool" if n == 1 else parse_dtype("bool").with_lanes(n)
    else:
        dtype = a.dtype
    return cls(a, b, dtype, span=node.span)


def untyped(x) -> bool:
    """An operator whose dtype the script could not know: it has an operand spelled as a call
    (`T.Min(a, b) + 1`), and takes its dtype once that call is an operator (`retype`)."""
    return (isinstance(x, E.BinaryOp) or type(x) is E.Select) and x.dtype == "handle"


def retype(x):
    if type(x) is E.Select:
        if x.true_value.dtype == "handle":
            return None
        return E.Select(x.condition, x.true_value, x.false_value, x.true_value.dtype,
                        span=x.span)
    if x.a.dtype == "handle" or x.b.dtype == "handle":
        return None
    return binary(type(x), x.a, x.b, x, type(x).__name__)
