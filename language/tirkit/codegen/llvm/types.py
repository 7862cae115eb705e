"""TVM dtypes as LLVM types.  In registers bool is i1 and bfloat16 is its i16 bit pattern
(arithmetic goes through float32); in memory bool takes a byte."""
from __future__ import annotations

import struct

import llvmlite.ir as ir

from ...ir.dtype import parse_dtype

PTR = ir.PointerType()
I1, I8, I16, I32, I64 = (ir.IntType(n) for n in (1, 8, 16, 32, 64))
F16, F32, F64 = ir.HalfType(), ir.FloatType(), ir.DoubleType()
VOID = ir.VoidType()


def _scalar(kind, bits, memory):
    if kind == "bool":
        return I8 if memory else I1
    if kind in ("int", "uint"):
        return ir.IntType(bits)
    if kind == "float":
        return {16: F16, 32: F32, 64: F64}[bits]
    if kind == "bfloat":
        return I16
    if kind == "handle":
        return PTR
    raise NotImplementedError(kind)


def _check(dtype, d):
    if d is None or d.scalable or d.kind not in ("bool", "int", "uint", "float", "bfloat",
                                                 "handle"):
        from ..errors import UNSUPPORTED, fail
        fail(UNSUPPORTED, f"dtype {dtype} is not supported by the CPU backend")


def value_type(dtype: str):
    d = parse_dtype(dtype)
    _check(dtype, d)
    t = _scalar(d.kind, d.bits, False)
    return ir.VectorType(t, d.lanes) if d.lanes != 1 else t


def memory_type(dtype: str):
    d = parse_dtype(dtype)
    _check(dtype, d)
    t = _scalar(d.kind, d.bits, True)
    return ir.VectorType(t, d.lanes) if d.lanes != 1 else t


def supported(dtype: str) -> bool:
    d = parse_dtype(dtype)
    return d is not None and d.kind in ("bool", "int", "uint", "float", "bfloat", "handle")


def mangle(t) -> str:
    """LLVM's overloaded-intrinsic suffix of a type: f32, v16f32, i8, p0."""
    if isinstance(t, ir.VectorType):
        return f"v{t.count}{mangle(t.element)}"
    if isinstance(t, ir.IntType):
        return f"i{t.width}"
    if isinstance(t, ir.HalfType):
        return "f16"
    if isinstance(t, ir.FloatType):
        return "f32"
    if isinstance(t, ir.DoubleType):
        return "f64"
    if isinstance(t, ir.PointerType):
        return "p0"
    raise NotImplementedError(str(t))


def element(t):
    return t.element if isinstance(t, ir.VectorType) else t


def lanes(t) -> int:
    return t.count if isinstance(t, ir.VectorType) else 1


def with_lanes(t, n):
    e = element(t)
    return ir.VectorType(e, n) if n != 1 else e


def is_fp(t) -> bool:
    return isinstance(element(t), (ir.HalfType, ir.FloatType, ir.DoubleType))


def int_value(v):
    """The value of a scalar integer constant, or None."""
    if type(v) is ir.Constant and isinstance(v.type, ir.IntType) and \
            isinstance(v.constant, int):
        return v.constant
    return None


def int_values(v):
    """The lanes of an integer constant (a scalar: one), or None."""
    if type(v) is not ir.Constant:
        return None
    if isinstance(v.type, ir.VectorType):
        if not isinstance(v.constant, (list, tuple)):
            return None
        out = [int_value(x) for x in v.constant]
        return None if None in out else out
    k = int_value(v)
    return None if k is None else [k]


def const_vector(t, values):
    """A vector constant of element type t."""
    return ir.Constant(ir.VectorType(t, len(values)), [const(t, v) for v in values])


def const(t, value):
    """A constant of type t (a vector type gets a splat)."""
    if isinstance(t, ir.VectorType):
        return ir.Constant(t, [const(t.element, value)] * t.count)
    if isinstance(t, ir.IntType):
        v = int(value) & ((1 << t.width) - 1)
        return ir.Constant(t, v)
    if isinstance(t, ir.HalfType):
        return ir.Constant(t, float(value))
    return ir.Constant(t, float(value))


def bf16_bits(value: float) -> int:
    """The bfloat16 bit pattern of a float (round to nearest even)."""
    import numpy as np
    import ml_dtypes
    return int(np.array([value], dtype=ml_dtypes.bfloat16).view(np.uint16)[0])


def f16_repr(value: float) -> float:
    import numpy as np
    return float(np.float16(value))


def f32_repr(value: float) -> float:
    return struct.unpack("f", struct.pack("f", value))[0] if abs(value) < 3.5e38 or \
        value != value else value
