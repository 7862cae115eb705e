"""Arithmetic operation count of a lowered function: operations in stored values, in the
values of lets and of calls evaluated for their effect, times the trip counts of the loops
around them (conditions ignored, both branches of an `if` counted; `a * b + c` counts 2).

A call of a module function (`Module.f(...)`) counts f's operations once per call, where
`callees` holds f lowered (`LoweredFunc.callees`); a function already on the call path
counts nothing more, so a recursion counts each function once."""
from __future__ import annotations

from ..ir import expr as E
from ..ir import stmt as S
from ..ir.dtype import is_float

_ARITH = (E.Add, E.Sub, E.Mul, E.Div, E.Mod, E.FloorDiv, E.FloorMod, E.Min, E.Max)
# float-typed calls that compute nothing themselves
_NOT_COUNTED = frozenset({"if_then_else", "likely", "min_value", "max_value", "reinterpret",
                          "ret"})


def _has_load(e) -> bool:
    if isinstance(e, E.BufferLoad):
        return True
    if isinstance(e, E.BinaryOp):
        return _has_load(e.a) or _has_load(e.b)
    if isinstance(e, E.Cast):
        return _has_load(e.value)
    return False


class _Counter:
    def __init__(self, env, callees):
        self.env = env
        self.callees = {c.name: c.body for c in callees}
        self.path: set = set()           # the module functions being counted
        self.memo: dict = {}             # name -> (float ops, integer ops) of one call

    def ext(self, e):
        if isinstance(e, E.IntImm):
            return e.value
        if isinstance(e, E.Var) and id(e) in self.env:
            return int(self.env[id(e)])
        return 1

    def ops(self, e) -> tuple[int, int]:
        """(floating-point ops, integer ops on loaded data) in one evaluation of e."""
        if isinstance(e, _ARITH):
            fa, ia = self.ops(e.a)
            fb, ib = self.ops(e.b)
            if is_float(e.dtype):
                return fa + fb + 1, ia + ib
            return fa + fb, ia + ib + (1 if _has_load(e) else 0)
        if isinstance(e, E.Call):
            f = i = 0
            for a in e.args:
                if isinstance(a, E.PrimExpr):
                    x, y = self.ops(a)
                    f, i = f + x, i + y
            if e.callee is not None:
                x, y = self.call(e.callee)
                return f + x, i + y
            if e.op not in _NOT_COUNTED and is_float(e.dtype):
                f += 1
            return f, i
        if isinstance(e, (E.Cast, E.Not)):
            return self.ops(e.value if isinstance(e, E.Cast) else e.a)
        if isinstance(e, E.Select):
            f1, i1 = self.ops(e.true_value)
            f2, i2 = self.ops(e.false_value)
            return f1 + f2, i1 + i2
        return 0, 0

    def call(self, name) -> tuple[int, int]:
        body = self.callees.get(name)
        if body is None or name in self.path:
            return 0, 0
        if name not in self.memo:
            self.path.add(name)
            try:
                self.memo[name] = self.visit(body, 1)
            finally:
                self.path.discard(name)
        return self.memo[name]

    def visit(self, s, trips) -> tuple[int, int]:
        if isinstance(s, S.For):
            return self.visit(s.body, trips * self.ext(s.extent))
        if isinstance(s, S.SeqStmt):
            tot = (0, 0)
            for x in s.seq:
                f, i = self.visit(x, trips)
                tot = (tot[0] + f, tot[1] + i)
            return tot
        if isinstance(s, (S.BufferStore, S.Evaluate)):
            f, i = self.ops(s.value)
            return f * trips, i * trips
        if isinstance(s, S.IfThenElse):
            a = self.visit(s.then_case, trips)
            b = self.visit(s.else_case, trips) if s.else_case is not None else (0, 0)
            return a[0] + b[0], a[1] + b[1]
        own = (0, 0)
        if isinstance(s, S.LetStmt):
            f, i = self.ops(s.value)
            own = (f * trips, i * trips)
        body = getattr(s, "body", None)
        if isinstance(body, S.Stmt):
            f, i = self.visit(body, trips)
            return own[0] + f, own[1] + i
        return own


def count_ops(body, env=None, callees=()) -> tuple[int, int]:
    """(float ops, integer ops) of a lowered body; env maps id(var) -> int for symbolic
    extents, `callees` are the lowered functions its calls reach (`LoweredFunc.callees`)."""
    return _Counter(env or {}, callees).visit(body, 1)
