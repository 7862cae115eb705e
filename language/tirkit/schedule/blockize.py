"""blockize: turn the subtree of a loop into a block of its own.

    outer = sch.blockize(i1)

The block under the loop is split into an outer block `<name>_o` (iterators `v_o`, bound to
the loops above) placed where the loop was, and the original block (iterators `v_i`, bound to
the loops under it) inside. Each binding must split as `outer * inner_extent + inner`.
Refused: a subtree with no block or several blocks, a binding that mixes outer and inner
loops in a division, an inner part that does not tile its domain. A reduction's init moves
to the outer block (as a block `<name>_init` over the inner spatial iterators)."""
from __future__ import annotations

import dataclasses

from ..ir import expr as E
from ..ir import stmt as S
from . import _arith as A
from . import _common as C
from . import _ir
from .analysis import infer_regions, realizes_under, region_of_indices
from .registry import primitive


@primitive("blockize")
def blockize(sch, target, preserve_unit_iters=True):
    f, f_anc = sch.loop_info(target)
    realizes = realizes_under(f.body)
    if not realizes:
        raise sch.error("blockize/no-block", f"loop '{f.loop_var.name}' holds no block", f)
    tops = [r for r in realizes if not any(o is not r and _inside(r, o) for o in realizes)]
    if len(tops) != 1:
        raise sch.error("blockize/several-blocks", f"loop '{f.loop_var.name}' holds "
                        f"{len(tops)} blocks", f)
    r = tops[0]
    blk = r.block
    inner_loops = [x for x in _ir.stmts(f) if isinstance(x, S.For)]
    outer_loops = [a for a in f_anc if isinstance(a, S.For)]
    ib = C.loop_bounds(inner_loops)
    ob = C.loop_bounds(outer_loops)
    o_ivs, i_ivs, o_vals, i_vals, vmap = [], [], [], [], {}
    for iv, v in zip(blk.iter_vars, r.iter_values):
        lin = A.to_lin(v, {**ob, **ib})
        inner = A.Lin([], 0, lin.dtype)
        outer = A.Lin([], lin.const, lin.dtype)
        for atom, coef in lin.terms:
            vs = _vars(atom)
            if any(id(x) in ib for x in vs):
                if not all(id(x) in ib for x in vs):
                    raise sch.error("blockize/mixed-binding", f"the binding of '{iv.var.name}'"
                                    f" mixes loops inside and outside loop "
                                    f"'{f.loop_var.name}'", blk, [(f, "loop")])
                inner._add_term(atom, coef)
            else:
                outer._add_term(atom, coef)
        bd = A.bound_lin(inner, ib)
        if bd is None or bd[0] != 0:
            raise sch.error("blockize/not-divisible", f"the inner part of '{iv.var.name}' does "
                            "not start at zero", blk, [(f, "loop")])
        ext_i = bd[1] + 1
        dom = iv.dom.extent
        if not isinstance(dom, E.IntImm) or dom.value % ext_i or \
                any(c % ext_i for _, c in outer.terms) or outer.const % ext_i or \
                not _is_zero(iv.dom.min):
            raise sch.error("blockize/not-divisible", f"the binding of '{iv.var.name}' does "
                            f"not split into tiles of {ext_i}", blk, [(f, "loop")])
        ext_o = dom.value // ext_i
        dt = iv.var.dtype
        vo = E.Var(iv.var.name + "_o", dt)
        vi = E.Var(iv.var.name + "_i", dt)
        o_val = A.to_expr(A._merge(outer.scale(1) if ext_i == 1 else
                                   A.Lin([[a, c // ext_i] for a, c in outer.terms],
                                         outer.const // ext_i, dt)), neg_add=True)
        if ext_o > 1 or preserve_unit_iters:
            o_ivs.append(S.IterVar(vo, E.Range(C.int32(0, dt), C.int32(ext_o, dt)), iv.kind))
            o_vals.append(o_val)
            vo_expr = vo
        else:
            vo_expr = o_val
        if ext_i > 1:
            i_ivs.append(S.IterVar(vi, E.Range(C.int32(0, dt), C.int32(ext_i, dt)), iv.kind))
            i_vals.append(A.to_expr(inner, neg_add=True))
        if ext_i == 1:
            vmap[id(iv.var)] = vo_expr
        elif ext_o == 1:
            vmap[id(iv.var)] = vi
        else:
            vmap[id(iv.var)] = E.Add(E.Mul(vo_expr, C.int32(ext_i, dt), dt), vi, dt)
    # the inner block: new iterators, the body in terms of outer * extent + inner
    reads, writes = blk.reads, blk.writes
    if reads is None or writes is None:
        r2, w2 = infer_regions(blk)
        reads = reads if reads is not None else r2
        writes = writes if writes is not None else w2
    outer_reads = reads
    if blk.init is not None:
        # the update no longer has an init: it reads what it writes (listed first); the
        # outer block, which takes the init, does not list it
        outer_reads = tuple(x for x in reads if not any(x.buffer is w.buffer for w in writes))
        reads = tuple(w for w in writes if not any(x.buffer is w.buffer for x in reads)) + \
            tuple(reads)
    new_blk = dataclasses.replace(
        blk, iter_vars=tuple(i_ivs), init=None,
        body=A.simplify_deep(_ir.substitute(blk.body, vmap)),
        reads=_simp(_ir.substitute(reads, vmap)) if blk.reads is not None else None,
        writes=_simp(_ir.substitute(writes, vmap)) if blk.writes is not None else None,
        match_buffers=_ir.substitute(blk.match_buffers, vmap))
    new_r = dataclasses.replace(r, iter_values=tuple(i_vals), block=new_blk)
    new_f = _ir.replace_nodes(f, {id(r): new_r})
    # the outer block: regions of the inner one over the inner iterators
    i_bounds = {id(iv.var): (0, iv.dom.extent.value - 1) for iv in i_ivs}
    o_reads = _relax(_ir.substitute(outer_reads, vmap), i_bounds)
    o_writes = _relax(_ir.substitute(writes, vmap), i_bounds)
    name = sch.fresh_block_name(target.func, blk.name_hint + "_o")
    init = None
    if blk.init is not None:
        init = _outer_init(sch, target.func, f, r, blk, i_ivs, i_vals, vmap, writes)
    outer_blk = S.Block(name, tuple(o_ivs), o_reads, o_writes, new_f, init)
    outer_r = S.BlockRealize(tuple(o_vals), C.TRUE, outer_blk)
    sch.replace(target.func, f, outer_r)
    return sch.block_of(target.func, name)


def _outer_init(sch, func, f, r, blk, i_ivs, i_vals, vmap, writes):
    """The init of the outer block: the original init over the inner spatial iterators, in
    fresh copies of the loops under the target that feed them."""
    spatial = [(iv, v) for iv, v in zip(i_ivs, i_vals) if iv.kind == "S"]
    loops = [x for x in _ir.stmts(f) if isinstance(x, S.For) and
             any(x2 is r for x2 in _ir.stmts(x))]
    used = [lp for lp in loops if any(_ir.uses_var(v, lp.loop_var) for _, v in spatial)]
    lmap, new_loops = {}, []
    for lp in used:
        nv = E.Var(lp.loop_var.name, lp.loop_var.dtype)
        lmap[id(lp.loop_var)] = nv
        new_loops.append(dataclasses.replace(lp, loop_var=nv, body=None, comments=(),
                                             trailing=None))
    ivmap, new_ivs = {}, []
    for iv, _ in spatial:
        nv = E.Var(iv.var.name + "_init", iv.var.dtype)
        ivmap[id(iv.var)] = nv
        new_ivs.append(dataclasses.replace(iv, var=nv))
    body = _ir.substitute(_ir.substitute(blk.init, vmap), ivmap)
    w = _simp(_ir.substitute(_ir.substitute(writes, vmap), ivmap))
    name = sch.fresh_block_name(func, blk.name_hint + "_init")
    init_blk = S.Block(name, tuple(new_ivs), (), w, body)
    vals = tuple(_ir.substitute(v, lmap) for _, v in spatial)
    return C.nest(new_loops, S.BlockRealize(vals, C.TRUE, init_blk))


def _relax(regions, bounds):
    out = []
    for reg in regions:
        lo = tuple(x.min for x in reg.region)
        hi = tuple(E.Sub(E.Add(x.min, x.extent, "int32"), C.int32(1), "int32")
                   for x in reg.region)
        rr = region_of_indices([lo, hi], {}, bounds, {}, reg.buffer.shape)
        if rr is None:
            rr = [(C.int32(0), d.value) for d in reg.buffer.shape]
        out.append(S.BufferRegion(reg.buffer, tuple(E.Range(m, C.int32(x)) for m, x in rr)))
    return tuple(out)


def _simp(regions):
    return tuple(dataclasses.replace(reg, region=tuple(
        E.Range(A.simplify(x.min), x.extent) for x in reg.region)) for reg in regions)


def _is_zero(e):
    return isinstance(e, E.IntImm) and e.value == 0


def _vars(atom):
    if atom[0] == "var":
        return [atom[1]]
    if atom[0] in ("div", "mod"):
        return [v for a, _ in atom[1].terms for v in _vars(a)]
    return _ir.vars_in(atom[1])


def _inside(r, o):
    return any(x is r for x in _ir.stmts(o.block.body))
