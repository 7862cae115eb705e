"""The operations a value performs: the one counting rule behind a kernel's FLOPs in its cost
(analysis/cost.py: hover, code lens, roofline, `tirkit tune`) and the operation count of a
build (codegen/flops.py: `tirkit bench`'s GFLOP/s).

    value_ops(e)         # Ops(float=2, integer=0, dtype="float32") for `A[i] * A[i] + 1.0`
    counted_values(s)    # the values of statement s whose operations count

- Each arithmetic operator (+ - * / % // min max) and each math call (`T.exp`, `T.pow`,
  bitwise operations ...) counts one per lane; `T.fma` counts two per lane (a multiply and an
  add).  A warp's matrix multiply-accumulate (`T.tvm_mma_sync`, `T.ptx_mma`) counts 2 m n k
  per product, each of the warp's 32 threads a 32nd of it, at its multiplicands' dtype.
  Comparisons and logic count nothing; nor do other calls themselves (`if_then_else`,
  `reinterpret`, an extern call or intrinsic, whose work is unknown, a call of a module
  function, whose caller adds its work): only the operations in their arguments.
- A floating-point operation always counts.  An integer operation counts when it computes on
  data, an operand reading a buffer (an int8 dot product counts); integer arithmetic on loop
  variables and scalars alone (`i * 4 + j`, `n - 1`) is bookkeeping, as a buffer's indices
  and a ramp's base and stride are, and does not.
- A statement's counted values are a stored value, a let's value and a value evaluated for its
  effect (a call's arguments, `T.ret(v)`); conditions of `if` and `while`, loop bounds and
  allocation extents are not counted.
"""
from __future__ import annotations

from typing import NamedTuple

from ..ir import expr as E
from ..ir import ptx
from ..ir import stmt as S
from ..ir.dtype import is_float, lanes_of
from ..ir.visit import contains, walk

# math calls, one operation each (`likely` marks a condition and computes nothing)
MATH_CALLS = (E.UNARY_MATH | E.BINARY_MATH) - {"likely"}
_MATRIX_OPS = (ptx.WMMA_MMA,) + ptx.MMA_OPS


class Ops(NamedTuple):
    float: int = 0
    integer: int = 0
    dtype: str | None = None      # the dtype of the outermost counted operation

    @property
    def total(self) -> int:
        return self.float + self.integer


def _weight(x, fragments) -> tuple:
    """(operations node x performs itself, their dtype): per lane of its result, or one
    thread's share of a warp's matrix product."""
    if isinstance(x, E.ARITH):
        return lanes_of(x.dtype), x.dtype
    if isinstance(x, E.Call):
        if x.op == "fma":
            return 2 * lanes_of(x.dtype), x.dtype
        if x.op in MATH_CALLS:
            return lanes_of(x.dtype), x.dtype
        mma = ptx.matrix_ops(x, fragments)
        if mma is not None:
            return mma[0] // ptx.WARP, mma[1]
    return 0, None


def fragment_shapes(body) -> dict:
    """id(data var) -> (m, n, k) of the wmma fragments whose fill, load or store calls give
    one (the shapes `T.tvm_mma_sync` multiplies)."""
    out = {}

    def visit(x):
        if isinstance(x, E.Call):
            mnk = ptx.wmma_shape(x)
            if mnk is not None:
                out[id(x.args[0])] = mnk
        return True
    walk(body, visit)
    return out


def _reads(x) -> bool:
    return contains(x, lambda _: True, E.BufferLoad)


def value_ops(e, fragments=None) -> Ops:
    """The operations one evaluation of expression e performs; `fragments`, what
    `fragment_shapes` gives for the function holding e, sizes its `T.tvm_mma_sync` calls."""
    out = {"float": 0, "integer": 0, "dtype": None}

    def visit(x):
        if isinstance(x, (E.BufferLoad, E.Ramp)):
            return False                   # indices, base and stride: address arithmetic
        n, dtype = _weight(x, fragments or {})
        if n:
            if is_float(dtype):
                out["float"] += n
            elif isinstance(x, E.Call) and x.op in _MATRIX_OPS or \
                    any(_reads(a) for a in _operands(x)):
                out["integer"] += n        # a matrix product's operands are its data
            else:
                return True
            if out["dtype"] is None:
                out["dtype"] = dtype
        return True

    walk(e, visit)
    return Ops(out["float"], out["integer"], out["dtype"])


def _operands(x) -> tuple:
    if isinstance(x, E.BinaryOp):
        return (x.a, x.b)
    return tuple(a for a in x.args if isinstance(a, E.PrimExpr))


def counted_values(s) -> tuple:
    """The values of statement s itself (not of the statements it holds) whose operations
    count: a stored value, a let's value, a value evaluated for its effect."""
    if isinstance(s, (S.BufferStore, S.LetStmt, S.Evaluate)):
        return (s.value,)
    return ()


__all__ = ["MATH_CALLS", "Ops", "value_ops", "counted_values", "fragment_shapes"]
