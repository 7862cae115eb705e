"""CUDA C of expressions and types: one printer per node kind, dtypes through CUDA's own types
(`half` from cuda_fp16.h, `nv_bfloat16` from cuda_bf16.h, `signed char` for int8) and math
through the single-precision functions (f16/bf16 computed in float and converted back)."""
from __future__ import annotations

import math

from ...arith.interval import interval
from ...ir import expr as E
from ...ir.dtype import lanes_of, parse_dtype
from ..errors import UNSUPPORTED, fail
from . import cp_async, griddep, ldmatrix, mma, shuffle, wmma
from .vector import multiple_of

_SCALAR = {
    ("int", 8): "signed char", ("int", 16): "short", ("int", 32): "int",
    ("int", 64): "long long", ("uint", 8): "unsigned char", ("uint", 16): "unsigned short",
    ("uint", 32): "unsigned int", ("uint", 64): "unsigned long long", ("bool", 1): "bool",
    ("bool", 8): "bool", ("float", 16): "half", ("bfloat", 16): "nv_bfloat16",
    ("float", 32): "float", ("float", 64): "double",
}
_VECTOR = {("float", 32): "float", ("int", 32): "int", ("uint", 32): "uint",
           ("float", 64): "double", ("int", 8): "char", ("uint", 8): "uchar"}
_HALF = {"half": ("__half2float", "__float2half"),
         "nv_bfloat16": ("__bfloat162float", "__float2bfloat16")}

# math op -> C function on float (f32 and the 16-bit floats); f64 drops the `f`
_MATH = {op: op + "f" for op in (
    "exp", "exp2", "exp10", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin", "cos",
    "tan", "sinh", "cosh", "tanh", "asin", "acos", "atan", "floor", "ceil", "trunc", "round",
    "nearbyint", "fabs", "erf", "pow", "atan2", "fmod", "hypot", "copysign", "nextafter", "fma")}
_BITWISE = {"bitwise_and": "&", "bitwise_or": "|", "bitwise_xor": "^",
            "shift_left": "<<", "shift_right": ">>"}
_BINOP = {E.Add: "+", E.Sub: "-", E.Mul: "*", E.EQ: "==", E.NE: "!=", E.LT: "<",
          E.LE: "<=", E.GT: ">", E.GE: ">=", E.And: "&&", E.Or: "||"}

_VECTOR_OPS = {E.Add: "+", E.Sub: "-", E.Mul: "*", E.Div: "/"}


def _vector_operators() -> str:
    """CUDA's vector types (float4, int2, ...) have no arithmetic: lane by lane."""
    out = []
    for base in sorted(set(_VECTOR.values())):
        for n in (2, 4):
            t = f"{base}{n}"
            for op in _VECTOR_OPS.values():
                lanes = ", ".join(f"a.{c} {op} b.{c}" for c in "xyzw"[:n])
                out.append(f"__device__ __forceinline__ {t} operator{op}({t} a, {t} b) "
                           f"{{ return make_{t}({lanes}); }}")
    return "\n".join(out) + "\n"


PRELUDE = """#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <mma.h>
typedef unsigned int uint;
typedef unsigned char uchar;
__device__ __forceinline__ long long tirkit_floordiv(long long a, long long b) {
  long long q = a / b; return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q;
}
__device__ __forceinline__ long long tirkit_floormod(long long a, long long b) {
  long long r = a % b; return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
""" + _vector_operators()


def ctype(dtype: str) -> str:
    d = parse_dtype(dtype)
    if d is None:
        fail(UNSUPPORTED, f"dtype {dtype} has no CUDA type")
    if d.lanes > 1:
        base = _VECTOR.get((d.kind, d.bits))
        if base is None or d.lanes not in (2, 4):
            fail(UNSUPPORTED, f"vector dtype {dtype} has no CUDA vector type")
        return f"{base}{d.lanes}"
    t = _SCALAR.get((d.kind, d.bits))
    if t is None:
        fail(UNSUPPORTED, f"dtype {dtype} has no CUDA type")
    return t


def _scalar(e, what):
    """CUDA's vector types have the PRELUDE's arithmetic only: refuse `what` on a vector."""
    if lanes_of(e.dtype) > 1:
        fail(UNSUPPORTED, f"no CUDA C for {what} of {e.dtype} values (a vector type has "
             "+ - * / only; write the lanes as a loop)", e)


