"""Pass: operators spelled as calls (`T.Div(a, b)`, `T.LT(a, b)`, `T.floor` of an integer...)
become the operator nodes they stand for (see `codegen.operators`), and the operators around
them their dtypes; TVM's fixed-point multiplies (`T.q_multiply_shift`) their integer
arithmetic (`codegen.fixed_point`); `T.call_intrin(dtype, "tir.name", ...)` the call of
`T.name` it stands for; `T.infinity(dtype)` the constant.  The LLVM pipeline runs it first; the interpreter on the function
it runs."""
from __future__ import annotations

from ..fixed_point import is_fixed_point, legalize
from ..operators import as_operator, is_operator_call, retype, untyped
from ...ir import expr as E
from ...ir.dtype import is_float
from .rewrite import transform


def _rule(x):
    if is_operator_call(x):
        return as_operator(x)
    if is_fixed_point(x):           # T.q_multiply_shift(...): its integer arithmetic
        return legalize(x)
    named = intrinsic_called(x)
    if named is not None:
        return _rule(named) or named
    if untyped(x):              # `T.Min(a, b) + 1`: the Add takes the Min's dtype
        return retype(x)
    if type(x) is E.Call and x.op == "infinity" and is_float(x.dtype):
        return E.FloatImm(x.dtype, float("inf"), span=x.span)
    return None


def intrinsic_called(x):
    """`T.call_intrin(dtype, "tir.name", *args)` (or "tirx.name"): the call `T.name(*args)` of
    that dtype, as TVM's printer spells the direct call; else None."""
    if type(x) is not E.Call or x.op != "call_intrin" or len(x.args) < 2:
        return None
    dtype, name = x.args[:2]
    if type(dtype) is not E.StringImm or type(name) is not E.StringImm:
        return None
    head, _, op = name.value.partition(".")
    if head not in ("tir", "tirx") or not op:
        return None
    return E.Call(dtype.value, op, tuple(x.args[2:]), span=x.span)


def operator_calls(body):
    return transform(body, _rule)
