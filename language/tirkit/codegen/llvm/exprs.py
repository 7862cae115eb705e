"""Expressions -> LLVM values.  A value is scalar or, inside a vectorized loop, a vector; mixing
the two broadcasts the scalar.  Integer and float arithmetic of every supported dtype,
bfloat16 through float32, casts, select; calls (math, intrinsics, extern functions,
if_then_else) are in calls.py."""
from __future__ import annotations

import llvmlite.ir as ir

from ...arith.alu import DIVIDES
from ...ir import expr as E
from ...ir.dtype import is_float, parse_dtype
from ..errors import UNSUPPORTED, fail
from . import types as T
from .calls import CallMixin

# int32 kinds computed in 64 bits inside a memory index (`ExprMixin.wide`)
_WIDE_OPS = (E.Add, E.Sub, E.Mul, E.Div, E.Mod, E.FloorDiv, E.FloorMod, E.Min, E.Max)
_ICMP = {E.EQ: "==", E.NE: "!=", E.LT: "<", E.LE: "<=", E.GT: ">", E.GE: ">="}
_FCMP = {E.EQ: "==", E.NE: "!=", E.LT: "<", E.LE: "<=", E.GT: ">", E.GE: ">="}


def _int32(dtype: str) -> bool:
    d = parse_dtype(dtype)
    return d.kind == "int" and d.bits == 32


