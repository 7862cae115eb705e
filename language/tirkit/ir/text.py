"""A short text of an expression, for messages and cost formulas: `vi * 4 + 1`, `A[i, k]`,
`T.min(n, 16)`. Spelled as TVMScript with the alias `T`; the canonical, round-trippable text
of a whole kernel is `tirkit.to_script` (the script printer), which layers below it cannot use."""
from __future__ import annotations

from . import expr as E

_ATOM, _MUL, _ADD, _CMP, _NOT, _AND, _OR = 9, 8, 7, 5, 4, 3, 2
_INFIX = {E.Add: ("+", _ADD), E.Sub: ("-", _ADD), E.Mul: ("*", _MUL), E.FloorDiv: ("//", _MUL),
          E.FloorMod: ("%", _MUL), E.EQ: ("==", _CMP), E.NE: ("!=", _CMP), E.LT: ("<", _CMP),
          E.LE: ("<=", _CMP), E.GT: (">", _CMP), E.GE: (">=", _CMP), E.And: ("and", _AND),
          E.Or: ("or", _OR)}
_CALLS = {E.Min: "min", E.Max: "max", E.Div: "truncdiv", E.Mod: "truncmod"}


def expr_text(e) -> str:
    """`e` as a reader of a message would write it."""
    return _text(e)[0]


def _wrap(e, prec) -> str:
    text, p = _text(e)
    return f"({text})" if p < prec else text


def _text(e):
    t = type(e)
    if t is E.IntImm:
        if e.dtype == "int32":
            return str(e.value), (_ADD if e.value < 0 else _ATOM)
        if e.dtype == "bool":
            return f"T.bool({bool(e.value)})", _ATOM
        return f"T.{e.dtype}({e.value})", _ATOM
    if t is E.FloatImm:
        return f"T.{e.dtype}({e.value!r})", _ATOM
    if isinstance(e, E.Var):
        return e.name, _ATOM
    if t in _INFIX:
        op, p = _INFIX[t]
        return f"{_wrap(e.a, p)} {op} {_wrap(e.b, p + 1)}", p
    if t is E.Div and e.dtype.startswith(("float", "bfloat")):
        return f"{_wrap(e.a, _MUL)} / {_wrap(e.b, _MUL + 1)}", _MUL
    if t in _CALLS:
        return f"T.{_CALLS[t]}({expr_text(e.a)}, {expr_text(e.b)})", _ATOM
    if t is E.Not:
        return f"not {_wrap(e.a, _NOT)}", _NOT
    if t is E.Cast:
        return f'T.Cast("{e.dtype}", {expr_text(e.value)})', _ATOM
    if t is E.Select:
        return (f"T.Select({expr_text(e.condition)}, {expr_text(e.true_value)}, "
                f"{expr_text(e.false_value)})"), _ATOM
    if t is E.BufferLoad:
        return f"{e.buffer.name}[{', '.join(expr_text(i) for i in e.indices)}]", _ATOM
    if t is E.Call:
        args = ", ".join(expr_text(a) if isinstance(a, E.PrimExpr) else repr(a) for a in e.args)
        return f"T.{e.op.lstrip('.@')}({args})", _ATOM
    if t is E.Ramp:
        return f"T.Ramp({expr_text(e.base)}, {expr_text(e.stride)}, {e.lanes})", _ATOM
    if t is E.Broadcast:
        return f"T.Broadcast({expr_text(e.value)}, {e.lanes})", _ATOM
    if t is E.StringImm:
        return repr(e.value), _ATOM
    return type(e).__name__, _ATOM
