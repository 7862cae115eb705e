"""Generic rebuild of IR trees: `transform` (post-order, rebuilding only what changed) and
`substitute` (variables by expressions)."""
from __future__ import annotations

import dataclasses

from ...ir import expr as E
from ...ir import stmt as S
from ...ir.visit import rebuild
from ...ir.visit import substitute as substitute  # noqa: F401  (re-exported for the passes)


def transform(node, fn):
    """Rebuild `node` bottom-up; `fn(new_node)` returns a replacement or None to keep it."""
    return rebuild(node, lambda new, old: fn(new))


def map_buffers(node, fn_buf):
    """Replace buffers in loads, stores and regions: `fn_buf(buffer)` -> Buffer or None."""
    def fn(x):
        if isinstance(x, (E.BufferLoad, S.BufferStore, S.BufferRegion, S.DeclBuffer, E.BufferRef)):
            nb = fn_buf(x.buffer)
            if nb is not None and nb is not x.buffer:
                return dataclasses.replace(x, buffer=nb)
        return None
    return transform(node, fn)
