"""What compute_at and reverse_compute_at share: the driver that checks where the block may
go, solves the region it must cover there, builds its new loop nest and puts it in place.
The checks are in `checks`, the region in `region`, the nest in `nest`."""
from __future__ import annotations

import dataclasses

from ...ir import stmt as S
from .. import _common as common
from ..inline import common as inlining
from .. import _ir
from .checks import check_cover, check_passed, check_reads, contains, is_under
from .nest import make_nest
from .region import needed_region
from ..analysis import (check_independent, consumers, output_buffers, producers,
                        runs_at_once, scope_blocks, write_buffers)


def move(sch, block, loop, preserve_unit_loops, index, reverse):
    what = "reverse_compute_at" if reverse else "compute_at"
    info = sch.block_info(block)
    blk = info.block
    f, f_anc = sch.loop_info(loop)
    func = sch.func(block.func)
    scope = inlining.scope_of(sch, block.func, info)
    if any(a is f for a in info.ancestors):
        raise sch.error(f"{what}/loop-is-ancestor", f"loop '{f.loop_var.name}' is an ancestor "
                        f"of block '{blk.name_hint}'", f, [(blk, "block")])
    f_scope = next((a for a in reversed(f_anc) if isinstance(a, S.Block)), None)
    if f_scope is not scope:
        raise sch.error(f"{what}/different-scope", f"loop '{f.loop_var.name}' is not in the "
                        f"scope of block '{blk.name_hint}'", f, [(blk, "block")])
    if not reverse and any(b is o for o in output_buffers(func) for b in write_buffers(blk)):
        raise sch.error("compute_at/output-block", f"block '{blk.name_hint}' writes an output "
                        "of the function", blk)
    # the block must be the only writer of what it writes in its scope (as TVM requires of
    # a complete or reduction block): moving it past another writer reorders the writes
    mine = write_buffers(blk)
    for other in scope_blocks(sch, block.func, info.scope):
        if other.block is not blk and any(b is w for b in mine
                                          for w in write_buffers(other.block)):
            raise sch.error(f"{what}/several-writers", f"block '{other.block.name_hint}' also "
                            f"writes a buffer that block '{blk.name_hint}' writes",
                            other.block, [(blk, "block")])
    deps = producers(sch, block.func, info) if reverse else consumers(sch, block.func, info)
    role = "producer" if reverse else "consumer"
    if not deps:
        raise sch.error(f"{what}/no-{role}s", f"block '{blk.name_hint}' has no {role}s", blk)
    for d in deps:
        if not is_under(d, f):
            raise sch.error(f"{what}/{role}s-not-under-loop",
                            f"the {role} '{d.block.name_hint}' of block '{blk.name_hint}' is "
                            f"not under loop '{f.loop_var.name}'", d.block,
                            [(f, "loop"), (blk, "block")])
    # where in the loop body: after the last producer, before the first consumer; by
    # default (index -1) as late as that allows, index -2 as early (as TVM)
    kids = _ir.child_stmts(f)
    others = consumers(sch, block.func, info) if reverse else producers(sch, block.func, info)
    cons, prods = (others, deps) if reverse else (deps, others)
    first_cons = next((k for k, s in enumerate(kids) if any(contains(s, d.realize)
                                                            for d in cons)), len(kids))
    last_prod = max((k for k, s in enumerate(kids) if any(contains(s, d.realize)
                                                          for d in prods)), default=-1)
    if last_prod >= first_cons:
        d = next(d for d in (others if reverse else prods)
                 if contains(kids[last_prod if not reverse else first_cons], d.realize))
        raise sch.error(f"{what}/dependency-order",
                        f"block '{d.block.name_hint}' would run on the wrong side of "
                        f"block '{blk.name_hint}'", d.block, [(blk, "block")])
    if index is None or index == -1:
        pos = first_cons
    elif index == -2:
        pos = last_prod + 1
    elif not 0 <= index <= len(kids):
        raise sch.error(f"{what}/bad-index", f"index {index} is outside the loop body", f)
    elif not last_prod + 1 <= index <= first_cons:
        raise sch.error(f"{what}/bad-index", f"index {index} breaks a dependency", f)
    else:
        pos = index
    check_passed(sch, block.func, info, kids, pos, f, reverse, what)
    # the region the block must cover, in terms of the loops at and above `f`
    reqs = {}
    outer_loops = [a for a in f_anc if isinstance(a, S.For)] + [f]
    region = needed_region(sch, blk, deps, f, reverse, what, reqs,
                           common.loop_bounds(outer_loops))
    new_realize, new_loops = make_nest(sch, info, region, outer_loops, preserve_unit_loops,
                                       what)
    if reverse:
        check_cover(sch, info, deps, what)
        check_reads(sch, blk, new_realize, new_loops, reqs, f, what,
                    common.loop_bounds(outer_loops))
    nest = common.nest(new_loops, new_realize)
    new_kids = kids[:pos] + [nest] + kids[pos:]
    new_f = dataclasses.replace(f, body=S.SeqStmt(tuple(new_kids)) if len(new_kids) > 1
                                else new_kids[0])
    mapping = {}
    inlining.removal(info, mapping)
    mapping[id(f)] = new_f
    # the block is computed in each iteration of the loops around its new place: those that
    # run their iterations at once must not then have two meet
    if any(runs_at_once(a) for a in outer_loops):
        check_independent(sch, func, scope, _ir.replace_nodes(scope, mapping), outer_loops,
                          what, lambda x: f"block '{blk.name_hint}' computed in each "
                          f"iteration of loop '{x.loop_var.name}'", [(blk, "block")])
    inlining.rewrite_scope(sch, block.func, scope, mapping)
    return None
