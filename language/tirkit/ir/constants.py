"""The module's constant table: named tensors that `AllocateConst` nodes refer to.

A constant's values are either inline (a numpy array made from the script's list) or live
in a `.params` file and are read lazily, only when asked for (`Constant.array()`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

from .dtype import parse_dtype


def numpy_dtype(dtype: str):
    """The numpy dtype that stores a TVM scalar dtype bit-exactly."""
    d = parse_dtype(dtype)
    if d is None or d.lanes != 1:
        raise ValueError(f"no numpy dtype for {dtype}")
    if d.kind == "bool":
        return np.dtype(np.bool_)
    if d.kind in ("int", "uint", "float") and not (d.kind == "float" and d.bits not in (16, 32, 64)):
        if d.kind in ("int", "uint") and d.bits not in (8, 16, 32, 64):
            raise ValueError(f"no numpy dtype for {dtype}")
        return np.dtype(f"{'i' if d.kind == 'int' else 'u' if d.kind == 'uint' else 'f'}{d.bits // 8}")
    import ml_dtypes
    name = {"bfloat": "bfloat16"}.get(d.kind, d.kind)
    return np.dtype(getattr(ml_dtypes, name))


@dataclass(eq=False)
class Constant:
    name: str
    dtype: str
    shape: tuple
    inline: Optional[np.ndarray] = None
    file: Optional[str] = None            # .params path (as written in the script)
    key: Optional[str] = None             # name inside the .params file
    loader: Optional[Callable] = field(default=None, repr=False)
    _cache: Optional[np.ndarray] = field(default=None, repr=False)
    alias: Optional[str] = None           # the script's name for the file (`P`)
    problem: Optional[str] = None         # why the file's data cannot be used (diagnosed)

    @property
    def size(self) -> int:
        n = 1
        for s in self.shape:
            n *= int(s)
        return n

    @property
    def external(self) -> bool:
        """Its values live in a `.params` file (loaded or not)."""
        return self.inline is None and self.file is not None

    def array(self) -> Optional[np.ndarray]:
        """The values (read from the file on first use); None when the reference is broken."""
        if self.inline is not None:
            return self.inline
        if self._cache is None and self.loader is not None and self.problem is None:
            self._cache = self.loader()
        return self._cache

    def structural_key(self):
        arr = self.array()
        if arr is None:
            return (self.dtype, tuple(self.shape), ("unresolved", self.file, self.key))
        return (self.dtype, tuple(self.shape), arr.tobytes())


class ConstantTable:
    """Ordered name -> Constant, names unique within a module."""

    def __init__(self):
        self.items: dict[str, Constant] = {}

    def unique_name(self, base: str) -> str:
        if base not in self.items:
            return base
        i = 1
        while f"{base}_{i}" in self.items:
            i += 1
        return f"{base}_{i}"

    def add(self, const: Constant) -> str:
        name = self.unique_name(const.name)
        const.name = name
        self.items[name] = const
        return name

    def __getitem__(self, name) -> Constant:
        return self.items[name]

    def __contains__(self, name):
        return name in self.items

    def __len__(self):
        return len(self.items)

    def __iter__(self):
        return iter(self.items.values())

    def structural_key(self):
        return tuple((c.dtype, tuple(c.shape), c.structural_key()) for c in self.items.values())
