"""The values of an inline `T.allocate_const([...], dtype, extents)` list, exact to the bit.

Elements are Python numbers, `T.<dtype>(...)` literals (`T.float32("inf")`, `"nan"`) or
`T.reinterpret("<dtype>", T.uint<bits>(0x...))` for a NaN with a payload or a sign.  Floats are
read as binary64 and rounded once to the dtype (as floats.py checks when printing); an integer
that does not fit its dtype, or a fraction in an integer constant, is an error, never wrapped
or truncated.
"""
from __future__ import annotations

import numpy as np

from ..ir import dtype as D
from ..ir import expr as E
from .floats import bits_of


class ValuesError(ValueError):
    pass


def _element(v, dtype):
    """(python value, raw bits or None) of one list element."""
    if isinstance(v, E.Call) and v.op == "reinterpret" and len(v.args) == 1 and \
            isinstance(v.args[0], E.IntImm) and v.dtype == dtype:
        return 0, v.args[0].value
    if isinstance(v, (E.FloatImm, E.IntImm)):
        v = v.value
    if isinstance(v, (bool, np.bool_)):
        return int(v), None
    if isinstance(v, (int, float)):
        return v, None
    raise ValuesError(f"{type(v).__name__} is not a constant value of {dtype}")


def values_array(flat, dtype: str, npdt) -> np.ndarray:
    """A 1-D array of dtype `npdt` holding the list's values."""
    vals, raw = [], []
    for i, v in enumerate(flat):
        x, bits = _element(v, dtype)
        vals.append(x)
        if bits is not None:
            raw.append((i, bits))
    d = D.parse_dtype(dtype)
    if d is not None and d.is_float:
        f64 = np.array([float(x) for x in vals], dtype=np.float64)
        with np.errstate(invalid="ignore", over="ignore"):
            arr = f64.astype(npdt)
            lost = np.isfinite(f64) & ~np.isfinite(arr.astype(np.float64))
        if lost.any():
            raise ValuesError(f"{f64[lost][0]!r} is beyond the range of {dtype}")
    elif d is not None and d.is_bool:
        if any(x not in (0, 1) for x in vals):
            raise ValuesError("a bool constant holds True/False (or 1/0)")
        arr = np.array(vals, dtype=npdt)
    else:
        if any(isinstance(x, float) for x in vals):
            raise ValuesError(f"a fraction in an {dtype} constant")
        lo, hi = D.int_range(dtype)
        bad = [x for x in vals if not lo <= x <= hi]
        if bad:
            raise ValuesError(f"{bad[0]} is out of the range of {dtype} [{lo}, {hi}]")
        arr = np.array(vals, dtype=npdt)
    if raw:
        view = bits_of(arr)
        limit = 1 << (arr.dtype.itemsize * 8)
        for i, bits in raw:
            if not 0 <= bits < limit:
                raise ValuesError(f"0x{bits:X} does not fit the bits of {dtype}")
            view[i] = bits
    return arr
