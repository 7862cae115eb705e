"""pad_einsum: pad the iteration domain of an einsum-like block to multiples of `padding`.

    sch.pad_einsum(block, [16, 16, 16])      # one factor per block iterator

Every buffer the block accesses along a padded iterator gets a padded copy `<name>_pad`
(a dimension indexed by an expression, `h + rh`, keeps its size; no padded iterator may
appear in such an expression):
inputs are filled before the block (zeros outside the original shape), the output is
copied back after it. Refused: a block that is not einsum-like (each access index one
iterator, each iterator bound to its own loop over its whole domain), a padding of the
wrong length or with non-positive entries, another block in the same top-level loop nest
that writes a padded input or reads the output (`pad_einsum/shared-nest`). A padding that changes no extent changes
nothing."""
from __future__ import annotations

import dataclasses

from ...ir import expr as E
from ...ir import stmt as S
from ..cache import placement
from .. import _common as common
from ..inline import common as inlining
from .. import _ir
from ..analysis import regions_of
from ..registry import primitive


@primitive("pad_einsum")
def pad_einsum(sch, block, padding):
    info = sch.block_info(block)
    blk = info.block
    ivs = blk.iter_vars
    if not isinstance(padding, (list, tuple)) or len(padding) != len(ivs) or \
            not all(isinstance(p, int) and not isinstance(p, bool) and p > 0 for p in padding):
        raise sch.error("pad_einsum/bad-padding", f"padding takes one positive integer per "
                        f"iterator of block '{blk.name_hint}' ({len(ivs)})", blk)
    if all(isinstance(iv.dom.extent, E.IntImm) and iv.dom.extent.value % p == 0
           for iv, p in zip(ivs, padding)):
        return None                     # already a multiple everywhere: nothing to do
    loops = {id(lp.loop_var): lp for lp in info.loops}
    for iv, v in zip(ivs, info.realize.iter_values):
        lp = loops.get(id(v)) if isinstance(v, E.Var) else None
        if lp is None or not isinstance(iv.dom.extent, E.IntImm) or \
                not isinstance(lp.extent, E.IntImm) or lp.extent.value != iv.dom.extent.value \
                or not (isinstance(iv.dom.min, E.IntImm) and iv.dom.min.value == 0):
            raise sch.error("pad_einsum/not-einsum", f"iterator '{iv.var.name}' of block "
                            f"'{blk.name_hint}' is not bound to a loop over its domain", blk)
    if len({id(v) for v in info.realize.iter_values}) != len(ivs):
        raise sch.error("pad_einsum/not-einsum", "two iterators share a loop", blk)
    store = blk.body
    if not isinstance(store, S.BufferStore):
        raise sch.error("pad_einsum/not-einsum", f"the body of block '{blk.name_hint}' is not "
                        "a single store", blk)
    pos_of = {id(iv.var): k for k, iv in enumerate(ivs)}
    new_ext = [-(-iv.dom.extent.value // p) * p for iv, p in zip(ivs, padding)]
    grown = {id(iv.var) for iv, n in zip(ivs, new_ext) if n != iv.dom.extent.value}
    # how each buffer is indexed: one iterator per dimension, the same everywhere (a
    # dimension indexed otherwise, `h + rh`, keeps its size: no padded iterator may be in it)
    index = {}
    order = []
    accesses = [(x.buffer, x.indices) for x in [store] + _ir.stmts(blk.init or S.SeqStmt(()))
                if isinstance(x, S.BufferStore)]
    accesses += [(ld.buffer, ld.indices) for ld in _ir.buffer_loads(store.value)]
    for buf, idx in accesses:
        for d, e in enumerate(idx):
            plain = isinstance(e, E.Var) and id(e) in pos_of
            if not plain and (any(id(v) in grown for v in _ir.vars_in(e)) or
                              not isinstance(buf.shape[d], E.IntImm) or
                              not all(id(v) in pos_of for v in _ir.vars_in(e))):
                raise sch.error("pad_einsum/not-einsum", f"block '{blk.name_hint}' indexes "
                                f"'{buf.name}' by something other than its iterators", blk)
        ks = tuple(pos_of[id(e)] if isinstance(e, E.Var) and id(e) in pos_of else (None, d)
                   for d, e in enumerate(idx))
        if id(buf) in index and index[id(buf)][1] != ks:
            raise sch.error("pad_einsum/not-einsum", f"block '{blk.name_hint}' indexes "
                            f"'{buf.name}' in two ways", blk)
        if id(buf) not in index:
            index[id(buf)] = (buf, ks)
            order.append(buf)
    out_buf = store.buffer
    reads = regions_of(blk)[0]
    inputs = [r.buffer for r in reads if r.buffer is not out_buf and id(r.buffer) in index]
    pads = {}
    before, after = [], []
    for buf in inputs + [out_buf]:
        _, ks = index[id(buf)]
        shape = [new_ext[k] if isinstance(k, int) else buf.shape[k[1]].value for k in ks]
        if all(s == (ivs[k].dom.extent.value if isinstance(k, int) else s)
               for s, k in zip(shape, ks)):
            continue
        name = sch.fresh_block_name(block.func, buf.name + "_pad")
        dt = [d.dtype for d in buf.shape]
        pbuf = S.Buffer(name, tuple(E.IntImm(t, s) for t, s in zip(dt, shape)), buf.dtype,
                        E.Var(name, "handle", E.PointerType(buf.dtype, buf.scope)),
                        scope=buf.scope)
        pads[id(buf)] = pbuf
        if buf is out_buf:
            after.append(_copy(name, [d.value for d in buf.shape], pbuf, buf, None))
        else:
            conds = [k for k, (s, d) in enumerate(zip(shape, buf.shape)) if s != d.value]
            before.append(_copy(name, shape, buf, pbuf, (conds, buf.shape)))
    # the block over the padded domain, reading and writing the padded buffers
    def swap(y, x):
        if isinstance(y, (E.BufferLoad, S.BufferStore, S.BufferRegion)) and id(y.buffer) in pads:
            return dataclasses.replace(y, buffer=pads[id(y.buffer)])
        return None
    nb = _ir.rebuild(dataclasses.replace(
        blk, iter_vars=tuple(dataclasses.replace(iv, dom=E.Range(iv.dom.min, common.int32(
            n, iv.dom.extent.dtype))) for iv, n in zip(ivs, new_ext))), swap)
    lmap = {}
    for iv, v, n in zip(ivs, info.realize.iter_values, new_ext):
        lp = loops[id(v)]
        lmap[id(lp)] = n
    scope = inlining.scope_of(sch, block.func, info)
    top = placement.top_stmt(info, scope)
    # the copies go before and after the scope statement that holds the block: another
    # block in that statement must not write a padded input or touch the padded output
    for other in _blocks_beside(top, blk):
        stores = {id(x.buffer) for x in _ir.buffer_stores(other.body)}
        loads = {id(x.buffer) for x in _ir.buffer_loads(other.body)}
        for buf in inputs + [out_buf]:
            if id(buf) not in pads:
                continue
            if id(buf) in stores or (buf is out_buf and id(buf) in loads):
                raise sch.error("pad_einsum/shared-nest", f"block '{other.name_hint}' "
                                f"{'writes' if id(buf) in stores else 'reads'} "
                                f"'{buf.name}' in the loop nest of block '{blk.name_hint}', "
                                "where the padded copy would not reach it", other,
                                [(blk, "padded block")])

    def grow(y, x):
        if isinstance(x, S.For) and id(x) in lmap:
            return dataclasses.replace(y, extent=common.int32(lmap[id(x)], x.extent.dtype))
        if x is blk:
            return nb
        return None
    new_top = _ir.rebuild(top, grow)
    kids = _ir.child_stmts(scope)
    pos = next(i for i, k in enumerate(kids) if k is top)
    kids = kids[:pos] + before + [new_top] + after + kids[pos + 1:]
    new_scope = dataclasses.replace(scope, body=S.SeqStmt(tuple(kids)),
                                    alloc_buffers=scope.alloc_buffers +
                                    tuple(pads[id(b)] for b in inputs + [out_buf]
                                          if id(b) in pads))
    sch.replace(block.func, scope, new_scope)
    return None


def _blocks_beside(stmt, blk) -> list:
    """The blocks under stmt other than blk and the blocks that contain it."""
    return [x for x in _ir.stmts(stmt) if isinstance(x, S.Block) and x is not blk
            and not any(y is blk for y in _ir.stmts(x.body))]


def _copy(name, shape, src, dst, guard):
    """`for i...: with block(name): dst[v] = src[v]` (guarded by the source's shape)."""
    loops, ivs, vals = [], [], []
    for k, n in enumerate(shape):
        dt = dst.shape[k].dtype
        lv = E.Var(f"i{k}", dt)
        v = E.Var(f"v{k}", dt)
        loops.append(common.new_loop(lv, n))
        ivs.append(S.IterVar(v, E.Range(common.int32(0, dt), common.int32(n, dt)), "S"))
        vals.append(lv)
    idx = tuple(iv.var for iv in ivs)
    value = E.BufferLoad(src, idx, src.dtype)
    if guard is not None and guard[0]:
        dims, src_shape = guard
        cond = None
        for k in dims:
            c = E.LT(idx[k], src_shape[k], "bool")
            cond = c if cond is None else E.And(cond, c, "bool")
        zero = E.const(0, src.dtype)
        value = E.Call(src.dtype, "if_then_else", (cond, value, zero))
    point = tuple(E.Range(v, common.int32(1)) for v in idx)
    blk = S.Block(name, tuple(ivs), (S.BufferRegion(src, point),),
                  (S.BufferRegion(dst, point),), S.BufferStore(dst, value, idx))
    return common.nest(loops, S.BlockRealize(tuple(vals), common.TRUE, blk))
