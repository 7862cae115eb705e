"""Calls -> LLVM values: math functions (LLVM intrinsics or libm, element by element for
vectors), bit operations, `reinterpret`, LLVM intrinsics and extern functions by name,
`if_then_else` (a select under a vector mask, branches for a scalar condition) and the
dtype limits.  Mixed into the expression generator (exprs.py), whose helpers it uses."""
from __future__ import annotations

import functools

import llvmlite.ir as ir
import numpy as np

from ...ir import expr as E
from ...ir.dtype import is_float, parse_dtype
from ..errors import UNSUPPORTED, fail
from . import subroutines
from . import types as T

# math calls: name -> (LLVM intrinsic stem or None, libm float32 name, libm float64 name)
MATH = {
    "exp": ("llvm.exp", "expf", "exp"), "exp2": ("llvm.exp2", "exp2f", "exp2"),
    "log": ("llvm.log", "logf", "log"), "log2": ("llvm.log2", "log2f", "log2"),
    "log10": ("llvm.log10", "log10f", "log10"), "sqrt": ("llvm.sqrt", "sqrtf", "sqrt"),
    "sin": ("llvm.sin", "sinf", "sin"), "cos": ("llvm.cos", "cosf", "cos"),
    "floor": ("llvm.floor", None, None), "ceil": ("llvm.ceil", None, None),
    "trunc": ("llvm.trunc", None, None), "round": ("llvm.roundeven", None, None),
    "nearbyint": ("llvm.roundeven", None, None), "fabs": ("llvm.fabs", None, None),
    "tan": (None, "tanf", "tan"), "tanh": (None, "tanhf", "tanh"),
    "sinh": (None, "sinhf", "sinh"), "cosh": (None, "coshf", "cosh"),
    "asin": (None, "asinf", "asin"), "acos": (None, "acosf", "acos"),
    "atan": (None, "atanf", "atan"), "erf": (None, "erff", "erf"),
    "log1p": (None, "log1pf", "log1p"),
    "pow": ("llvm.pow", "powf", "pow"), "atan2": (None, "atan2f", "atan2"),
    "fmod": (None, "fmodf", "fmod"), "hypot": (None, "hypotf", "hypot"),
    "copysign": ("llvm.copysign", None, None), "nextafter": (None, "nextafterf", "nextafter"),
    "fma": ("llvm.fmuladd", None, None),        # as TVM emits it: fused where the target can
}