class ExprMixin(CallMixin):
    # ---- helpers ------------------------------------------------------------------
    def splat(self, v, n):
        if n == 1 or isinstance(v.type, ir.VectorType):
            return v
        vt = ir.VectorType(v.type, n)
        if isinstance(v, ir.Constant):
            return ir.Constant(vt, [v] * n)
        b = self.b
        zero = ir.Constant(vt, None)           # zeroinitializer: every lane is replaced
        x = b.insert_element(zero, v, T.I32(0))
        return b.shuffle_vector(x, zero, ir.Constant(ir.VectorType(T.I32, n), [0] * n))

    def match(self, a, b):
        la, lb = T.lanes(a.type), T.lanes(b.type)
        if la == lb:
            return a, b
        n = max(la, lb)
        return self.splat(a, n), self.splat(b, n)

    def intrinsic(self, stem, ret, args, arg_types=None):
        name = f"{stem}.{T.mangle(ret)}" if stem.count(".") == 1 else stem
        return self.call_named(name, ret, args, arg_types)

    def call_named(self, name, ret, args, arg_types=None):
        fn = self.module.globals.get(name)
        if fn is None:
            fn = ir.Function(self.module, ir.FunctionType(ret, arg_types or [a.type for a in args]),
                             name)
        return self.b.call(fn, args)

    def bf16_to_f32(self, v):
        n = T.lanes(v.type)
        b = self.b
        x = b.shl(b.zext(v, T.with_lanes(T.I32, n)), T.const(T.with_lanes(T.I32, n), 16))
        return b.bitcast(x, T.with_lanes(T.F32, n))

    def f32_to_bf16(self, v):
        n = T.lanes(v.type)
        b = self.b
        i32 = T.with_lanes(T.I32, n)
        u = b.bitcast(v, i32)
        lsb = b.and_(b.lshr(u, T.const(i32, 16)), T.const(i32, 1))
        r = b.lshr(b.add(b.add(u, T.const(i32, 0x7FFF)), lsb), T.const(i32, 16))
        r = b.trunc(r, T.with_lanes(T.I16, n))
        nan = b.fcmp_unordered("uno", v, v)
        return b.select(nan, T.const(T.with_lanes(T.I16, n), 0x7FC0), r)

    def to_f32ish(self, v, dtype):
        """(value, compute dtype): bfloat16 computes in float32."""
        if parse_dtype(dtype).kind == "bfloat":
            return self.bf16_to_f32(v), "float32"
        return v, dtype

    def from_f32ish(self, v, dtype):
        if parse_dtype(dtype).kind == "bfloat":
            return self.f32_to_bf16(v)
        return v

    # ---- dispatch -----------------------------------------------------------------
    def expr(self, e):
        if self.index_mode and _int32(e.dtype):
            return self.wide(e)
        m = getattr(self, "_x_" + type(e).__name__, None)
        if m is not None:
            return m(e)
        if isinstance(e, E.BinaryOp):
            return self.binary(e)
        fail(UNSUPPORTED, f"the CPU backend cannot compile {type(e).__name__}", e)

    def wide(self, e):
        """An int32 expression inside a memory index, as a 64-bit value (the type of the
        address): constants, loop variables and their arithmetic are computed in 64 bits, so
        LLVM need not widen each induction variable and its users itself (on the scheduled
        matmuls that was a quarter of the optimizer's time).  Exact wherever the int32 value
        does not overflow, which index arithmetic already assumes (its `nsw` flags).  Other
        kinds (loads, calls, casts, selects, lets) are computed as written and sign-extended."""
        t = type(e)
        if t is E.IntImm:
            return T.const(T.I64, e.value)
        block = self.b.block
        hit = self.memo.get(id(e))
        if hit is not None and hit[0] is block:
            return hit[1]
        if t is E.Var or t is E.SizeVar:
            v = self._x_Var(e)
            w = self.wide_vars.get(id(e))
            v = w[1] if w is not None and w[0] is v else self.sext64(v)
            self.remember(e, block, v, frozenset((id(e),)))
            return v
        if t in _WIDE_OPS or t is E.Ramp or t is E.Broadcast:
            v = self.binary(e) if t in _WIDE_OPS else \
                self._x_Ramp(e) if t is E.Ramp else self._x_Broadcast(e)
            kids = (e.a, e.b) if t in _WIDE_OPS else (e.base, e.stride) if t is E.Ramp else \
                (e.value,)
            deps = frozenset()
            for k in kids:
                if type(k) is E.IntImm:
                    continue
                hit = self.memo.get(id(k))
                if hit is None or hit[0] is not block:
                    return v                   # an impure operand: not remembered
                deps |= hit[2]
            self.remember(e, block, v, deps)
            return v
        self.index_mode = False
        try:
            v = self.expr(e)
        finally:
            self.index_mode = True
        return self.sext64(v)

    def remember(self, e, block, value, deps):
        """`wide` remembers the value of each pure index expression in its block (a node
        shared by the copies of an unrolled body is computed once), until one of the
        variables it depends on is bound again (`bind`)."""
        self.memo[id(e)] = (block, value, deps)
        for d in deps:
            self.memo_users.setdefault(d, []).append(id(e))

    def bind(self, var, value):
        """Give a variable its value here, forgetting the index values that depend on it."""
        self.vars[id(var)] = value
        users = self.memo_users.pop(id(var), None)
        if users:
            for k in users:
                self.memo.pop(k, None)

    def sext64(self, v):
        n = T.lanes(v.type)
        ks = T.int_values(v)
        if ks is not None:
            w = T.element(v.type).width
            ks = [k - (1 << w) if k >= 1 << (w - 1) else k for k in ks]
            return T.const_vector(T.I64, ks) if n > 1 else T.const(T.I64, ks[0])
        return self.b.sext(v, T.with_lanes(T.I64, n))

    def _x_IntImm(self, e):
        return T.const(T.value_type(e.dtype), e.value)

    def _x_FloatImm(self, e):
        d = parse_dtype(e.dtype)
        if d.kind == "bfloat":
            return T.const(T.I16, T.bf16_bits(e.value))
        return T.const(T.value_type(e.dtype), e.value)

    def _x_Var(self, e):
        v = self.vars.get(id(e))
        if v is None:
            fail(UNSUPPORTED, f"variable '{e.name}' is not defined here", e)
        return v

    _x_SizeVar = _x_Var

    def _x_Let(self, e):
        self.bind(e.var, self.expr(e.value))
        if T.lanes(self.vars[id(e.var)].type) > 1:
            self.varying.add(id(e.var))
        return self.expr(e.body)

    def _x_Ramp(self, e):
        base, stride = self.expr(e.base), self.expr(e.stride)
        t = base.type
        steps = ir.Constant(ir.VectorType(t, e.lanes), [ir.Constant(t, i) for i in range(e.lanes)])
        return self.b.add(self.splat(base, e.lanes), self.b.mul(steps, self.splat(stride, e.lanes)))

    def _x_Broadcast(self, e):
        return self.splat(self.expr(e.value), e.lanes)

    def _x_Not(self, e):
        v = self.expr(e.a)
        return self.b.xor(v, T.const(v.type, 1))

    def _x_Select(self, e):
        c, a, b = self.expr(e.condition), self.expr(e.true_value), self.expr(e.false_value)
        n = max(T.lanes(c.type), T.lanes(a.type), T.lanes(b.type))
        return self.b.select(self.splat(c, n), self.splat(a, n), self.splat(b, n))

    def condition(self, e):
        """A branch or mask condition as i1 (a non-bool value is compared with zero)."""
        v = self.expr(e)
        if T.element(v.type) == T.I1:
            return v
        if T.is_fp(v.type):
            return self.b.fcmp_unordered("!=", v, T.const(v.type, 0.0))
        return self.b.icmp_unsigned("!=", v, T.const(v.type, 0))

    def _x_Cast(self, e):
        return self.cast(self.expr(e.value), e.value.dtype, e.dtype)

    def cast(self, v, src, dst):
        ds, dd = parse_dtype(src), parse_dtype(dst)
        n = T.lanes(v.type)
        b = self.b
        if src == dst or (ds.kind, ds.bits) == (dd.kind, dd.bits):
            return v
        if ds.kind == "bfloat":
            return self.cast(self.bf16_to_f32(v), "float32", dst)
        if dd.kind == "bfloat":
            f = self.cast(v, src, "float32") if src != "float32" else v
            return self.f32_to_bf16(f)
        tt = T.with_lanes(T.value_type(dd.element()), n)
        if dd.kind == "bool":
            if ds.is_float:
                return b.fcmp_unordered("!=", v, T.const(v.type, 0.0))
            return b.icmp_unsigned("!=", v, T.const(v.type, 0))
        if ds.kind == "bool":
            return b.uitofp(v, tt) if dd.is_float else b.zext(v, tt)
        if ds.is_int and dd.is_int:
            if dd.bits < ds.bits:
                return b.trunc(v, tt)
            if dd.bits == ds.bits:
                return v
            return b.sext(v, tt) if ds.kind == "int" else b.zext(v, tt)
        if ds.is_int and dd.is_float:
            return b.sitofp(v, tt) if ds.kind == "int" else b.uitofp(v, tt)
        if ds.is_float and dd.is_int:
            if self.report is not None:      # checked code: a defined value, not poison
                op = "fptosi" if dd.kind == "int" else "fptoui"
                return self.call_named(f"llvm.{op}.sat.{T.mangle(tt)}.{T.mangle(v.type)}", tt,
                                       [v])
            return b.fptosi(v, tt) if dd.kind == "int" else b.fptoui(v, tt)
        if ds.is_float and dd.is_float:
            return b.fpext(v, tt) if dd.bits > ds.bits else b.fptrunc(v, tt)
        fail(UNSUPPORTED, f"cannot cast {src} to {dst}", None)

    # ---- arithmetic ---------------------------------------------------------------
    def binary(self, e):
        t = type(e)
        if t is E.Add and is_float(e.dtype) and parse_dtype(e.dtype).bits >= 32 and \
                parse_dtype(e.dtype).kind == "float":
            for m, c in ((e.a, e.b), (e.b, e.a)):
                if type(m) is E.Mul:         # a * b + c may fuse (llvm.fmuladd)
                    x, y, z = self.expr(m.a), self.expr(m.b), self.expr(c)
                    n = max(T.lanes(x.type), T.lanes(y.type), T.lanes(z.type))
                    x, y, z = self.splat(x, n), self.splat(y, n), self.splat(z, n)
                    return self.intrinsic("llvm.fmuladd", x.type, [x, y, z])
        a, b = self.match(self.expr(e.a), self.expr(e.b))
        dtype = e.a.dtype
        if t in (E.And, E.Or):
            return (self.b.and_ if t is E.And else self.b.or_)(a, b)
        if t in _ICMP:
            a, dt = self.to_f32ish(a, dtype)
            b, _ = self.to_f32ish(b, dtype)
            d = parse_dtype(dt)
            if d.is_float:
                op = _FCMP[t]
                return self.b.fcmp_unordered(op, a, b) if t is E.NE else \
                    self.b.fcmp_ordered(op, a, b)
            if d.kind == "uint" or d.kind == "bool":
                return self.b.icmp_unsigned(_ICMP[t], a, b)
            return self.b.icmp_signed(_ICMP[t], a, b)
        dtype = e.dtype
        a, dt = self.to_f32ish(a, dtype)
        b, _ = self.to_f32ish(b, dtype)
        if t in DIVIDES and not parse_dtype(dt).is_float:
            b = self.safe_divisor(e, a, b, parse_dtype(dt).kind == "int")
        return self.from_f32ish(self.arith(t, a, b, dt), dtype)

    def arith(self, t, a, b, dtype):
        d = parse_dtype(dtype)
        bl = self.b
        flags = ["nsw"] if self.index_mode and d.kind == "int" else []
        if d.is_float:
            if t is E.Add:
                return bl.fadd(a, b)
            if t is E.Sub:
                return bl.fsub(a, b)
            if t is E.Mul:
                return bl.fmul(a, b)
            if t is E.Div:
                return bl.fdiv(a, b)
            if t is E.Mod:
                return bl.frem(a, b)
            if t is E.FloorDiv:
                return self.intrinsic("llvm.floor", a.type, [bl.fdiv(a, b)])
            if t is E.FloorMod:
                q = self.intrinsic("llvm.floor", a.type, [bl.fdiv(a, b)])
                return bl.fsub(a, bl.fmul(q, b))
            if t is E.Min:
                return bl.select(bl.fcmp_ordered("<", a, b), a, b)
            if t is E.Max:
                return bl.select(bl.fcmp_ordered(">", a, b), a, b)
        else:
            signed = d.kind == "int"
            if t in (E.Add, E.Sub, E.Mul):
                xs, ys = T.int_values(a), T.int_values(b)
                if xs is not None and ys is not None:   # constants (unrolled indices): folded
                    op = {E.Add: int.__add__, E.Sub: int.__sub__, E.Mul: int.__mul__}[t]
                    out = [op(x, y) for x, y in zip(xs, ys)]
                    return T.const_vector(a.type.element, out) \
                        if isinstance(a.type, ir.VectorType) else T.const(a.type, out[0])
                k = T.int_value(a), T.int_value(b)
                unit = 1 if t is E.Mul else 0                # x + 0, x - 0, x * 1: x
                if k[1] == unit:
                    return a
                if k[0] == unit and t is not E.Sub:
                    return b
                r = {E.Add: bl.add, E.Sub: bl.sub, E.Mul: bl.mul}[t](a, b)
                if flags and not isinstance(r, ir.Constant):
                    r.flags.extend(flags)
                return r
            if t is E.Div:
                return bl.sdiv(a, b) if signed else bl.udiv(a, b)
            if t is E.Mod:
                return bl.srem(a, b) if signed else bl.urem(a, b)
            if t is E.FloorDiv:
                if not signed:
                    return bl.udiv(a, b)
                q, r = bl.sdiv(a, b), bl.srem(a, b)
                zero = T.const(a.type, 0)
                adj = bl.and_(bl.icmp_signed("!=", r, zero),
                              bl.xor(bl.icmp_signed("<", r, zero), bl.icmp_signed("<", b, zero)))
                return bl.sub(q, bl.zext(adj, a.type))
            if t is E.FloorMod:
                if not signed:
                    return bl.urem(a, b)
                r = bl.srem(a, b)
                zero = T.const(a.type, 0)
                adj = bl.and_(bl.icmp_signed("!=", r, zero),
                              bl.xor(bl.icmp_signed("<", r, zero), bl.icmp_signed("<", b, zero)))
                return bl.select(adj, bl.add(r, b), r)
            if t is E.Min:
                c = bl.icmp_signed("<", a, b) if signed else bl.icmp_unsigned("<", a, b)
                return bl.select(c, a, b)
            if t is E.Max:
                c = bl.icmp_signed(">", a, b) if signed else bl.icmp_unsigned(">", a, b)
                return bl.select(c, a, b)
        fail(UNSUPPORTED, f"{t.__name__} on {dtype} is not supported", None)
