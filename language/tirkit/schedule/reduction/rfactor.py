"""rfactor: factorize a reduction over one of its loops into a new buffer.

    rf = sch.rfactor(k1, factor_axis=0)

The block becomes `<name>_rf`, which reduces into `<buffer>_rf` (the loop's extent inserted
as dimension `factor_axis`) with the loop as a spatial iterator; a new nest after it
reduces `<buffer>_rf` into the original buffer under the block's own name. Refused: a loop
that feeds no reduction iterator or also a spatial one, a block without an init or whose
update is not a recognised reducer (+, *, min, max with its identity as init), a nest with
other statements in it, a factor axis out of range."""
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
    """(op, buffer, indices, rhs) of `B[idx] = B[idx] op rhs`, or raise."""
    body, init = blk.body, blk.init
    if not isinstance(body, S.BufferStore) or not isinstance(init, S.BufferStore):
        raise sch.error("rfactor/no-reducer", f"block '{blk.name_hint}' is not a single "
                        "reduction update with an init", blk)
    m = reducers.match_update(body)
    if m is not None and reducers.is_identity(m[0], init.value, body.buffer.dtype):
        return m[0], body.buffer, body.indices, m[1]
    raise sch.error("rfactor/no-reducer", f"block '{blk.name_hint}' has no recognised "
                    "reducer (+, *, min or max with its identity as init)", blk)


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
    op, buf, idx, rhs = reducer_of(sch, blk)
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
    # the rf buffer
    rf_name = sch.fresh_block_name(loop.func, buf.name + "_rf")
    shape = list(buf.shape)
    shape.insert(factor_axis, f.extent)
    rf_buf = S.Buffer(rf_name, tuple(shape), buf.dtype,
                      E.Var(rf_name, "handle", E.PointerType(buf.dtype, buf.scope)),
                      scope=buf.scope)
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
    rf_rhs = _ir.substitute(rhs, rmap)
    load = E.BufferLoad(rf_buf, rf_idx, buf.dtype)
    update = S.BufferStore(rf_buf, op(load, rf_rhs, buf.dtype), rf_idx,
                           span=blk.body.span)
    rf_init = S.BufferStore(rf_buf, blk.init.value, rf_idx)
    point = tuple(E.Range(x, common.int32(1)) for x in rf_idx)
    reads = regions_of(blk)[0]
    rf_reads = tuple(_ir.substitute(x, rmap) for x in reads if x.buffer is not buf)
    if not any(iv.kind == "R" for iv in new_ivs):
        # nothing left to reduce in the rf block: a plain store (as TVM writes it)
        update = S.BufferStore(rf_buf, rf_rhs, rf_idx, span=blk.body.span)
        rf_init = None
    rf_block = S.Block(sch.fresh_block_name(loop.func, blk.name_hint + "_rf"), tuple(new_ivs),
                       rf_reads, (S.BufferRegion(rf_buf, point),), update, rf_init,
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
    w_body = S.BufferStore(buf, op(E.BufferLoad(buf, w_idx, buf.dtype),
                                         E.BufferLoad(rf_buf, w_rf_idx, buf.dtype), buf.dtype),
                           w_idx)
    w_init = S.BufferStore(buf, blk.init.value, w_idx)
    w_block = S.Block(blk.name_hint, tuple(w_ivs),
                      (S.BufferRegion(rf_buf, tuple(E.Range(x, common.int32(1))
                                                     for x in w_rf_idx)),),
                      (S.BufferRegion(buf, tuple(E.Range(x, common.int32(1)) for x in w_idx)),),
                      w_body, w_init)
    w_nest = common.nest(w_loops, S.BlockRealize(tuple(w_vals), common.TRUE, w_block))
    new_top = _ir.replace_nodes(top, {id(r): rf_realize})
    new_scope = _ir.replace_nodes(scope, {id(top): S.SeqStmt((new_top, w_nest))})
    new_scope = dataclasses.replace(new_scope, alloc_buffers=new_scope.alloc_buffers + (rf_buf,))
    sch.replace(loop.func, scope, new_scope)
    return sch.block_of(loop.func, rf_block.name_hint)
