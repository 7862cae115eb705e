"""Pass: operators spelled as calls (`T.Div(a, b)`, `T.LT(a, b)`, `T.floor` of an integer...)
become the operator nodes they stand for (see `codegen.operators`), and the operators around
them their dtypes; TVM's fixed-point multiplies (`T.q_multiply_shift`) their integer
arithmetic (`codegen.fixed_point`).  The LLVM pipeline runs it first; the interpreter on the function it runs."""
from __future__ import annotations

from ..fixed_point import is_fixed_point, legalize
from ..operators import as_operator, is_operator_call, retype, untyped
from .rewrite import transform


def _rule(x):
    if is_operator_call(x):
        return as_operator(x)
    if is_fixed_point(x):           # T.q_multiply_shift(...): its integer arithmetic
        return legalize(x)
    if untyped(x):              # `T.Min(a, b) + 1`: the Add takes the Min's dtype
        return retype(x)
    return None


def operator_calls(body):
    return transform(body, _rule)
