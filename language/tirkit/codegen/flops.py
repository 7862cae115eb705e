"""Operation count of a lowered function: the operations of its counted values
(`analysis/opcount.py`: stored values, lets' values, values evaluated for their effect), times
the trip counts of the loops around them (both branches of an `if` counted).

A call of a module function (`Module.f(...)`) counts f's operations once per call, where
`callees` holds f lowered (`LoweredFunc.callees`); a function already on the call path
counts nothing more, so a recursion counts each function once."""
from __future__ import annotations

from ..analysis.opcount import counted_values, fragment_shapes, value_ops
from ..ir import expr as E
from ..ir import stmt as S
from ..ir.visit import function_calls


class _Counter:
    def __init__(self, body, env, callees):
        self.env = env
        self.callees = {c.name: c.body for c in callees}
        self.fragments = {}              # the wmma fragments' (m, n, k), of every body
        for b in (body, *self.callees.values()):
            self.fragments.update(fragment_shapes(b))
        self.path: set = set()           # the module functions being counted
        self.memo: dict = {}             # name -> (float ops, integer ops) of one call

    def ext(self, e):
        if isinstance(e, E.IntImm):
            return e.value
        if isinstance(e, E.Var) and id(e) in self.env:
            return int(self.env[id(e)])
        return 1

    def ops(self, e) -> tuple[int, int]:
        """(floating-point ops, integer ops) of one evaluation of e, its calls' work included."""
        o = value_ops(e, self.fragments)
        f, i = o.float, o.integer
        for c in function_calls(e):
            x, y = self.call(c.callee)
            f, i = f + x, i + y
        return f, i

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
        if isinstance(s, S.IfThenElse):
            a = self.visit(s.then_case, trips)
            b = self.visit(s.else_case, trips) if s.else_case is not None else (0, 0)
            return a[0] + b[0], a[1] + b[1]
        own = (0, 0)
        for v in counted_values(s):
            f, i = self.ops(v)
            own = (own[0] + f * trips, own[1] + i * trips)
        body = getattr(s, "body", None)
        if isinstance(body, S.Stmt):
            f, i = self.visit(body, trips)
            return own[0] + f, own[1] + i
        return own


def count_ops(body, env=None, callees=()) -> tuple[int, int]:
    """(float ops, integer ops) of a lowered body; env maps id(var) -> int for symbolic
    extents, `callees` are the lowered functions its calls reach (`LoweredFunc.callees`)."""
    return _Counter(body, env or {}, callees).visit(body, 1)
