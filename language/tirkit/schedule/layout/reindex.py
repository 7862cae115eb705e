"""reindex: give a block's access of a buffer its own copy, laid out by the block's
iterators.

    sch.reindex(block, ("read", 0))

A buffer `<name>_reindex` shaped by the extents of the iterators the access uses (in the
block's iterator order) is filled before the block (a read) or copied back after it (a
write) by a block `<name>_reindex_reindex`; the block then accesses it at those iterators.
Refused: an index outside the reads/writes, a buffer accessed at several different
places in the block, an access index that is not an expression of the block's iterators."""
from __future__ import annotations

import dataclasses

from ...ir import expr as E
from ...ir import stmt as S
from ...ir.equality import identical
from ..cache import placement
from .. import _common as common
from ..inline import common as inlining
from .. import _ir
from ..analysis import infer_regions
from ..registry import primitive


@primitive("reindex")
def reindex(sch, block, buffer):
    info = sch.block_info(block)
    blk = info.block
    if not (isinstance(buffer, (tuple, list)) and len(buffer) == 2 and
            buffer[0] in ("read", "write") and isinstance(buffer[1], int)):
        raise sch.error("reindex/bad-buffer", "the buffer is given as ('read', i) or "
                        "('write', i)", blk)
    kind, k = buffer
    regions = blk.reads if kind == "read" else blk.writes
    if regions is None:
        regions = infer_regions(blk)[0 if kind == "read" else 1]
    if not 0 <= k < len(regions):
        raise sch.error("reindex/bad-index", f"block '{blk.name_hint}' has {len(regions)} "
                        f"{kind} buffers; index {k} is out of range", blk)
    buf = regions[k].buffer
    accesses = [x.indices for x in _ir.stmts(blk.body) if isinstance(x, S.BufferStore)
                and x.buffer is buf] + [ld.indices for ld in _ir.buffer_loads(blk.body)
                                        if ld.buffer is buf]
    if blk.init is not None:
        accesses += [x.indices for x in _ir.stmts(blk.init)
                     if isinstance(x, S.BufferStore) and x.buffer is buf]
    if not accesses or any(len(a) != len(accesses[0]) or
                           not all(identical(x, y) for x, y in zip(a, accesses[0]))
                           for a in accesses):
        raise sch.error("reindex/several-accesses", f"block '{blk.name_hint}' accesses "
                        f"'{buf.name}' at different places", blk)
    idx = accesses[0]
    ivs = {id(iv.var): iv for iv in blk.iter_vars}
    used_ids = {id(v) for e in idx for v in _ir.vars_in(e)}
    if any(i not in ivs for i in used_ids):
        raise sch.error("reindex/not-iterator-access", f"block '{blk.name_hint}' accesses "
                        f"'{buf.name}' through variables that are not its iterators", blk)
    used = [iv for iv in blk.iter_vars if id(iv.var) in used_ids]
    if any(not isinstance(iv.dom.extent, E.IntImm) for iv in used):
        raise sch.error("reindex/symbolic-extent", "an iterator has a non-constant domain",
                        blk)
    units = []
    name = sch.fresh_block_name(block.func, buf.name + "_reindex")
    shape = tuple(iv.dom.extent for iv in used)
    rbuf = S.Buffer(name, shape, buf.dtype,
                    E.Var(name, "handle", E.PointerType(buf.dtype, buf.scope)), scope=buf.scope)
    # the block now accesses the new buffer at its iterators
    new_idx = tuple(iv.var for iv in used)

    def swap(y, x):
        if isinstance(y, E.BufferLoad) and y.buffer is buf:
            return E.BufferLoad(rbuf, new_idx, y.dtype, y.span)
        if isinstance(y, S.BufferStore) and y.buffer is buf:
            return dataclasses.replace(y, buffer=rbuf, indices=new_idx)
        if isinstance(y, S.BufferRegion) and y.buffer is buf:
            return S.BufferRegion(rbuf, tuple(E.Range(v, common.int32(1)) for v in new_idx))
        return None
    nb = _ir.rebuild(blk, swap)
    # the copy nest
    loops, civs, vals, vmap = [], [], [], {}
    for n, iv in enumerate(used):
        lv = E.Var(f"ax{n}", iv.var.dtype)
        v = E.Var(f"v{n}", iv.var.dtype)
        loops.append(common.new_loop(lv, iv.dom.extent.value, min_=None))
        civs.append(S.IterVar(v, E.Range(common.int32(0, iv.var.dtype), iv.dom.extent), "S"))
        vals.append(lv)
        vmap[id(iv.var)] = v if common.is_zero(iv.dom.min) else E.Add(iv.dom.min, v, iv.var.dtype)
    for iv in units:
        vmap[id(iv.var)] = iv.dom.min
    orig_idx = tuple(_ir.substitute(e, vmap) for e in idx)
    rpoint = tuple(E.Range(v.var, common.int32(1)) for v in civs)
    opoint = tuple(E.Range(e, common.int32(1)) for e in orig_idx)
    cname = sch.fresh_block_name(block.func, name + "_reindex")
    if kind == "read":
        store = S.BufferStore(rbuf, E.BufferLoad(buf, orig_idx, buf.dtype),
                              tuple(v.var for v in civs))
        cblk = S.Block(cname, tuple(civs), (S.BufferRegion(buf, opoint),),
                       (S.BufferRegion(rbuf, rpoint),), store)
    else:
        store = S.BufferStore(buf, E.BufferLoad(rbuf, tuple(v.var for v in civs), buf.dtype),
                              orig_idx)
        cblk = S.Block(cname, tuple(civs), (S.BufferRegion(rbuf, rpoint),),
                       (S.BufferRegion(buf, opoint),), store)
    nest = common.nest(loops, S.BlockRealize(tuple(vals), common.TRUE, cblk))
    scope = inlining.scope_of(sch, block.func, info)
    pos = placement.position(scope, placement.top_stmt(info, scope), after=(kind == "write"))
    new_scope = placement.insert_in_scope(_ir.replace_nodes(scope, {id(blk): nb}), nest, pos)
    new_scope = dataclasses.replace(new_scope, alloc_buffers=new_scope.alloc_buffers + (rbuf,))
    sch.replace(block.func, scope, new_scope)
    return sch.block_of(block.func, cname)