class CallMixin:
    def _x_Call(self, e):
        op = e.op
        if e.callee is not None:
            return subroutines.call(self, e)
        if op == "if_then_else":
            return self.if_then_else(e)
        if op in ("likely", "assume"):
            return self.expr(e.args[0]) if op == "likely" else T.const(T.I32, 0)
        if op in ("min_value", "max_value"):
            return self.limit(e.dtype, op == "min_value")
        if op == "reinterpret":
            v = self.expr(e.args[0])
            return self.b.bitcast(v, T.value_type(e.dtype))
        if op in ("call_llvm_pure_intrin", "call_llvm_intrin", "call_extern",
                  "call_pure_extern"):
            return self.extern_call(e)
        args = [self.expr(a) for a in e.args]
        dtype = e.args[0].dtype if e.args else e.dtype
        if op in ("bitwise_and", "bitwise_or", "bitwise_xor", "shift_left", "shift_right"):
            a, b = self.match(args[0], args[1])
            d = parse_dtype(dtype)
            f = {"bitwise_and": self.b.and_, "bitwise_or": self.b.or_,
                 "bitwise_xor": self.b.xor, "shift_left": self.b.shl,
                 "shift_right": self.b.ashr if d.kind == "int" else self.b.lshr}[op]
            return f(a, b)
        if op == "bitwise_not":
            return self.b.xor(args[0], T.const(args[0].type, -1))
        if op == "popcount":
            return self.intrinsic("llvm.ctpop", args[0].type, [args[0]])
        if op == "abs" and not is_float(dtype):
            v = args[0]
            if parse_dtype(dtype).kind == "uint":
                return v
            neg = self.b.icmp_signed("<", v, T.const(v.type, 0))
            return self.b.select(neg, self.b.neg(v), v)
        if op in ("isnan", "isinf", "isfinite"):
            v, _ = self.to_f32ish(args[0], dtype)
            if op == "isnan":
                return self.b.fcmp_unordered("uno", v, v)
            a = self.intrinsic("llvm.fabs", v.type, [v])
            inf = T.const(v.type, float("inf"))
            return self.b.fcmp_ordered("==" if op == "isinf" else "<", a, inf)
        if not is_float(dtype):
            fail(UNSUPPORTED, f"T.{op} of {dtype} is not supported by the CPU backend", e)
        d = parse_dtype(dtype)
        vals = [self.to_f32ish(a, dtype)[0] for a in args]
        if d.kind == "float" and d.bits == 16:        # half computes in float32
            vals = [self.b.fpext(v, T.with_lanes(T.F32, T.lanes(v.type))) for v in vals]
        if len(vals) == 2:
            vals = list(self.match(*vals))
        r = self.math(op, vals, e)
        if d.kind == "float" and d.bits == 16:
            r = self.b.fptrunc(r, T.with_lanes(T.F16, T.lanes(r.type)))
        return self.from_f32ish(r, dtype)

    def math(self, op, vals, e):
        t = vals[0].type
        one = T.const(t, 1.0)
        if op == "abs":
            op = "fabs"
        if op == "sigmoid":
            ex = self.math("exp", [self.b.fneg(vals[0])], e)
            return self.b.fdiv(one, self.b.fadd(one, ex))
        if op == "rsqrt":
            return self.b.fdiv(one, self.math("sqrt", vals, e))
        if op == "exp10":
            ln10 = T.const(t, float(np.log(10.0)))
            return self.math("exp", [self.b.fmul(vals[0], ln10)], e)
        spec = MATH.get(op)
        if spec is None:
            fail(UNSUPPORTED, f"T.{op} is not supported by the CPU backend", e)
        stem, f32name, f64name = spec
        if stem is not None:
            return self.intrinsic(stem, t, vals)
        name = f32name if isinstance(T.element(t), ir.FloatType) else f64name
        n = T.lanes(t)
        if n == 1:
            return self.call_named(name, t, vals)
        out = ir.Constant(t, ir.Undefined)
        for i in range(n):
            xs = [self.b.extract_element(v, T.I32(i)) for v in vals]
            out = self.b.insert_element(out, self.call_named(name, T.element(t), xs), T.I32(i))
        return out

    def limit(self, dtype, lo):
        d = parse_dtype(dtype)
        if d.kind == "bfloat":
            return T.const(T.I16, 0xFF7F if lo else 0x7F7F)
        if d.is_float:
            v = float(np.finfo({16: np.float16, 32: np.float32, 64: np.float64}[d.bits]).max)
            return T.const(T.value_type(dtype), -v if lo else v)
        if d.kind == "uint":
            return T.const(T.value_type(dtype), 0 if lo else (1 << d.bits) - 1)
        return T.const(T.value_type(dtype), -(1 << (d.bits - 1)) if lo else
                       (1 << (d.bits - 1)) - 1)

    def extern_call(self, e):
        args = list(e.args)
        if args and isinstance(args[0], E.StringImm):
            args = args[1:]                             # the result dtype
        if not args or not isinstance(args[0], E.StringImm):
            fail(UNSUPPORTED, f"T.{e.op} needs a function name", e)
        name = args[0].value
        rest = args[1:]
        if e.op.startswith("call_llvm") and rest and isinstance(rest[0], E.IntImm) and \
                rest[0].value == len(rest) - 1 and parse_dtype(rest[0].dtype).kind == "uint":
            rest = rest[1:]                             # TVM's signature-count argument
        if e.op in ("call_extern", "call_pure_extern") and not _in_process(name) and \
                self.module.globals.get(name) is None:
            # the JIT would bind the call to a null address: the run would crash
            fail(UNSUPPORTED, f"T.{e.op} of '{name}': this process has no C function of "
                 "that name (the CPU backend calls the C library's, such as expf)", e)
        vals = [self.expr(a) for a in rest]
        ret = T.value_type(e.dtype) if e.dtype not in ("void", "handle") else T.VOID
        return self.call_named(name, ret, vals)

    def if_then_else(self, e):
        cond = self.condition(e.args[0])
        if T.lanes(cond.type) > 1:
            with self.masked(cond):
                a = self.expr(e.args[1])
            with self.masked(self.b.not_(cond)):
                b = self.expr(e.args[2])
            n = max(T.lanes(cond.type), T.lanes(a.type), T.lanes(b.type))
            return self.b.select(self.splat(cond, n), self.splat(a, n), self.splat(b, n))
        bl = self.b
        then_bb = bl.append_basic_block("ite.then")
        else_bb = bl.append_basic_block("ite.else")
        end_bb = bl.append_basic_block("ite.end")
        bl.cbranch(cond, then_bb, else_bb)
        bl.position_at_end(then_bb)
        a = self.expr(e.args[1])
        a_end = bl.block
        bl.position_at_end(else_bb)
        b = self.expr(e.args[2])
        b_end = bl.block
        n = max(T.lanes(a.type), T.lanes(b.type))
        bl.position_at_end(a_end)
        a = self.splat(a, n)
        bl.branch(end_bb)
        bl.position_at_end(b_end)
        b = self.splat(b, n)
        bl.branch(end_bb)
        bl.position_at_end(end_bb)
        phi = bl.phi(a.type)
        phi.add_incoming(a, a_end)
        phi.add_incoming(b, b_end)
        return phi


@functools.lru_cache(maxsize=1024)
def _in_process(name: str) -> bool:
    """Whether the running process (Python, its C library and math library) exports a
    function of this name: what the JIT can bind an external call to."""
    import ctypes
    try:
        return hasattr(ctypes.CDLL(None), name)
    except OSError:
        return True              # cannot tell: leave the call to the JIT, as before
