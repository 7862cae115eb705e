"""blockize: turn the subtree of a loop into a block of its own.

    outer = sch.blockize(i1)

The block under the loop is split into an outer block `<name>_o` (iterators `v_o`, bound to
the loops above) placed where the loop was, and the original block (iterators `v_i`, bound to
the loops under it) inside. Each binding must split as `outer * inner_extent + inner`, the
inner part starting at zero; extents may be symbolic when a binding is a plain loop
variable (or a fusion of loops whose lower extents are constants). A predicate is split
the same way: the conditions on the loops above go to the outer block, those on the loops
below stay on the inner one. Refused: a subtree with no block or several blocks, a binding
or a condition that mixes outer and inner loops in a way that does not split. A reduction's
init moves to the outer block (as a block `<name>_init` over the inner spatial iterators
it uses).

As in TVM, the substituted expressions of the inner block are simplified knowing the range
of the inner iterators, and the regions of the outer block are those of the inner block
relaxed over the inner iterators."""
from __future__ import annotations

import dataclasses

from ...ir import expr as E
from ...ir import stmt as S
from ...arith import writeback as A
from .. import _common as common
from .. import _ir
from .divide import as_expr, divide, exact, split_predicate
from .outer import outer_init, relax_regions
from .simplify import substitute
from ..analysis import realizes_under, regions_of
from ..registry import primitive


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
    inner_loops = [x for x in _ir.stmts(f) if isinstance(x, S.For) and
                   any(y is r for y in _ir.stmts(x))]
    outer_loops = []
    for a in reversed(f_anc):
        if isinstance(a, (S.Block, S.BlockRealize)):
            break
        if isinstance(a, S.For):
            outer_loops.insert(0, a)
    ib = common.loop_bounds(inner_loops)
    ob = common.loop_bounds(outer_loops)
    idoms = {id(lp.loop_var): lp for lp in inner_loops}
    odoms = {id(lp.loop_var): lp for lp in outer_loops}

    def refuse(kind, msg):
        return sch.error(kind, msg, blk, [(f, "loop")])

    o_ivs, i_ivs, o_vals, i_vals, vmap = [], [], [], [], {}
    alldoms = {**odoms, **idoms}
    # TVM divides bindings that are fusions of loops; when one is not (`l * 16`), each
    # binding over the inner (outer) loops alone keeps its domain as the inner (outer) one
    trivial = not all(exact(A.to_form(v, {**ob, **ib}), alldoms) for v in r.iter_values)
    conds = common.conjuncts(r.predicate)
    for iv, v in zip(blk.iter_vars, r.iter_values):
        dt = iv.var.dtype
        vs = _ir.vars_in(v)
        has_in = any(id(x) in idoms for x in vs)
        has_out = any(id(x) in odoms for x in vs)
        one_sided = has_in != has_out and common.is_zero(iv.dom.min)
        split = None
        if not (trivial and one_sided):
            try:
                split = divide(iv, v, ob, ib, odoms, idoms, conds, refuse,
                               f.loop_var.name)
            except Exception as e:
                if not one_sided or not hasattr(e, "kind"):
                    raise
        vo = E.Var(iv.var.name + "_o", dt)
        vi = E.Var(iv.var.name + "_i", dt)
        if split is None and has_in and _is_one(iv.dom.extent):
            # an inner part of extent 1 is no iterator of its own (as TVM)
            split = (1, common.int32(0, dt), 1, None)
        if split is None:
            if has_in:
                o_ivs.append(S.IterVar(vo, E.Range(common.int32(0, dt), common.int32(1, dt)),
                                       iv.kind))
                o_vals.append(common.int32(0, dt))
                i_ivs.append(dataclasses.replace(iv, var=vi))
                i_vals.append(v)
                vmap[id(iv.var)] = vi
            else:
                o_ivs.append(dataclasses.replace(iv, var=vo))
                o_vals.append(v)
                vmap[id(iv.var)] = vo
            continue
        ext_o, o_val, ext_i, i_val = split
        # (a unit outer iterator stands for zero only when its binding is zero)
        one_o = isinstance(ext_o, int) and ext_o == 1 and (
            common.is_zero(o_val) or A.bound_of(o_val, ob) == (0, 0))
        one_i = isinstance(ext_i, int) and ext_i == 1
        o_ivs.append(S.IterVar(vo, E.Range(common.int32(0, dt), as_expr(ext_o, dt)), iv.kind))
        o_vals.append(o_val)
        if not one_i:
            i_ivs.append(S.IterVar(vi, E.Range(common.int32(0, dt), as_expr(ext_i, dt)), iv.kind))
            i_vals.append(i_val)
        if one_i:
            vmap[id(iv.var)] = common.int32(0, dt) if one_o and not preserve_unit_iters else vo
        elif one_o:
            vmap[id(iv.var)] = vi
        else:
            vmap[id(iv.var)] = E.Add(E.Mul(vo, as_expr(ext_i, dt), dt), vi, dt)
    if not preserve_unit_iters:
        keep = [k for k, iv in enumerate(o_ivs) if not _is_one(iv.dom.extent)]
        gone = {id(iv.var): val for k, (iv, val) in enumerate(zip(o_ivs, o_vals))
                if k not in keep}
        vmap = {k: _ir.substitute(e, gone) for k, e in vmap.items()}
        o_ivs = [o_ivs[k] for k in keep]
        o_vals = [o_vals[k] for k in keep]
    # an outer loop bound as it is to an outer iterator is that iterator inside the block
    lmap = {id(val): iv.var for iv, val in zip(o_ivs, o_vals)
            if isinstance(val, E.Var) and id(val) in odoms}
    o_pred, i_pred = split_predicate(r.predicate, idoms, odoms, lmap, refuse)
    # the inner block: the original one with its regions written out, substituted
    bounds = {id(iv.var): (0, iv.dom.extent.value - 1) for iv in i_ivs
              if isinstance(iv.dom.extent, E.IntImm)}
    reads, writes = regions_of(blk)
    if blk.match_buffers:
        # an access through a matched buffer is one of the region it matches
        src = {id(m.buffer): m.source for m in blk.match_buffers}
        reads = tuple(src.get(id(x.buffer), x) for x in reads)
        writes = tuple(src.get(id(x.buffer), x) for x in writes)
    sub = dataclasses.replace(blk, reads=tuple(reads), writes=tuple(writes))
    sub = substitute(sub, vmap, bounds)
    outer_reduction = sub.init is not None and any(iv.kind == "R" for iv in o_ivs)
    i_reads = sub.writes + sub.reads if outer_reduction else sub.reads
    new_blk = dataclasses.replace(sub, iter_vars=tuple(i_ivs), init=None, reads=i_reads)
    new_r = dataclasses.replace(r, iter_values=tuple(i_vals), predicate=i_pred, block=new_blk)
    new_f = _ir.replace_nodes(f, {id(r): new_r})
    # the outer block: the regions of the inner one over the inner iterators
    doms = {id(iv.var): iv.dom.extent for iv in i_ivs}
    # (loops inside show in the regions of an opaque block: relaxed too)
    rbounds = {**ib, **bounds}
    doms.update({k: lp.extent for k, lp in idoms.items() if common.is_zero(lp.min) or k in ib})
    o_reads = relax_regions(sub.reads, rbounds, doms)
    o_writes = relax_regions(sub.writes, rbounds, doms)
    name = sch.fresh_block_name(target.func, blk.name_hint + "_o")
    init = None
    if sub.init is not None:
        if any(iv.kind != "S" and _ir.uses_var(sub.init, iv.var) for iv in i_ivs):
            raise refuse("blockize/init", "the init of the block uses a reduction iterator")
        init = outer_init(sch, target.func, new_f, new_r, sub.init)
        if init is None:
            raise refuse("blockize/init", "the predicate of the block is over loops that its "
                         "init would not run over")
    outer_blk = S.Block(name, tuple(o_ivs), o_reads, o_writes, new_f, init)
    outer_r = S.BlockRealize(tuple(o_vals), o_pred, outer_blk)
    sch.replace(target.func, f, outer_r)
    return sch.block_of(target.func, name)


def _is_one(e):
    return isinstance(e, E.IntImm) and e.value == 1


def _inside(r, o):
    """Whether realize r is under block realize o (its body or its init)."""
    return any(x is r for part in (o.block.body, o.block.init) if part is not None
               for x in _ir.stmts(part))
