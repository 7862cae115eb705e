"""Structural hashing.

    structural_hash(func)   a digest of a PrimFunc: node kinds, dtypes and values, variables
                            numbered by first occurrence (so renaming does not change it),
                            spans and comments ignored (the code generator's cache key)
    structural_key(expr)    a hashable key of an expression tree, variables and buffers by
                            identity: two trees built apart over the same variables and
                            buffers get equal keys (so equal opaque terms cancel)
"""
from __future__ import annotations

import dataclasses
import hashlib

import numpy as np

from . import expr as E
from . import stmt as S
from .stmt import TRIVIA_FIELDS
from ..lru import LRU


def structural_hash(func: S.PrimFunc, constants=None, extra: str = "") -> str:
    h = hashlib.sha256()
    up = h.update
    ids: dict = {}
    bufs: dict = {}
    used_consts = []

    def visit(x):
        if x is None:
            up(b"~")
        elif isinstance(x, E.Var):
            n = ids.get(id(x))
            if n is None:
                n = ids[id(x)] = len(ids)
                up(f"V{n}:{x.dtype}:{type(x).__name__}".encode())
                visit(x.type_annotation)
            else:
                up(f"v{n}".encode())
        elif isinstance(x, S.Buffer):
            n = bufs.get(id(x))
            if n is not None:
                up(f"b{n}".encode())
                return
            bufs[id(x)] = len(bufs)
            up(b"B")
            for f in dataclasses.fields(x):
                if f.name not in ("name", "span"):
                    visit(getattr(x, f.name))
        elif isinstance(x, (tuple, list)):
            up(b"(")
            for y in x:
                visit(y)
            up(b")")
        elif dataclasses.is_dataclass(x):
            up(type(x).__name__.encode())
            if isinstance(x, S.AllocateConst):
                used_consts.append(x.const_name)
            for f in dataclasses.fields(x):
                if f.name in TRIVIA_FIELDS or f.name == "name_hint":
                    continue
                up(f.name.encode())
                visit(getattr(x, f.name))
        else:
            up(f"{type(x).__name__}:{x!r};".encode())

    up(func.name.encode())
    visit(func.params)
    visit(func.buffer_map)
    visit(func.body)
    for name in used_consts:
        if constants is not None and name in constants:
            arr = constants[name].array()
            if arr is not None:
                up(np.ascontiguousarray(arr).tobytes())
    up(extra.encode())
    return h.hexdigest()[:32]


_KEYS = LRU(50_000)      # id(expr) -> (expr, key): the expression is kept, so its id stays its own


def structural_key(e):
    """A hashable key of `e` equal for equal trees over the same variables and buffers
    (spans and comments ignored)."""
    if isinstance(e, (E.Var, S.Buffer)):
        return ("v" if isinstance(e, E.Var) else "b", id(e))
    if isinstance(e, tuple):
        return tuple(structural_key(x) for x in e)
    if e is None or isinstance(e, (int, float, str, bool)):
        return e
    if not dataclasses.is_dataclass(e):
        return ("id", id(e))
    hit = _KEYS.get(id(e))
    if hit is not None and hit[0] is e:
        return hit[1]
    if isinstance(e, (E.IntImm, E.FloatImm)):
        key = (type(e).__name__, e.dtype, e.value)
    else:
        key = (type(e).__name__,) + tuple(
            structural_key(getattr(e, f.name)) for f in dataclasses.fields(e)
            if f.name not in TRIVIA_FIELDS)
    _KEYS.put(id(e), (e, key))
    return key
