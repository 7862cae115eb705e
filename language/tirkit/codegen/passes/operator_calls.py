"""Pass: operators spelled as calls (`T.Div(a, b)`, `T.LT(a, b)`, `T.floor` of an integer...)
become the operator nodes they stand for (see `codegen.operators`)."""
from __future__ import annotations

from ..operators import as_operator, is_operator_call
from .rewrite import transform


def operator_calls(body):
    return transform(body, lambda x: as_operator(x) if is_operator_call(x) else None)
