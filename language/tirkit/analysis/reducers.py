"""Commutative reducers: a reduction block's update `B[i] = B[i] op value` whose operator
lets the reduction be split or spread over threads (+, *, min, max), the operator's
identity, and whether an init is that identity.  One reading of reducers for rfactor
(schedule/reduction/rfactor.py) and the CUDA lowering of cross-thread reductions
(codegen/cuda/crossthread.py)."""
from __future__ import annotations

from ..ir import expr as E
from ..ir import stmt as S
from ..ir.hash import structural_key
from ..ir.visit import contains

OPS = (E.Add, E.Mul, E.Min, E.Max)


def identity(op, dtype: str) -> E.PrimExpr:
    """The identity of op in dtype: 0, 1, or the smallest / largest value of the dtype."""
    if op is E.Add:
        return E.const(0, dtype)
    if op is E.Mul:
        return E.const(1, dtype)
    return E.Call(dtype, "min_value" if op is E.Max else "max_value",
                  (E.StringImm(dtype, "handle"),))


def is_identity(op, init, dtype: str) -> bool:
    """Whether the value `init` is op's identity in dtype."""
    if isinstance(init, E.Call) and init.op in ("min_value", "max_value"):
        return (op is E.Max) == (init.op == "min_value") and op in (E.Max, E.Min)
    if isinstance(init, E.Cast):
        init = init.value
    if not isinstance(init, (E.IntImm, E.FloatImm)):
        return False
    v = init.value
    if op is E.Add:
        return v == 0
    if op is E.Mul:
        return v == 1
    if dtype.startswith(("float", "bfloat")):
        import numpy as np
        from ..ir.constants import numpy_dtype
        fi = np.finfo(numpy_dtype(dtype))
        lo, hi = float(fi.min), float(fi.max)
    else:
        bits = int("".join(c for c in dtype if c.isdigit()) or 32)
        lo, hi = (0, 2 ** bits - 1) if dtype.startswith("uint") else \
            (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    if op is E.Max:
        return v <= lo
    if op is E.Min:
        return v >= hi
    return False


def match_update(store) -> tuple | None:
    """(op, value) of `B[i] = B[i] op value` (or `value op B[i]`) where value does not read
    B; None for any other statement."""
    if not isinstance(store, S.BufferStore) or type(store.value) not in OPS:
        return None
    key = structural_key(tuple(store.indices))
    v = store.value
    for lhs, rhs in ((v.a, v.b), (v.b, v.a)):
        if isinstance(lhs, E.BufferLoad) and lhs.buffer is store.buffer and \
                structural_key(tuple(lhs.indices)) == key and \
                not contains(rhs, lambda x: isinstance(x, E.BufferLoad) and
                             x.buffer is store.buffer):
            return type(v), rhs
    return None
