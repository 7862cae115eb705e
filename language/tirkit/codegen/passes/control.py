"""Control flow that leaves a statement early: `T.ret(value)`, `break` and `continue`.

They reach the code generator as `Evaluate(Call(dtype, "ret", (value,)))`,
`Evaluate(Call("void", "break_loop", ()))` and `Evaluate(Call("void", "continue_loop", ()))`.

- `T.ret(value)` leaves the function at once, from any depth of serial loops and conditions;
  the function's result is `value` cast to the declared return type (`-> T.int32`), or of
  the value's own dtype when none is declared.  A function returns a value when it declares
  a return type (other than a bare `-> T.handle`) or contains a `T.ret` (`return_dtype`).
- `break` / `continue` act on the innermost enclosing serial (or unrolled) `for` or `while`.

`check_control_flow` refuses, with a diagnostic at the statement, what cannot run: any of
them inside a parallel or vectorized loop (its iterations run at once, on threads or vector
lanes), `break`/`continue` outside a loop, a return value that is not one scalar.
"""
from __future__ import annotations

from ...ir import expr as E
from ...ir import stmt as S
from ...ir.dtype import lanes_of
from ...ir.visit import child_fields, contains, find_all, walk
from ..errors import UNSUPPORTED, fail

RET, BREAK, CONTINUE = "ret", "break_loop", "continue_loop"
CONTROL_OPS = frozenset({RET, BREAK, CONTINUE})
_WORD = {RET: "T.ret", BREAK: "break", CONTINUE: "continue"}


def control_op(s) -> str | None:
    """RET / BREAK / CONTINUE when statement s is one of them, else None."""
    if type(s) is S.Evaluate and type(s.value) is E.Call and s.value.op in CONTROL_OPS:
        return s.value.op
    return None


def has_break_or_continue(s) -> bool:
    return contains(s, lambda x: x.op in (BREAK, CONTINUE), E.Call)


def _rets(func):
    return find_all(func.body, lambda x: x.op == RET, E.Call)


def return_dtype(func: S.PrimFunc, rets=None) -> str | None:
    """The dtype the function returns, or None when it returns nothing (`rets`: its T.ret
    calls, when the caller has them)."""
    rets = _rets(func) if rets is None else rets
    if func.ret_type not in (None, "void", "") and (rets or func.ret_type != "handle"):
        return func.ret_type
    if rets and rets[0].args:
        return rets[0].args[0].dtype
    return None


def check_control_flow(func: S.PrimFunc):
    rets = _rets(func)
    ret_dtype = return_dtype(func, rets)
    if ret_dtype is not None and rets:
        if ret_dtype == "handle" or lanes_of(ret_dtype) != 1:
            fail(UNSUPPORTED, f"'{func.name}' returns a {ret_dtype}: the CPU backend returns "
                 "one scalar (integer, float or bool) only", rets[0])
    _check(func.body, [], func.name)


def _check(node, loops, fname):
    """loops: the enclosing For / While nodes, innermost last."""
    t = type(node)
    if t is S.Evaluate and type(node.value) is E.Call and node.value.op in CONTROL_OPS:
        _check_control(node, node.value, loops, fname)
        return
    inner = loops + [node] if t in (S.For, S.While) else loops
    for f in child_fields(t):
        x = getattr(node, f)
        for y in (x if isinstance(x, tuple) else (x,)):
            if isinstance(y, S.Stmt):
                _check(y, inner, fname)
            elif isinstance(y, E.PrimExpr):
                walk(y, _in_expression)


def _in_expression(x):
    if type(x) is E.Call and x.op in CONTROL_OPS:
        fail(UNSUPPORTED, f"{_WORD[x.op]} is a statement: it cannot be part of an "
             "expression", x)
    return not isinstance(x, S.Buffer)


def _check_control(stmt, call, loops, fname):
    op = call.op
    if op == RET:
        if len(call.args) != 1:
            fail(UNSUPPORTED, f"T.ret takes one value, got {len(call.args)}", stmt)
        for loop in loops:
            if type(loop) is S.For and loop.kind in ("parallel", "vectorized"):
                fail(UNSUPPORTED, f"T.ret cannot leave '{fname}' from inside {loop.kind} loop "
                     f"'{loop.loop_var.name}': its iterations run at once "
                     f"({_HOW[loop.kind]}); make the loop serial", stmt,
                     related=[(loop.span, f"the {loop.kind} loop")] if loop.span else ())
        return
    if not loops:
        fail(UNSUPPORTED, f"`{_WORD[op]}` outside a loop", stmt)
    loop = loops[-1]
    if type(loop) is S.For and loop.kind in ("parallel", "vectorized"):
        fail(UNSUPPORTED, f"`{_WORD[op]}` in {loop.kind} loop '{loop.loop_var.name}': its "
             f"iterations run at once ({_HOW[loop.kind]}), so none can "
             f"{'stop the loop' if op == BREAK else 'skip ahead'}; make the loop serial",
             stmt, related=[(loop.span, f"the {loop.kind} loop")] if loop.span else ())


_HOW = {"parallel": "on several threads", "vectorized": "as vector lanes"}
