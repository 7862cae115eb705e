"""rfactor: factorize a reduction over one of its loops into a new buffer.

    rf = sch.rfactor(k1, factor_axis=0)

The block becomes `<name>_rf`, which reduces into `<buffer>_rf` (the loop's extent inserted
as dimension `factor_axis`) with the loop as a spatial iterator; a new nest after it
reduces `<buffer>_rf` into the original buffer under the block's own name.  A reduction of
several values (argmax, argmin, a pair of sums: analysis/reducers.py) gets one rf buffer
per buffer, each block a let-bound update of all of them, as TVM writes it.  Refused: a
loop that feeds no reduction iterator or also a spatial one, a block without an init or
whose update is not a recognised reducer (+, *, min, max, or a reducer of several values,
with its identity as init), a nest with other statements in it, a factor axis out of
range."""
from __future__ import annotations

import dataclasses

from ...ir import expr as E
from ...ir import stmt as S
from ...analysis import reducers
from .. import _common as common
from .. import _ir
from ..analysis import regions_of
from ..registry import primitive


def reducer_of(sch, blk):
    """(update, init values) of a block whose update is a reducer's combination
    (reducers.Update) and whose init stores the reducer's identities, or raise."""
    m = reducers.match_updates(blk.body)
    inits = None if m is None else reducers.init_values(blk.init, m)
    if inits is not None and reducers.starts_at_identity(
            inits, m.reducer.identities([x.dtype for x in m.buffers()])):
        return m, inits
    raise sch.error("rfactor/no-reducer", f"block '{blk.name_hint}' has no recognised "
                    "reducer (+, *, min, max, argmax, argmin or a pair of sums, with its "
                    "identity as init)", blk)


def _points(bufs, idx):
    return tuple(S.BufferRegion(b, tuple(E.Range(x, common.int32(1)) for x in idx))
                 for b in bufs)


