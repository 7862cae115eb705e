"""Structural equality: spans and comments ignored, variables and buffers compared up to
renaming (the first meeting of two variables binds them to each other, one to one)."""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from .expr import FloatImm, Var
from .stmt import TRIVIA_FIELDS, Buffer

_FIELDS: dict = {}


def _fields(cls):
    f = _FIELDS.get(cls)
    if f is None:
        f = tuple(x.name for x in dataclasses.fields(cls)
                  if x.name not in TRIVIA_FIELDS and x.name != "name" or
                  (x.name == "name" and cls.__name__ in ("PrimFunc", "ForeignFunc", "IRModule")))
        _FIELDS[cls] = f
    return f


class _Eq:
    def __init__(self):
        self.lhs = {}
        self.rhs = {}

    def bind(self, a, b) -> bool:
        x = self.lhs.get(id(a))
        y = self.rhs.get(id(b))
        if x is None and y is None:
            self.lhs[id(a)] = b
            self.rhs[id(b)] = a
            return None       # first meeting: compare contents
        return x is b and y is a

    def eq(self, a, b) -> bool:
        if a is b:
            return True
        ta, tb = type(a), type(b)
        if ta is not tb:
            return False
        if isinstance(a, Var):
            r = self.bind(a, b)
            if r is None:
                return a.dtype == b.dtype and self.eq(a.type_annotation, b.type_annotation)
            return r
        if ta is Buffer or getattr(ta, "BIND_BY_IDENTITY", False):
            r = self.bind(a, b)
            if r is None:
                return all(self.eq(getattr(a, f), getattr(b, f)) for f in _fields(ta)
                           if f != "name")
            return r
        if ta is FloatImm:
            return a.dtype == b.dtype and (a.value == b.value and
                                           math.copysign(1, a.value) == math.copysign(1, b.value)
                                           or (math.isnan(a.value) and math.isnan(b.value)))
        if dataclasses.is_dataclass(a):
            return all(self.eq(getattr(a, f), getattr(b, f)) for f in _fields(ta))
        if ta in (tuple, list):
            return len(a) == len(b) and all(self.eq(x, y) for x, y in zip(a, b))
        if ta is dict:
            return a.keys() == b.keys() and all(self.eq(a[k], b[k]) for k in a)
        if ta is np.ndarray:
            return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
        if hasattr(a, "structural_key"):
            return a.structural_key() == b.structural_key()
        return a == b


def structural_equal(a, b) -> bool:
    """True when a and b are the same program up to spans, comments and names of variables."""
    return _Eq().eq(a, b)


def identical(a, b) -> bool:
    """Structurally the same over the very same variables and buffers (spans and other trivia
    ignored): `A[i + 1]` twice in one function, not `A[i]` against `A[j]`."""
    if a is b:
        return True
    if type(a) is not type(b) or isinstance(a, (Var, Buffer)):
        return False
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(identical(x, y) for x, y in zip(a, b))
    if dataclasses.is_dataclass(a):
        return all(identical(getattr(a, f.name), getattr(b, f.name))
                   for f in dataclasses.fields(a) if f.name not in TRIVIA_FIELDS)
    return a == b
