"""What compute_inline and reverse_compute_inline share: the shape of an inlinable block,
removing a block with the loops that only hold it, dropping a buffer's allocation."""
from __future__ import annotations

import dataclasses

from ...ir import expr as E
from ...ir import stmt as S
from .. import _ir


def single_store(sch, block, what):
    """The block's body as one BufferStore whose indices are distinct iterators."""
    body = block.body
    if not isinstance(body, S.BufferStore):
        raise sch.error(f"{what}/not-single-store", f"the body of block '{block.name_hint}' "
                        "is not a single buffer store", block)
    return body


def distinct_iter_indices(block, indices, allow_const=False):
    """Every index is a distinct iterator of the block (or, with allow_const, a constant:
    the block writes one position of that dimension)."""
    ivs = {id(iv.var) for iv in block.iter_vars}
    seen = set()
    for i in indices:
        if allow_const and isinstance(i, E.IntImm):
            continue
        if not isinstance(i, E.Var) or id(i) not in ivs or id(i) in seen:
            return False
        seen.add(id(i))
    return True


def removal(info, mapping):
    """Map the block realize (and the loops that hold nothing else) to REMOVE."""
    node = info.realize
    for a in reversed(info.ancestors):
        if isinstance(a, S.For) and a.body is node:
            node = a
            continue
        break
    mapping[id(node)] = _ir.REMOVE
    return node


def drop_alloc(scope: S.Block, buf) -> S.Block:
    allocs = tuple(b for b in scope.alloc_buffers if b is not buf)
    if len(allocs) == len(scope.alloc_buffers):
        return scope
    return dataclasses.replace(scope, alloc_buffers=allocs)


def rewrite_scope(sch, func, scope, mapping, drop=None):
    """Apply a node mapping inside the scope block, drop an allocation, one replace."""
    new = _ir.replace_nodes(scope, mapping)
    if new is _ir.REMOVE:
        new = dataclasses.replace(scope, body=S.SeqStmt(()))
    if drop is not None:
        new = drop_alloc(new, drop)
    sch.replace(func, scope, new)


def scope_of(sch, func, info):
    scope = info.scope
    if scope is None:
        raise sch.error("no-scope", f"block '{info.block.name_hint}' is the root block",
                        info.block)
    return scope
