"""Float literals that parse back to the same bits, per dtype.

A literal is read as a Python float (binary64) and then rounded to its dtype by numpy (or
ml_dtypes for bfloat16 and the float8/6/4 types), exactly as `T.allocate_const` lists and
`T.float32(...)` are lowered.  Every literal printed here is checked through that same
conversion; the exact binary64 value of the number is the fallback, and it always reads back
exactly, since every value of a narrower type is a binary64 value.
"""
from __future__ import annotations

import math

import numpy as np

_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def np_dtype(dtype: str):
    if dtype in ("float16", "float32", "float64"):
        return np.dtype(dtype)
    import ml_dtypes
    t = getattr(ml_dtypes, dtype, None)
    return np.dtype(t) if t is not None else np.dtype("float64")


def _np_scalar(value: float, dtype: str):
    return np.array([value], dtype=np_dtype(dtype))[0]


def bits_of(arr) -> np.ndarray:
    """The raw bits of each value, as unsigned integers of the same width."""
    a = np.ascontiguousarray(arr).reshape(-1)
    return a.view(_UINT[a.dtype.itemsize])


def reads_back(texts, arr) -> np.ndarray:
    """Mask: which decimal texts read back to exactly the bits of arr's values."""
    a = np.ascontiguousarray(arr).reshape(-1)
    with np.errstate(invalid="ignore", over="ignore"):
        back = np.array([float(t) for t in texts], dtype=np.float64).astype(a.dtype)
    return bits_of(back) == bits_of(a)


def shortest_texts(arr) -> list:
    """The shortest decimal (Python float syntax, always with a '.' or an exponent) of each
    finite value of arr that reads back to its exact bits; NaN and infinities give None."""
    a = np.ascontiguousarray(arr).reshape(-1)
    with np.errstate(invalid="ignore", over="ignore"):
        vals = a.astype(np.float64)
    finite = np.isfinite(vals)
    if a.dtype in (np.float32, np.float16):
        texts = [_point(str(x)) if f else None for x, f in zip(a, finite)]
    else:
        texts = [repr(float(v)) if f else None for v, f in zip(vals, finite)]
        if a.dtype != np.float64:
            texts = [_search(v, a.dtype) if f else None for v, f in zip(vals, finite)]
    idx = [i for i, f in enumerate(finite) if f]
    if idx:
        ok = reads_back([texts[i] for i in idx], a[idx])
        for i, good in zip(idx, ok):
            if not good:
                texts[i] = repr(float(vals[i]))     # exact binary64: always reads back
    return texts


def _point(text: str) -> str:
    if text in ("inf", "-inf", "nan"):
        return text
    if "." not in text and "e" not in text:
        return text + ".0"
    return text


def _search(value: float, npdt) -> str:
    target = np.array([value], dtype=npdt)
    tb = bits_of(target)[0]
    for digits in range(1, 18):
        text = repr(float(f"{value:.{digits}g}"))
        if bits_of(np.array([float(text)], dtype=npdt))[0] == tb:
            return text
    return repr(value)


def float_literal(value: float, dtype: str = "float64", keep_point=False) -> str:
    """Shortest text that gives `value` back in `dtype`; integral values print without
    a fraction (`T.float32(0)`), infinities and NaN as strings (`T.float32("inf")`)."""
    if math.isnan(value):
        return '"nan"'
    if math.isinf(value):
        return '"inf"' if value > 0 else '"-inf"'
    text = None
    if dtype != "float64":
        with np.errstate(over="ignore"):
            text = shortest_texts(np.array([value], dtype=np_dtype(dtype)))[0]
    if text is None:        # float64, or a finite value beyond the dtype (`T.float32(1e40)`,
        text = repr(float(value))   # an error where it is written): the double itself
    if not keep_point and text.endswith(".0") and "e" not in text and text != "-0.0":
        text = text[:-2]
    return text


def canonical_nan_bits(dtype: str):
    """The bits `float("nan")` becomes in dtype (None when the type has no NaN)."""
    with np.errstate(invalid="ignore"):
        a = np.array([float("nan")], dtype=np_dtype(dtype))
    return int(bits_of(a)[0]) if np.isnan(a.astype(np.float64))[0] else None


def float_items(arr, dtype: str, T: str = "T") -> list:
    """Literal text of each value of a float array, exact to the bit: decimals, then
    `T.<dtype>("inf")` / `T.<dtype>("-inf")` / `T.<dtype>("nan")`, and any other NaN (payload
    or sign) as `T.reinterpret("<dtype>", T.uint<bits>(0x...))`."""
    a = np.ascontiguousarray(arr).reshape(-1)
    texts = shortest_texts(a)
    with np.errstate(invalid="ignore", over="ignore"):
        vals = a.astype(np.float64)
    nan_bits = canonical_nan_bits(dtype)
    bits = bits_of(a)
    width = a.dtype.itemsize * 8
    out = []
    for t, v, b in zip(texts, vals, bits):
        if t is not None:
            out.append(t)
        elif math.isinf(v):
            out.append(f'{T}.{dtype}("inf")' if v > 0 else f'{T}.{dtype}("-inf")')
        elif int(b) == nan_bits:
            out.append(f'{T}.{dtype}("nan")')
        else:
            out.append(f'{T}.reinterpret("{dtype}", {T}.uint{width}'
                       f'(0x{int(b):0{width // 4}X}))')
    return out
