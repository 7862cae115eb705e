"""Generic rebuild of IR trees: `transform` (post-order, rebuilding only what changed) and
`substitute` (variables by expressions)."""
from __future__ import annotations

import dataclasses

from ...ir import expr as E
from ...ir import stmt as S
from ...ir.visit import child_fields

# fields never rebuilt: trivia, and the buffer objects themselves (rewritten separately)
_LEAF_TYPES = (str, int, float, bool, type(None), S.Buffer, E.PointerType)


def transform(node, fn, memo=None):
    """Rebuild `node` bottom-up; `fn(new_node)` returns a replacement or None to keep it."""
    if memo is None:
        memo = {}

    def visit(x):
        if isinstance(x, _LEAF_TYPES):
            return x
        if isinstance(x, tuple):
            out = tuple(visit(y) for y in x)
            return x if all(a is b for a, b in zip(out, x)) else out
        if not dataclasses.is_dataclass(x):
            return x
        key = id(x)
        if key in memo:
            return memo[key]
        changes = {}
        for f in child_fields(type(x)):
            old = getattr(x, f)
            new = visit(old)
            if new is not old:
                changes[f] = new
        y = dataclasses.replace(x, **changes) if changes else x
        r = fn(y)
        if r is not None:
            y = r
        memo[key] = y
        return y

    return visit(node)


def substitute(node, mapping: dict):
    """Replace variables (keyed by id) by expressions."""
    if not mapping:
        return node

    def fn(x):
        if isinstance(x, E.Var):
            return mapping.get(id(x))
        return None
    return transform(node, fn)


def map_buffers(node, fn_buf):
    """Replace buffers in loads, stores and regions: `fn_buf(buffer)` -> Buffer or None."""
    def fn(x):
        if isinstance(x, (E.BufferLoad, S.BufferStore, S.BufferRegion, S.DeclBuffer, E.BufferRef)):
            nb = fn_buf(x.buffer)
            if nb is not None and nb is not x.buffer:
                return dataclasses.replace(x, buffer=nb)
        return None
    return transform(node, fn)