@primitive("rfactor")
def rfactor(sch, loop, factor_axis):
    f, f_anc = sch.loop_info(loop)
    from ..analysis import realizes_under
    rs = realizes_under(f.body)
    if len(rs) != 1:
        raise sch.error("rfactor/not-single-block", f"loop '{f.loop_var.name}' holds "
                        f"{len(rs)} blocks", f)
    r = rs[0]
    blk = r.block
    info = sch.block_info(sch.block_of(loop.func, blk))
    if blk.init is None:
        raise sch.error("rfactor/no-init", f"block '{blk.name_hint}' has no init", blk)
    red = [(iv, v) for iv, v in zip(blk.iter_vars, r.iter_values) if iv.kind == "R"]
    spa = [(iv, v) for iv, v in zip(blk.iter_vars, r.iter_values) if iv.kind == "S"]
    if not any(_ir.uses_var(v, f.loop_var) for _, v in red):
        raise sch.error("rfactor/not-reduction-loop", f"loop '{f.loop_var.name}' feeds no "
                        f"reduction iterator of block '{blk.name_hint}'", f, [(blk, "block")])
    if any(_ir.uses_var(v, f.loop_var) for _, v in spa) or \
            len(spa) + len(red) != len(blk.iter_vars):
        raise sch.error("rfactor/spatial-loop", f"loop '{f.loop_var.name}' also feeds a "
                        f"spatial iterator of block '{blk.name_hint}'", f, [(blk, "block")])
    m, inits = reducer_of(sch, blk)
    bufs, idx = m.buffers(), m.stores[0].indices
    buf = bufs[0]
    loops = info.loops
    top = loops[0]
    for lp in loops:
        if not isinstance(lp.body, (S.For, S.BlockRealize)):
            raise sch.error("rfactor/not-single-nest", f"loop '{lp.loop_var.name}' holds other"
                            " statements", lp)
    nd = len(buf.shape)
    if not isinstance(factor_axis, int) or not -(nd + 1) <= factor_axis <= nd:
        raise sch.error("rfactor/bad-axis", f"factor_axis {factor_axis} is out of range for "
                        f"'{buf.name}'", f)
    if factor_axis < 0:
        factor_axis += nd + 1
    if not isinstance(f.extent, E.IntImm) or not isinstance(f.min, E.IntImm):
        raise sch.error("rfactor/symbolic-extent", f"loop '{f.loop_var.name}' has a "
                        "non-constant extent", f)
    dt = f.loop_var.dtype
    scope = info.scope
    # the rf buffers
    rf_bufs = []
    for b in bufs:
        rf_name = sch.fresh_block_name(loop.func, b.name + "_rf")
        shape = list(b.shape)
        shape.insert(factor_axis, f.extent)
        rf_bufs.append(S.Buffer(rf_name, tuple(shape), b.dtype,
                                E.Var(rf_name, "handle", E.PointerType(b.dtype, b.scope)),
                                scope=b.scope))
    # the rf block: the rf loop as a spatial iterator, one reduce iterator per other loop
    # that feeds the reduction
    v_rf = E.Var("v" + f.loop_var.name, dt)
    lmap = {id(f.loop_var): v_rf}
    new_ivs = [S.IterVar(v_rf, E.Range(f.min, f.extent), "S")]
    new_vals = [f.loop_var]
    new_ivs += [iv for iv, _ in spa]
    new_vals += [v for _, v in spa]
    for lp in loops:
        if lp is f or not any(_ir.uses_var(v, lp.loop_var) for _, v in red):
            continue
        nv = E.Var("v" + lp.loop_var.name, lp.loop_var.dtype)
        lmap[id(lp.loop_var)] = nv
        new_ivs.append(S.IterVar(nv, E.Range(lp.min, lp.extent), "R"))
        new_vals.append(lp.loop_var)
    rmap = {id(iv.var): _ir.substitute(v, lmap) for iv, v in red}
    rf_idx = list(idx)
    rf_idx.insert(factor_axis, v_rf)
    rf_idx = tuple(rf_idx)
    rf_values = [_ir.substitute(v, rmap) for v in m.values]
    loads = [E.BufferLoad(b, rf_idx, b.dtype) for b in rf_bufs]
    span = m.stores[0].span
    update = reducers.store_all(rf_bufs, m.reducer.combine(loads, rf_values), rf_idx, span)
    rf_init = S.seq([S.BufferStore(b, v, rf_idx) for b, v in zip(rf_bufs, inits)])
    reads = regions_of(blk)[0]
    rf_reads = tuple(_ir.substitute(x, rmap) for x in reads
                     if all(x.buffer is not b for b in bufs))
    if not any(iv.kind == "R" for iv in new_ivs):
        # nothing left to reduce in the rf block: plain stores (as TVM writes them)
        update = S.seq([S.BufferStore(b, v, rf_idx, span=span)
                       for b, v in zip(rf_bufs, rf_values)])
        rf_init = None
    rf_block = S.Block(sch.fresh_block_name(loop.func, blk.name_hint + "_rf"), tuple(new_ivs),
                       rf_reads, _points(rf_bufs, rf_idx), update, rf_init,
                       annotations=blk.annotations, span=blk.span, name_span=blk.name_span)
    rf_realize = S.BlockRealize(tuple(new_vals), r.predicate, rf_block)
    # the write-back nest: copies of the loops that feed spatial iterators, and the rf loop
    wmap, w_loops = {}, []
    for lp in loops:
        if lp is f or any(_ir.uses_var(v, lp.loop_var) for _, v in spa):
            nv = E.Var(lp.loop_var.name, lp.loop_var.dtype)
            wmap[id(lp.loop_var)] = nv
            w_loops.append(dataclasses.replace(lp, loop_var=nv, body=None, comments=(),
                                               trailing=None))
    w_rf = E.Var("v" + f.loop_var.name, dt)
    w_ivs = [S.IterVar(w_rf, E.Range(f.min, f.extent), "R")]
    w_vals = [wmap[id(f.loop_var)]]
    smap = {}
    for iv, v in spa:
        nv = E.Var(iv.var.name, iv.var.dtype)
        smap[id(iv.var)] = nv
        w_ivs.append(dataclasses.replace(iv, var=nv))
        w_vals.append(_ir.substitute(v, wmap))
    w_idx = tuple(_ir.substitute(x, smap) for x in idx)
    w_rf_idx = list(w_idx)
    w_rf_idx.insert(factor_axis, w_rf)
    w_rf_idx = tuple(w_rf_idx)
    w_body = reducers.store_all(
        bufs, m.reducer.combine([E.BufferLoad(b, w_idx, b.dtype) for b in bufs],
                                [E.BufferLoad(b, w_rf_idx, b.dtype) for b in rf_bufs]), w_idx)
    w_init = S.seq([S.BufferStore(b, v, w_idx) for b, v in zip(bufs, inits)])
    w_block = S.Block(blk.name_hint, tuple(w_ivs), _points(rf_bufs, w_rf_idx),
                      _points(bufs, w_idx), w_body, w_init)
    w_nest = common.nest(w_loops, S.BlockRealize(tuple(w_vals), common.TRUE, w_block))
    new_top = _ir.replace_nodes(top, {id(r): rf_realize})
    new_scope = _ir.replace_nodes(scope, {id(top): S.SeqStmt((new_top, w_nest))})
    new_scope = dataclasses.replace(new_scope,
                                    alloc_buffers=new_scope.alloc_buffers + tuple(rf_bufs))
    sch.replace(loop.func, scope, new_scope)
    return sch.block_of(loop.func, rf_block.name_hint)
