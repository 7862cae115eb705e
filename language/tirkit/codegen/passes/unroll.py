"""Pass: `T.unroll` loops with a small constant extent are unrolled here (the loop variable
replaced by each value), so indices become constants for the LLVM optimizer; longer ones
keep an unroll hint for LLVM, as do loops with `break` or `continue`."""
from __future__ import annotations

from ...ir import expr as E
from ...ir import stmt as S
from .control import has_break_or_continue
from .rewrite import substitute, transform

MAX_UNROLL = 64


def unroll_loops(body: S.Stmt) -> S.Stmt:
    def fn(x):
        if isinstance(x, S.For) and x.kind == "unrolled" and isinstance(x.min, E.IntImm) \
                and isinstance(x.extent, E.IntImm) and x.extent.value <= MAX_UNROLL \
                and not has_break_or_continue(x.body):       # they need the loop
            dt = x.loop_var.dtype
            return S.seq([substitute(x.body, {id(x.loop_var): E.IntImm(dt, x.min.value + i)})
                          for i in range(x.extent.value)]) if x.extent.value else \
                S.Evaluate(E.IntImm("int32", 0))
        return None
    return transform(body, fn)
