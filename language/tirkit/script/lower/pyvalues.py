"""Python values in a kernel: the file's top-level constants, the constants TVM makes of
Python numbers and the range they must fit, conditions known while parsing, Python's
operators and builtins on plain values (`syntax.pyconst` computes them)."""
from __future__ import annotations

import functools
import math

import numpy as np

from ...diagnostics import Span
from ...ir import dtype as D
from ...ir import expr as E
from ...ir.constants import numpy_dtype
from ...syntax import pyconst
from .values import LaterConstant


class PyValueMixin:
    def top_level_constant(self, name, n):
        """The value of a top-level constant of the file; one assigned only below the kernel
        is undefined where the kernel is read, and the error says where it is assigned."""
        v = self.py_constants[name]
        if isinstance(v, LaterConstant):
            where = Span(v.line, 1, v.line, len(name) + 1, self.file)
            self.fail("name/undefined", f"name '{name}' is not defined yet: it is assigned at "
                      f"line {v.line}, below this kernel, and the kernel is read where its "
                      f"decorator runs", n, related=[(where, f"'{name}' is assigned here")])
        return v

    def plain_condition(self, what, v, node) -> bool:
        """A condition known while parsing (`a if N else b`, `if N:`) must be a Python bool,
        as TVM's parser requires; a `type/mismatch` error for any other plain value, which
        then counts as Python's truth value."""
        if not isinstance(v, bool):
            shown = repr(v) if len(repr(v)) <= 20 else repr(v)[:17] + "..."
            self.diag("type/mismatch", f"{what} takes a bool, not the {type(v).__name__} "
                      f"{shown} (compare it, as in N != 0)", node)
        return bool(v)

    def _python_number(self, x, n, span=None):
        """The constant TVM makes of a Python number: a float is a float32 one and an int an
        int32 one, int64 when it needs more bits; a value that does not fit is an error
        (`x + 1e40`, even beside a float64 `x`)."""
        c = E.const(x, None, span)
        self.literal_fits(x, c.dtype, n)
        return c

    def _python_binop(self, op, a, b, n):
        try:
            return pyconst.binary(op, a, b)
        except pyconst.ConstError as e:
            self.fail("type/mismatch", str(e), n)

    def _py_builtin(self, name, n):
        """`max(M, N)`, `len(shape)`, ...: Python's builtin on plain values, as TVM's parser
        computes it; a TIR value among the arguments is an error that names the T. spelling."""
        args, kwargs = self._args(n), self._kwargs(n)

        def tir(v):         # `len(A.shape)` counts TIR values: any other builtin computes on them
            return isinstance(v, E.PrimExpr) or (isinstance(v, (tuple, list)) and any(map(tir, v)))
        if name != "len" and any(tir(v) for v in [*args, *kwargs.values()]):
            other = pyconst.TIR_SPELLING.get(name)
            self.fail("type/mismatch", f"Python's {name}() does not apply to TIR values"
                      + (f": use {other}" if other else ""), n)
        try:
            return pyconst.call(name, args, kwargs)
        except pyconst.ConstError as e:
            self.fail("type/mismatch", str(e), n)

    def literal_fits(self, value, dtype, n):
        """A `type/mismatch` error when a constant does not fit its dtype, as TVM's IntImm and
        FloatImm refuse it (`T.int8(300)`, `x + 1e40` for a float32 `x`); `inf` and NaN are
        kept."""
        d = D.parse_dtype(dtype)
        if d is None or d.is_handle:
            return
        if d.is_float:
            big = _float_max(d.element() if d.lanes > 1 else dtype)
            # (an int is compared exactly: one too large for a float is out of range too)
            if big is not None and (isinstance(value, int) or math.isfinite(value)) and \
                    abs(value) > big:
                self.diag("type/mismatch", f"{_number(value)} does not fit in {dtype} (its "
                          f"finite values lie within ±{big:g})", n)
        elif d.is_int or d.is_bool:
            lo, hi = D.int_range(dtype)
            if not lo <= value <= hi:
                self.diag("type/mismatch", f"{_number(value)} does not fit in {dtype}", n)


@functools.lru_cache(maxsize=64)
def _float_max(dtype: str):
    """The largest finite value of a float dtype, as TVM's FloatImm checks a literal against
    it (float64's too: a Python int can pass it), or None for a dtype numpy cannot hold.
    numpy knows float16, float32 and float64; ml_dtypes, whose import takes a second, is
    asked only for the others (bfloat16, the float8 types)."""
    try:
        nd = numpy_dtype(dtype)
        if nd.kind == "f":
            return float(np.finfo(nd).max)
        import ml_dtypes
        return float(ml_dtypes.finfo(nd).max)
    except (ValueError, TypeError, AttributeError):
        return None


def _number(v) -> str:
    """A constant for a message: a long integer by its first digits and length."""
    text = repr(v)
    return text if len(text) <= 24 else f"{text[:8]}... ({len(text.lstrip('-'))} digits)"
