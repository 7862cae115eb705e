"""Float literals that parse back to the same bits, per dtype."""
from __future__ import annotations

import math

import numpy as np


def _np_scalar(value: float, dtype: str):
    if dtype == "float64":
        return np.float64(value)
    if dtype == "float32":
        return np.float32(value)
    if dtype == "float16":
        return np.float16(value)
    import ml_dtypes
    t = getattr(ml_dtypes, dtype, None)
    if t is None:
        return np.float64(value)
    return t(value)


def float_literal(value: float, dtype: str = "float64", keep_point=False) -> str:
    """Shortest text that gives `value` back in `dtype`; integral values print without
    a fraction (`T.float32(0)`), infinities and NaN as strings (`T.float32("inf")`)."""
    if math.isnan(value):
        return '"nan"'
    if math.isinf(value):
        return '"inf"' if value > 0 else '"-inf"'
    if dtype == "float64":
        text = repr(float(value))
    else:
        x = _np_scalar(value, dtype)
        text = str(x) if dtype in ("float32", "float16") else _shortest_via_f64(value, dtype)
    if not keep_point and text.endswith(".0") and "e" not in text and text != "-0.0":
        text = text[:-2]
    return text


def _shortest_via_f64(value, dtype):
    """Shortest decimal that rounds to the same value in a small float type."""
    target = _np_scalar(value, dtype)
    for digits in range(1, 18):
        text = f"{float(value):.{digits}g}"
        if _np_scalar(float(text), dtype) == target or (
                float(text) == 0 and float(target) == 0 and
                math.copysign(1, float(text)) == math.copysign(1, float(target))):
            try:
                return repr(float(text))
            except ValueError:
                break
    return repr(float(value))
