"""Passes 1-2: predicates to conditions, then blocks to loops.

A block becomes its body with the iterators replaced by their bindings; its init runs under
the condition that every reduction iterator is at the start of its domain (the first
reduction iteration); its allocations become `Allocate` + `DeclBuffer` around its body.
"""
from __future__ import annotations

import dataclasses

from ...ir import expr as E
from ...ir import stmt as S
from ..errors import UNSUPPORTED, fail
from .flatten import add_index, storage_extents, strides_of
from .rewrite import substitute, transform

TRUE = E.IntImm("bool", 1)


def _and(conds):
    out = None
    for c in conds:
        out = c if out is None else E.And(out, c, "bool")
    return out


def allocate(buf: S.Buffer, body: S.Stmt, span=None) -> S.Stmt:
    return S.Allocate(buf.data, buf.dtype, storage_extents(buf), TRUE, S.DeclBuffer(buf, body),
                      span=span)


def predicates_to_conditions(body: S.Stmt) -> S.Stmt:
    """`T.where(p)` on a block realize becomes `if p:` around it."""
    def fn(x):
        if isinstance(x, S.BlockRealize) and not E.is_const_int(x.predicate, 1):
            inner = dataclasses.replace(x, predicate=TRUE)
            return S.IfThenElse(x.predicate, inner, None, span=x.span)
        return None
    return transform(body, fn)


def inline_match_buffers(b: S.Block):
    """(body, init) of block b with every `T.match_buffer` view replaced by accesses to its
    source: the view's dimensions are the trailing dimensions of the source region."""
    views = {}
    for mb in b.match_buffers:
        src, region = mb.source.buffer, mb.source.region
        k, r = len(mb.buffer.shape), len(region)
        if k > r:
            fail(UNSUPPORTED, f"T.match_buffer '{mb.buffer.name}' has more dimensions than "
                 "its source region", mb)
        views[id(mb.buffer)] = (src, region, r - k)

    # a view's data pointer, elem_offset and stride variables (the tensor-core intrinsics
    # pass them to `T.tvm_access_ptr`): the source's, its region's flat offset, its strides
    svars = {}
    for mb in b.match_buffers:
        src, region, lead = views[id(mb.buffer)]
        strides = strides_of(src)
        svars[id(mb.buffer.data)] = src.data
        for s, st in zip(mb.buffer.strides, strides[lead:]):
            if isinstance(s, E.Var):
                svars[id(s)] = st

    def offset(x):
        if isinstance(x, E.Call) and x.op == ".elem_offset" and x.args and \
                isinstance(x.args[0], E.BufferRef) and id(x.args[0].buffer) in views:
            src, region, _ = views[id(x.args[0].buffer)]
            out = None
            for rg, st in zip(region, strides_of(src)):
                term = rg.min if E.is_const_int(st, 1) else E.Mul(rg.min, st, rg.min.dtype)
                out = term if out is None else add_index(out, term)
            return out
        return None

    def fn(x):
        if isinstance(x, E.Var) and id(x) in svars:
            return svars[id(x)]
        if isinstance(x, (E.BufferLoad, S.BufferStore)) and id(x.buffer) in views:
            src, region, lead = views[id(x.buffer)]
            idx = tuple(x.indices)
            new = [rg.min for rg in region[:lead]]
            for rg, i in zip(region[lead:], idx):
                new.append(i if E.is_const_int(rg.min, 0) else add_index(rg.min, i))
            return dataclasses.replace(x, buffer=src, indices=tuple(new))
        if isinstance(x, E.BufferRef) and id(x.buffer) in views:
            fail(UNSUPPORTED, f"buffer '{x.buffer.name}' (a T.match_buffer view) is passed to "
                 "an intrinsic: the CPU backend cannot lower that yet", x)
        return None
    body = transform(transform(b.body, offset), fn)
    init = transform(transform(b.init, offset), fn) if b.init is not None else None
    return body, init


def blocks_to_loops(body: S.Stmt) -> S.Stmt:
    def fn(x):
        if not isinstance(x, S.BlockRealize):
            return None
        b = x.block
        if b.match_buffers:
            nb, ni = inline_match_buffers(b)
            b = dataclasses.replace(b, body=nb, init=ni, match_buffers=())
        mapping = {}
        for iv, val in zip(b.iter_vars, x.iter_values):
            mapping[id(iv.var)] = val
        new_body = substitute(b.body, mapping)
        if b.init is not None:
            conds = []
            for iv, val in zip(b.iter_vars, x.iter_values):
                if iv.kind == "R":
                    conds.append(E.EQ(val, iv.dom.min, "bool"))
            init = substitute(b.init, mapping)
            first = _and(conds)
            init_stmt = init if first is None else S.IfThenElse(first, init, None, span=b.span)
            new_body = S.seq([init_stmt, new_body])
        for buf in reversed(b.alloc_buffers):
            new_body = allocate(buf, new_body, b.span)
        return new_body
    return transform(body, fn)
