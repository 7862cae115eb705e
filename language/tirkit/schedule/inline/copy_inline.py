"""compute_inline of an identity copy, `X[I] = Y[I]` (the same index expressions on both
sides, X and Y of one shape and dtype): X is replaced by Y everywhere, opaque uses included
(a tensorized block's `T.match_buffer(X[...])`, an intrinsic's buffer argument), and X's
allocation and the copy are dropped.

This is how a packed copy disappears once its source is itself given in the packed layout:

    sch.auto_tensorize(c, "x86.vnni.dot_16x4_u8s8s32")      # B_reindex[f(n, k)] = B[k, n]
    sch.transform_layout(copy, ("read", 0), f_of_k_n)         # B_reindex[f(n, k)] = B[f(n, k)]
    sch.compute_inline(copy)                                  # the kernel reads B directly

Sound because every element the copy writes equals Y's element at the same place, and Y does
not change in the function (refused when a block writes Y); an element of X the copy never
writes was undefined, so reading Y's there is allowed.  compute_inline takes this path only
where its value inlining refuses (store indices that are not the block's iterators, or an
opaque use of X), so what it did before is unchanged."""
from __future__ import annotations

import dataclasses

from ...ir import expr as E
from ...ir import stmt as S
from ...ir.equality import identical
from ...ir.visit import find_first
from . import common as inlining
from .. import _ir
from ..analysis import write_buffers


def identity_source(store: S.BufferStore):
    """Y when the store is `X[I] = Y[I]` with X and Y alike in shape and dtype, else None."""
    v = store.value
    x = store.buffer
    if not isinstance(v, E.BufferLoad) or v.buffer is x or v.buffer.dtype != x.dtype:
        return None
    y = v.buffer
    if len(y.shape) != len(x.shape) or not all(
            isinstance(a, E.IntImm) and isinstance(b, E.IntImm) and a.value == b.value
            for a, b in zip(x.shape, y.shape)):
        return None
    if y.strides or x.strides or not identical(tuple(v.indices), tuple(store.indices)):
        return None
    return y


def _holds(blk, store) -> bool:
    """Whether the block's own body holds the copy's store (an enclosing block: its inferred
    writes are the copy's)."""
    return find_first(blk.body, lambda x: x is store, S.BufferStore) is not None and \
        all(s is store for s in _ir.buffer_stores(blk.body) if s.buffer is store.buffer)


def inline_copy(sch, block, info, store, src) -> None:
    func = sch.func(block.func)
    buf = store.buffer
    for other in sch.index(block.func).order:
        if other.block is not info.block and not _holds(other.block, store) and \
                any(b is buf for b in write_buffers(other.block)):
            raise sch.error("compute_inline/several-writers", f"block "
                            f"'{other.block.name_hint}' also writes '{buf.name}'",
                            other.block, [(info.block, "inlined block")])
        if any(b is src for b in write_buffers(other.block)):
            raise sch.error("compute_inline/source-written", f"block "
                            f"'{other.block.name_hint}' writes '{src.name}', the source of "
                            f"the copy", other.block, [(info.block, "inlined block")])
    if find_first(func.body, lambda x: x is buf.data, E.Var) is not None:
        raise sch.error("compute_inline/opaque-access", f"the data pointer of '{buf.name}' is "
                        "used directly", info.block)
    mapping = {}
    inlining.removal(info, mapping)
    body = _ir.replace_nodes(func.body, mapping)

    def swap(y, x):
        if isinstance(y, (E.BufferLoad, S.BufferStore, E.BufferRef)) and y.buffer is buf:
            return dataclasses.replace(y, buffer=src)
        if isinstance(y, S.BufferRegion) and y.buffer is buf:
            return dataclasses.replace(y, buffer=src)
        if isinstance(y, S.Block) and any(b is buf for b in y.alloc_buffers):
            return inlining.drop_alloc(y, buf)
        return None
    sch.replace_func(block.func, dataclasses.replace(func, body=_ir.rebuild(body, swap)))


__all__ = ["identity_source", "inline_copy"]