def _float_lit(v: float, dtype: str) -> str:
    if math.isnan(v):
        s = "__int_as_float(0x7fc00000)"
    elif math.isinf(v):
        s = "__int_as_float(0x7f800000)" if v > 0 else "__int_as_float(0xff800000)"
    else:
        s = repr(float(v)) + "f"
    t = ctype(dtype)
    if t == "double":
        return s[:-1] if s.endswith("f") and not s.startswith("__") else f"((double){s})"
    if t in _HALF:
        return f"{_HALF[t][1]}({s})"
    return s


class ExprPrinter:
    """`ExprPrinter(names)(e)`: names maps id(Var) -> C identifier."""

    def __init__(self, names, ranges=None):
        self.names = names
        self.ranges = {} if ranges is None else ranges    # id(Var) -> (lo, hi) of loops

    def _nonneg(self, e) -> bool:
        r = interval(e, self.ranges)
        return r is not None and r[0] >= 0

    def __call__(self, e) -> str:
        m = getattr(self, "_" + type(e).__name__, None)
        if m is None:
            if isinstance(e, E.BinaryOp):
                return self._binary(e)
            fail(UNSUPPORTED, f"no CUDA C for {type(e).__name__}", e)
        return m(e)

    def _IntImm(self, e):
        t = ctype(e.dtype)
        if t == "bool":
            return "true" if e.value else "false"
        if t == "long long":
            return f"{e.value}LL"
        if t.startswith("unsigned"):
            return f"{e.value}U" if "long" not in t else f"{e.value}ULL"
        if t == "int":
            return str(e.value) if e.value != -(1 << 31) else "(-2147483647 - 1)"
        return f"(({t}){e.value})"

    def _FloatImm(self, e):
        return _float_lit(e.value, e.dtype)

    def _Var(self, e):
        try:
            return self.names[id(e)]
        except KeyError:
            fail(UNSUPPORTED, f"variable '{e.name}' is not defined in the kernel", e)

    _SizeVar = _Var

    def _Cast(self, e):
        _scalar(e, "a cast")
        src, dst = ctype(e.value.dtype), ctype(e.dtype)
        x = self(e.value)
        if src == dst:
            return x
        if src in _HALF:
            x = f"{_HALF[src][0]}({x})"
        if dst in _HALF:
            return f"{_HALF[dst][1]}((float)({x}))"
        return f"(({dst})({x}))"

    def _Not(self, e):
        return f"(!{self(e.a)})"

    def _Select(self, e):
        _scalar(e.condition, "a vector condition")
        return f"({self(e.condition)} ? {self(e.true_value)} : {self(e.false_value)})"

    def _binary(self, e):
        a, b, t = self(e.a), self(e.b), type(e)
        d = parse_dtype(e.a.dtype)
        if d.lanes > 1:
            return self._vector_binary(e, a, b, t)
        if t in _BINOP:
            return f"({a} {_BINOP[t]} {b})"
        if t is E.Div:
            return f"({a} / {b})"
        if t is E.Mod:
            return f"({a} % {b})" if d.is_int else f"fmodf({a}, {b})"
        if t in (E.FloorDiv, E.FloorMod):
            if d.is_int and isinstance(e.b, E.IntImm) and e.b.value > 0 and \
                    self._nonneg(e.a):            # C's division is floor division here
                return f"({a} {'/' if t is E.FloorDiv else '%'} {b})"
            if d.is_int:
                fn = "tirkit_floordiv" if t is E.FloorDiv else "tirkit_floormod"
                return f"(({ctype(e.dtype)}){fn}({a}, {b}))"
            q = f"floorf((float)({a}) / (float)({b}))"
            return q if t is E.FloorDiv else f"({a} - {q} * {b})"
        if t is E.Min:
            return f"(({a}) < ({b}) ? ({a}) : ({b}))"
        if t is E.Max:
            return f"(({a}) > ({b}) ? ({a}) : ({b}))"
        fail(UNSUPPORTED, f"no CUDA C for {t.__name__}", e)

    def _vector_binary(self, e, a, b, t):
        """Arithmetic of CUDA vector types, through the PRELUDE's lane-by-lane operators."""
        op = _VECTOR_OPS.get(t)
        if op is None:
            fail(UNSUPPORTED, f"no CUDA C for {t.__name__} of {e.a.dtype} values (a vector "
                 "type has + - * / only; write the lanes as a loop)", e)
        ctype(e.dtype)                      # a vector type CUDA has
        return f"({a} {op} {b})"

    def _BufferLoad(self, e):
        data = self(e.buffer.data)
        (ix,) = e.indices
        if isinstance(ix, E.Ramp):
            base = self._dense(ix)
            if multiple_of(ix.base, ix.lanes):     # else lane by lane: it would fault
                return f"(*({ctype(e.dtype)}*)({data} + {base}))"
            return f"make_{ctype(e.dtype)}(" + ", ".join(
                f"{data}[{base} + {k}]" for k in range(ix.lanes)) + ")"
        return f"{data}[{self(ix)}]"

    def _dense(self, ramp):
        if not (isinstance(ramp.stride, E.IntImm) and ramp.stride.value == 1):
            fail(UNSUPPORTED, "only dense vector accesses (stride 1) have CUDA C", ramp)
        return self(ramp.base)

    def _Broadcast(self, e):
        v = self(e.value)
        return f"make_{ctype(e.dtype)}({', '.join([v] * e.lanes)})"

    def _Let(self, e):
        fail(UNSUPPORTED, "a let expression has no CUDA C (bind it with a statement)", e)

    def _Call(self, e):
        op, args = e.op, e.args
        if e.callee is not None:         # a device function of source.py
            return f"tirkit_call_{e.callee}({', '.join(self(a) for a in args)})"
        if op == "address_of" and args and isinstance(args[0], E.BufferLoad):
            return f"(&{self(args[0])})"
        if op in wmma.OPS:
            return wmma.call_c(e, self)
        if op in mma.OPS:
            return mma.call_c(e, self)
        if op in ldmatrix.OPS:
            return ldmatrix.call_c(e, self, ctype)
        if op in cp_async.OPS:
            return cp_async.call_c(e, self, ctype)
        if op in griddep.OPS:
            return griddep.call_c(e)
        if op == wmma.ACCESS_PTR:
            return wmma.access_ptr_c(e, self, ctype)
        if op in shuffle.OPS:
            return shuffle.shuffle_c(e, self)
        if op in ("if_then_else",):
            _scalar(args[0], "a vector condition")
            return f"({self(args[0])} ? {self(args[1])} : {self(args[2])})"
        if op == "likely":
            return self(args[0])
        _scalar(e, f"T.{op}")
        if op in _BITWISE:
            return f"({self(args[0])} {_BITWISE[op]} {self(args[1])})"
        if op == "bitwise_not":
            return f"(~{self(args[0])})"
        if op == "ceildiv":
            a, b = self(args[0]), self(args[1])
            return f"(({ctype(e.dtype)})-tirkit_floordiv(-({a}), {b}))"
        if op in ("isnan", "isinf", "isfinite"):
            return f"{op}((float)({self._to_float(args[0])}))"
        if op in ("min_value", "max_value"):
            import numpy as np
            from ...ir.constants import numpy_dtype
            nd = numpy_dtype(e.dtype)
            info = np.finfo(nd) if parse_dtype(e.dtype).is_float else np.iinfo(nd)
            v = info.min if op == "min_value" else info.max
            return self(E.FloatImm(e.dtype, float(v)) if parse_dtype(e.dtype).is_float
                        else E.IntImm(e.dtype, int(v)))
        if op in ("abs", "fabs") and parse_dtype(e.dtype).is_int:
            return f"(({ctype(e.dtype)})llabs({self(args[0])}))"
        if op == "sigmoid":
            x = self._to_float(args[0])
            return self._from_float(f"(1.0f / (1.0f + expf(-({x}))))", e.dtype)
        if op in _MATH and parse_dtype(e.dtype).is_float:
            fn = _MATH[op]
            if ctype(e.dtype) == "double":
                return f"{fn[:-1]}({', '.join(self(a) for a in args)})"
            inner = ", ".join(self._to_float(a) for a in args)
            return self._from_float(f"{fn}({inner})", e.dtype)
        fail(UNSUPPORTED, f"no CUDA C for T.{op}", e)

    def _to_float(self, a):
        t = ctype(a.dtype)
        x = self(a)
        return f"{_HALF[t][0]}({x})" if t in _HALF else x

    def _from_float(self, x, dtype):
        t = ctype(dtype)
        return f"{_HALF[t][1]}({x})" if t in _HALF else x
