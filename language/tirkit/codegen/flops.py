"""Arithmetic operation count of a lowered function: operations in stored values, times the
trip counts of the loops around them (conditions ignored; `a * b + c` counts 2)."""
from __future__ import annotations

from ..ir import expr as E
from ..ir import stmt as S
from ..ir.dtype import is_float

_ARITH = (E.Add, E.Sub, E.Mul, E.Div, E.Mod, E.FloorDiv, E.FloorMod, E.Min, E.Max)


def _ops(e) -> tuple[int, int]:
    """(floating-point ops, integer ops on loaded data) in one evaluation of e."""
    if isinstance(e, _ARITH):
        fa, ia = _ops(e.a)
        fb, ib = _ops(e.b)
        if is_float(e.dtype):
            return fa + fb + 1, ia + ib
        data = _has_load(e)
        return fa + fb, ia + ib + (1 if data else 0)
    if isinstance(e, E.Call):
        f = i = 0
        for a in e.args:
            if isinstance(a, E.PrimExpr):
                x, y = _ops(a)
                f, i = f + x, i + y
        if e.op not in ("if_then_else", "likely", "min_value", "max_value", "reinterpret") \
                and is_float(e.dtype):
            f += 1
        return f, i
    if isinstance(e, (E.Cast, E.Not)):
        return _ops(e.value if isinstance(e, E.Cast) else e.a)
    if isinstance(e, E.Select):
        f1, i1 = _ops(e.true_value)
        f2, i2 = _ops(e.false_value)
        return f1 + f2, i1 + i2
    return 0, 0


def _has_load(e) -> bool:
    if isinstance(e, E.BufferLoad):
        return True
    if isinstance(e, E.BinaryOp):
        return _has_load(e.a) or _has_load(e.b)
    if isinstance(e, E.Cast):
        return _has_load(e.value)
    return False


def count_ops(body, env=None) -> tuple[int, int]:
    """(float ops, integer ops) of a lowered body; env maps id(var) -> int for symbolic
    extents."""
    env = env or {}

    def ext(e):
        if isinstance(e, E.IntImm):
            return e.value
        if isinstance(e, E.Var) and id(e) in env:
            return int(env[id(e)])
        return 1

    def visit(s, trips):
        if isinstance(s, S.For):
            return visit(s.body, trips * ext(s.extent))
        if isinstance(s, S.SeqStmt):
            tot = (0, 0)
            for x in s.seq:
                f, i = visit(x, trips)
                tot = (tot[0] + f, tot[1] + i)
            return tot
        if isinstance(s, S.BufferStore):
            f, i = _ops(s.value)
            return f * trips, i * trips
        if isinstance(s, S.IfThenElse):
            a = visit(s.then_case, trips)
            b = visit(s.else_case, trips) if s.else_case is not None else (0, 0)
            return a[0] + b[0], a[1] + b[1]
        body = getattr(s, "body", None)
        if isinstance(body, S.Stmt):
            return visit(body, trips)
        return 0, 0
    return visit(body, 1)
