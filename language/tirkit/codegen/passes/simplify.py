"""Pass 6: simplification.  Rewrite rules as a table, applied bottom-up once; integer rules
only (floating-point expressions are left exactly as written)."""
from __future__ import annotations

from ...arith.alu import fold
from ...ir import expr as E
from ...ir import stmt as S
from ...ir.dtype import is_int, int_range, parse_dtype
from .rewrite import transform


def _wrap(v, dtype):
    lo, hi = int_range(dtype)
    span = hi - lo + 1
    return (v - lo) % span + lo


_FOLDED = E.ARITH            # integer binary operators folded (arith.alu computes them)


def _ci(e, v=None):
    return isinstance(e, E.IntImm) and (v is None or e.value == v)


def _rule(x):
    t = type(x)
    if t is E.Call and x.op == "ceildiv" and len(x.args) == 2 and is_int(x.args[0].dtype):
        a, b = x.args                                     # ceildiv(a, b) -> (a + b - 1) // b
        dt = a.dtype
        num = _rule(E.Sub(_rule(E.Add(a, b, dt)) or E.Add(a, b, dt), E.IntImm(dt, 1), dt))
        num = num or E.Sub(E.Add(a, b, dt), E.IntImm(dt, 1), dt)
        return _rule(E.FloorDiv(num, b, dt)) or E.FloorDiv(num, b, dt)
    if t in _FOLDED and is_int(x.dtype) and parse_dtype(x.dtype).lanes == 1:
        a, b = x.a, x.b
        if _ci(a) and _ci(b):
            v = fold(t, a.value, b.value)
            if v is not None:
                return E.IntImm(x.dtype, _wrap(v, x.dtype))
        if t is E.Add and _ci(b, 0):            # x + 0 -> x
            return a
        if t is E.Add and _ci(a, 0):            # 0 + x -> x
            return b
        if t is E.Sub and _ci(b, 0):            # x - 0 -> x
            return a
        if t is E.Mul and (_ci(b, 1)):          # x * 1 -> x
            return a
        if t is E.Mul and _ci(a, 1):            # 1 * x -> x
            return b
        if t is E.Mul and (_ci(a, 0) or _ci(b, 0)):   # x * 0 -> 0
            return E.IntImm(x.dtype, 0)
        if t in (E.FloorDiv, E.Div) and _ci(b, 1):    # x // 1 -> x
            return a
        if t in (E.FloorMod, E.Mod) and _ci(b, 1):    # x % 1 -> 0
            return E.IntImm(x.dtype, 0)
        if t is E.Add and _ci(b) and type(a) is E.Add and _ci(a.b):   # (x + c1) + c2
            return E.Add(a.a, E.IntImm(x.dtype, _wrap(a.b.value + b.value, x.dtype)), x.dtype)
        if t is E.Mul and _ci(b) and type(a) is E.Mul and _ci(a.b):   # (x * c1) * c2
            return E.Mul(a.a, E.IntImm(x.dtype, _wrap(a.b.value * b.value, x.dtype)), x.dtype)
    if t in E.COMPARISONS and _ci(x.a) and _ci(x.b):
        return E.IntImm("bool", fold(t, x.a.value, x.b.value))
    if t is E.And:
        if _ci(x.a, 1):
            return x.b
        if _ci(x.b, 1):
            return x.a
        if _ci(x.a, 0) or _ci(x.b, 0):
            return E.IntImm("bool", 0)
    if t is E.Or:
        if _ci(x.a, 0):
            return x.b
        if _ci(x.b, 0):
            return x.a
    if t is E.Cast and _ci(x.value) and is_int(x.dtype):   # cast of an integer constant
        return E.IntImm(x.dtype, _wrap(x.value.value, x.dtype))
    if t is E.Cast and x.value.dtype == x.dtype:          # cast to the same dtype
        return x.value
    if t is S.For and any(type(v) is E.IntImm and v.dtype != x.loop_var.dtype
                          for v in (x.min, x.extent)):   # loop bounds in the loop's dtype
        fix = [E.IntImm(x.loop_var.dtype, v.value) if type(v) is E.IntImm else v
               for v in (x.min, x.extent)]
        return S.For(x.loop_var, fix[0], fix[1], x.kind, x.body, x.thread_tag, x.annotations,
                     span=x.span)
    if t is S.IfThenElse and _ci(x.condition):            # if True / if False
        return x.then_case if x.condition.value else (x.else_case or
                                                       S.Evaluate(E.IntImm("int32", 0)))
    if t is S.SeqStmt:                                     # drop no-op evaluates
        keep = [s for s in x.seq
                if not (type(s) is S.Evaluate and (_ci(s.value) or is_region_declaration(s)))]
        if len(keep) != len(x.seq):
            return S.seq(keep) if keep else S.Evaluate(E.IntImm("int32", 0))
    return None


def is_region_declaration(s):
    # `T.realize(A[region], scope)` only declares the region a buffer's storage covers
    return type(s.value) is E.Call and s.value.op == "realize"


def simplify(body):
    return transform(body, _rule)
