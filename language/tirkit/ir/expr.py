"""TensorIR expressions: frozen dataclasses, compared by identity (structural equality
lives in `tirkit.ir.equality`).  `span` is trivia: it rides along, never compared."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from ..diagnostics import Span

node = dataclass(frozen=True, eq=False, slots=True)
def SPAN_():
    return field(default=None, repr=False)



class PrimExpr:
    __slots__ = ()
    dtype: str


@node
class IntImm(PrimExpr):
    dtype: str
    value: int
    span: Optional[Span] = SPAN_()


@node
class FloatImm(PrimExpr):
    dtype: str
    value: float
    span: Optional[Span] = SPAN_()


@node
class StringImm(PrimExpr):
    value: str
    dtype: str = "handle"
    span: Optional[Span] = SPAN_()


@node
class PointerType:
    """The type annotation of a handle variable: `T.handle("float32", "shared")`."""
    element: str
    scope: str = "global"


@node
class Var(PrimExpr):
    name: str
    dtype: str = "int32"
    type_annotation: Optional[PointerType] = None
    span: Optional[Span] = SPAN_()


@node
class SizeVar(Var):
    pass


@node
class BinaryOp(PrimExpr):
    a: PrimExpr
    b: PrimExpr
    dtype: str
    span: Optional[Span] = SPAN_()


class Add(BinaryOp): __slots__ = ()
class Sub(BinaryOp): __slots__ = ()
class Mul(BinaryOp): __slots__ = ()
class Div(BinaryOp): __slots__ = ()          # float division / integer truncdiv
class Mod(BinaryOp): __slots__ = ()          # truncmod
class FloorDiv(BinaryOp): __slots__ = ()
class FloorMod(BinaryOp): __slots__ = ()
class Min(BinaryOp): __slots__ = ()
class Max(BinaryOp): __slots__ = ()
class EQ(BinaryOp): __slots__ = ()
class NE(BinaryOp): __slots__ = ()
class LT(BinaryOp): __slots__ = ()
class LE(BinaryOp): __slots__ = ()
class GT(BinaryOp): __slots__ = ()
class GE(BinaryOp): __slots__ = ()
class And(BinaryOp): __slots__ = ()
class Or(BinaryOp): __slots__ = ()

COMPARISONS = (EQ, NE, LT, LE, GT, GE)
ARITH = (Add, Sub, Mul, Div, Mod, FloorDiv, FloorMod, Min, Max)
# math calls (`T.exp(x)`, `T.pow(x, y)`, `T.isnan(x)`) by arity; the first two give a value of
# their first argument's dtype (`likely` too: it marks a condition and computes nothing)
UNARY_MATH = frozenset({
    "exp", "exp2", "exp10", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin", "cos",
    "tan", "sinh", "cosh", "tanh", "asin", "acos", "atan", "asinh", "acosh", "atanh", "erf",
    "sigmoid", "floor", "ceil", "round", "trunc", "nearbyint", "abs", "fabs", "popcount", "clz",
    "bitwise_not", "likely",
})
BINARY_MATH = frozenset({"pow", "atan2", "fmod", "hypot", "copysign", "nextafter", "ldexp",
                         "bitwise_and", "bitwise_or", "bitwise_xor", "shift_left", "shift_right"})
BOOL_RESULT = frozenset({"isnan", "isinf", "isfinite", "isnullptr"})
# calls whose value depends on their arguments alone: they read no storage or state and change
# none (TVM's CallEffectKind kPure), the externs a program declares pure included
PURE_CALLS = UNARY_MATH | BINARY_MATH | BOOL_RESULT | frozenset({
    "if_then_else", "reinterpret", "fma", "q_multiply_shift", "ceildiv", "floordiv",
    "floormod", "truncdiv", "truncmod", "min_value", "max_value", "infinity",
    "call_pure_extern", "call_llvm_pure_intrin",
})


@node
class Not(PrimExpr):
    a: PrimExpr
    dtype: str = "bool"
    span: Optional[Span] = SPAN_()


# TVM's operator nodes spelled as calls (`T.Add(a, b)`, as TVM prints an addition it would
# otherwise fold; `T.truncdiv(a, b)`): the node class each spelling stands for
CALL_OPERATORS = {
    "Add": Add, "Sub": Sub, "Mul": Mul, "Div": Div, "Mod": Mod,
    "FloorDiv": FloorDiv, "FloorMod": FloorMod, "Min": Min, "Max": Max,
    "EQ": EQ, "NE": NE, "LT": LT, "LE": LE, "GT": GT, "GE": GE,
    "And": And, "Or": Or,
    "truncdiv": Div, "truncmod": Mod, "floordiv": FloorDiv, "floormod": FloorMod,
    "min": Min, "max": Max,
}
UNARY_CALL_OPERATORS = {"Not": Not}


@node
class Select(PrimExpr):
    condition: PrimExpr
    true_value: PrimExpr
    false_value: PrimExpr
    dtype: str
    span: Optional[Span] = SPAN_()


@node
class Cast(PrimExpr):
    dtype: str
    value: PrimExpr
    span: Optional[Span] = SPAN_()


@node
class Call(PrimExpr):
    """A call by op name: `exp`, `if_then_else`, `call_extern`, `mma_sync`, ... (the `T.` name),
    or "@f" for a call `Module.f(...)` of the module's function f (TVM's call of a GlobalVar)."""
    dtype: str
    op: str
    args: tuple
    kwargs: tuple = ()           # ((name, value), ...) for script-level keyword arguments
    span: Optional[Span] = SPAN_()
    arg_spans: tuple = field(default=(), repr=False)   # each argument's own span, as written
                                                       # (() when not known; trivia)

    @property
    def callee(self) -> Optional[str]:
        """The name of the module function this call calls (op "@f"), or None."""
        return self.op[1:] if self.op.startswith("@") else None


@node
class BufferLoad(PrimExpr):
    buffer: Any                  # Buffer
    indices: tuple
    dtype: str
    span: Optional[Span] = SPAN_()


@node
class Ramp(PrimExpr):
    base: PrimExpr
    stride: PrimExpr
    lanes: int
    dtype: str
    span: Optional[Span] = SPAN_()


@node
class Broadcast(PrimExpr):
    value: PrimExpr
    lanes: int
    dtype: str
    span: Optional[Span] = SPAN_()


@node
class Let(PrimExpr):
    var: Var
    value: PrimExpr
    body: PrimExpr
    dtype: str
    span: Optional[Span] = SPAN_()


@node
class Lambda(PrimExpr):
    """`lambda x, y: x + y` as an intrinsic argument (the combiner of `T.comm_reducer`)."""
    params: tuple                 # Vars
    body: Any                     # a PrimExpr, or a tuple of them
    dtype: str = "handle"
    span: Optional[Span] = SPAN_()


@node
class ArrayExpr(PrimExpr):
    """A list or tuple passed as an intrinsic argument (`T.tvm_tuple`-style operands)."""
    elements: tuple
    dtype: str = "void"
    span: Optional[Span] = SPAN_()


@node
class BufferRef(PrimExpr):
    """A buffer passed by name to an intrinsic (`T.tvm_load_matrix_sync(C, ...)`)."""
    buffer: Any
    dtype: str = "handle"
    span: Optional[Span] = SPAN_()


@node
class Range:
    min: PrimExpr
    extent: PrimExpr
    span: Optional[Span] = SPAN_()


def const(value, dtype: str = None, span=None) -> PrimExpr:
    """An immediate of the given dtype (int32 / float32 by the Python type when omitted)."""
    if dtype is None:
        if isinstance(value, bool):
            dtype = "bool"
        elif isinstance(value, int):
            dtype = "int32" if -2**31 <= value < 2**31 else "int64"
        else:
            dtype = "float32"
    from .dtype import is_float
    if is_float(dtype):
        return FloatImm(dtype, float(value), span)
    return IntImm(dtype, int(value), span)


def is_const_int(e, value=None) -> bool:
    return isinstance(e, IntImm) and (value is None or e.value == value)
