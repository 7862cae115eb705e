"""decompose_reduction: split a reduction block's init into its own block before a loop.

    init = sch.decompose_reduction(sch.get_block("C"), k0)

The init block `<name>_init` runs the init over the spatial iterators under the loop, in
fresh copies of the loops that feed them; the block itself becomes `<name>_update` (its
handle follows it). Refused: a block with no init, a loop that is not an ancestor of the
block, a loop below a loop that feeds a reduction iterator."""
from __future__ import annotations

import dataclasses

from ...ir import expr as E
from ...ir import stmt as S
from .. import _common as common
from .. import _ir
from ..registry import primitive


def writes_of(blk):
    if blk.writes is not None:
        return blk.writes
    from ..analysis import infer_regions
    return infer_regions(blk)[1]


@primitive("decompose_reduction")
def decompose_reduction(sch, block, loop):
    info = sch.block_info(block)
    blk = info.block
    f, f_anc = sch.loop_info(loop)
    if blk.init is None:
        raise sch.error("decompose_reduction/no-init", f"block '{blk.name_hint}' has no init",
                        blk)
    loops = info.loops
    if not any(lp is f for lp in loops):
        raise sch.error("decompose_reduction/not-ancestor", f"loop '{f.loop_var.name}' is not "
                        f"an ancestor of block '{blk.name_hint}'", f, [(blk, "block")])
    k = next(i for i, lp in enumerate(loops) if lp is f)
    realize = info.realize
    for iv, v in zip(blk.iter_vars, realize.iter_values):
        if iv.kind != "R":
            continue
        for higher in loops[:k]:
            if _ir.uses_var(v, higher.loop_var):
                raise sch.error("decompose_reduction/below-reduction-loop",
                                f"loop '{f.loop_var.name}' is inside loop "
                                f"'{higher.loop_var.name}', which feeds the reduction iterator"
                                f" '{iv.var.name}' of block '{blk.name_hint}'", f,
                                [(higher, "reduction loop"), (blk, "block")])
    # the init block: spatial iterators only, fresh variables
    spatial = [(iv, v) for iv, v in zip(blk.iter_vars, realize.iter_values) if iv.kind == "S"]
    under = loops[k:]
    used = [lp for lp in under if any(_ir.uses_var(v, lp.loop_var) for _, v in spatial)]
    lmap = {}
    new_loops = []
    for lp in used:
        nv = E.Var(lp.loop_var.name + "_init", lp.loop_var.dtype)
        lmap[id(lp.loop_var)] = nv
        new_loops.append(dataclasses.replace(lp, loop_var=nv, body=None, comments=(),
                                             trailing=None))
    ivmap = {}
    new_ivs = []
    for iv, _ in spatial:
        nv = E.Var(iv.var.name + "_init", iv.var.dtype)
        ivmap[id(iv.var)] = nv
        new_ivs.append(dataclasses.replace(iv, var=nv))
    init_body = _ir.substitute(blk.init, ivmap)
    if blk.writes is not None:
        writes = _ir.substitute(blk.writes, ivmap)
    else:
        from ..analysis import infer_regions
        writes = _ir.substitute(infer_regions(blk)[1], ivmap)
    name = sch.fresh_block_name(block.func, blk.name_hint + "_init")
    init_block = S.Block(name, tuple(new_ivs), (), writes, init_body)
    values = tuple(_ir.substitute(v, lmap) for _, v in spatial)
    pred = realize.predicate
    if not common.is_true(pred) and all(not _ir.uses_var(pred, lp.loop_var) for lp in under
                                   if lp not in used):
        pred = _ir.substitute(pred, lmap)
    else:
        pred = common.TRUE
    init_nest = common.nest(new_loops, S.BlockRealize(values, pred, init_block))
    update_name = sch.fresh_block_name(block.func, blk.name_hint + "_update")
    # without its init the update reads what it writes: those regions come first
    reads = blk.reads
    if reads is not None:
        extra = tuple(w for w in writes_of(blk) if not any(r.buffer is w.buffer for r in reads))
        reads = extra + tuple(reads)
    new_blk = dataclasses.replace(blk, init=None, name_hint=update_name, reads=reads)
    new_f = _ir.replace_nodes(f, {id(blk): new_blk})
    sch.replace(block.func, f, S.SeqStmt((init_nest, new_f)))
    sch.rename_block(block.func, blk.name_hint, update_name)
    return sch.block_of(block.func, name)
