"""Operation count of a lowered function: the operations of its counted values
(`analysis/opcount.py`: stored values, lets' values, values evaluated for their effect), times
the trip counts of the loops around them (both branches of an `if` counted).

A call of a module function (`Module.f(...)`) counts f's operations once per call, where
`callees` holds f lowered (`LoweredFunc.callees`), a loop over a scalar parameter of f as
many times as the call's argument says where it is a known size; a function already on the
call path counts nothing more, so a recursion counts each function once."""
from __future__ import annotations

from ..analysis.opcount import counted_values, fragment_shapes, value_ops
from ..ir import expr as E
from ..ir import stmt as S
from ..ir.visit import function_calls


class _Counter:
    def __init__(self, body, env, callees):
        self.env = env
        self.callees = {c.name: c for c in callees}
        self.fragments = {}              # the wmma fragments' (m, n, k), of every body
        for b in (body, *(c.body for c in callees)):
            self.fragments.update(fragment_shapes(b))
        self.path: set = set()           # the module functions being counted
        self.memo: dict = {}             # (name, sizes) -> (float ops, integer ops) of a call

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
            x, y = self.call(c)
            f, i = f + x, i + y
        return f, i

    def call(self, call) -> tuple[int, int]:
        """The operations of one call, the callee's scalar parameters bound to the call's
        arguments where they are known sizes (a constant, or a size bound in env)."""
        low = self.callees.get(call.callee)
        if low is None or call.callee in self.path:
            return 0, 0
        params = [v for v, src in zip(low.scalars, low.scalar_sources) if src is None]
        args = [a for a, buf in zip(call.args, low.param_buffers) if not buf]
        sizes = {id(p): self.ext(a) for p, a in zip(params, args)
                 if isinstance(a, E.IntImm) or id(a) in self.env}
        key = (call.callee, tuple(sorted(sizes.items())))
        if key not in self.memo:
            saved, self.env = self.env, {**self.env, **sizes}
            self.path.add(call.callee)
            try:
                self.memo[key] = self.visit(low.body, 1)
            finally:
                self.path.discard(call.callee)
                self.env = saved
        return self.memo[key]

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
