"""What compute_at and reverse_compute_at share: the checks on where the block may go, the
region of the buffer it exchanges with the blocks under the loop, and the new loop nest."""
from __future__ import annotations

import dataclasses

from ..ir import expr as E
from ..ir import stmt as S
from . import _arith as A
from . import _common as C
from . import _inline as I
from . import _ir
from .analysis import (consumers, infer_regions, output_buffers, producers, read_buffers,
                       region_of_indices, write_buffers)


def _regions(block):
    r, w = block.reads, block.writes
    if r is None or w is None:
        r2, w2 = infer_regions(block)
        r = r if r is not None else r2
        w = w if w is not None else w2
    return r, w


def _under(info, loop):
    return any(a is loop for a in info.ancestors)


def move(sch, block, loop, preserve_unit_loops, index, reverse):
    what = "reverse_compute_at" if reverse else "compute_at"
    info = sch.block_info(block)
    blk = info.block
    f, f_anc = sch.loop_info(loop)
    func = sch.func(block.func)
    scope = I.scope_of(sch, block.func, info)
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
    if not (isinstance(info.realize.predicate, E.IntImm) and info.realize.predicate.value):
        raise sch.error(f"{what}/predicate", f"block '{blk.name_hint}' has a predicate", blk)
    deps = producers(sch, block.func, info) if reverse else consumers(sch, block.func, info)
    role = "producer" if reverse else "consumer"
    if not deps:
        raise sch.error(f"{what}/no-{role}s", f"block '{blk.name_hint}' has no {role}s", blk)
    for d in deps:
        if not _under(d, f):
            raise sch.error(f"{what}/{role}s-not-under-loop",
                            f"the {role} '{d.block.name_hint}' of block '{blk.name_hint}' is "
                            f"not under loop '{f.loop_var.name}'", d.block,
                            [(f, "loop"), (blk, "block")])
    # where in the loop body: before the first consumer / after the last producer
    kids = _ir.child_stmts(f)
    holders = [k for k, s in enumerate(kids) if any(_contains(s, d.realize) for d in deps)]
    pos = holders[-1] + 1 if reverse else holders[0]
    others = consumers(sch, block.func, info) if reverse else producers(sch, block.func, info)
    for d in others:
        for k, s in enumerate(kids):
            if _contains(s, d.realize) and (k < pos if reverse else k >= pos):
                raise sch.error(f"{what}/dependency-order",
                                f"block '{d.block.name_hint}' would run on the wrong side of "
                                f"block '{blk.name_hint}'", d.block, [(blk, "block")])
    if index is not None and index != -1:
        if not 0 <= index <= len(kids):
            raise sch.error(f"{what}/bad-index", f"index {index} is outside the loop body", f)
        lo, hi = (pos, len(kids)) if reverse else (0, pos)
        if not lo <= index <= hi:
            raise sch.error(f"{what}/bad-index", f"index {index} breaks a dependency", f)
        pos = index
    # the region the block must cover, in terms of the loops at and above `f`
    region = _needed_region(sch, blk, deps, f, reverse, what)
    outer_loops = [a for a in f_anc if isinstance(a, S.For)] + [f]
    new_realize, new_loops = _make_nest(sch, info, region, outer_loops, preserve_unit_loops,
                                        what)
    nest = C.nest(new_loops, new_realize)
    new_kids = kids[:pos] + [nest] + kids[pos:]
    new_f = dataclasses.replace(f, body=S.SeqStmt(tuple(new_kids)) if len(new_kids) > 1
                                else new_kids[0])
    mapping = {}
    I.removal(info, mapping)
    mapping[id(f)] = new_f
    I.rewrite_scope(sch, block.func, scope, mapping)
    return None


def _contains(s, node):
    return s is node or any(x is node for x in _ir.stmts(s))


def _needed_region(sch, blk, deps, f, reverse, what):
    """{buffer dim -> (min expr, extent)} keyed by the block's iterator that indexes it."""
    bufs = read_buffers(blk) if reverse else write_buffers(blk)
    own_r, own_w = _regions(blk)
    own = own_r if reverse else own_w
    result = {}
    for buf in bufs:
        corners = []
        for d in deps:
            r, w = _regions(d.block)
            ivmap = {id(iv.var): v for iv, v in zip(d.block.iter_vars, d.realize.iter_values)}
            for reg in (w if reverse else r):
                if reg.buffer is not buf:
                    continue
                lo = tuple(_ir.substitute(x.min, ivmap) for x in reg.region)
                hi = tuple(_ir.substitute(E.Sub(E.Add(x.min, x.extent, "int32"),
                                                C.int32(1), "int32"), ivmap) for x in reg.region)
                inner = [a for a in d.ancestors if isinstance(a, S.For)]
                k = next(i for i, a in enumerate(inner) if a is f)
                corners.append((lo, hi, inner[k + 1:]))
        if not corners:
            continue
        inner_b = {}
        for _, _, loops in corners:
            inner_b.update(C.loop_bounds(loops))
        reg = region_of_indices([c for lo, hi, _ in corners for c in (lo, hi)], {}, inner_b, {})
        if reg is None:
            raise sch.error(f"{what}/region", f"the region of '{buf.name}' that block "
                            f"'{blk.name_hint}' must cover is not a box of constant size",
                            blk, [(f, "loop")])
        mine = [r for r in own if r.buffer is buf]
        if not mine:
            continue
        for dim, (x, (mn, ext)) in enumerate(zip(mine[0].region, reg)):
            if not (isinstance(x.extent, E.IntImm) and x.extent.value == 1 and
                    isinstance(x.min, E.Var)):
                raise sch.error(f"{what}/not-iterator-indexed", f"block '{blk.name_hint}' "
                                f"does not access '{buf.name}' at one iterator per dimension",
                                blk)
            prev = result.get(id(x.min))
            if prev is not None and not (A.to_lin(prev[0], {}).key() ==
                                         A.to_lin(mn, {}).key() and prev[1] == ext):
                raise sch.error(f"{what}/region", f"block '{blk.name_hint}' would need two "
                                f"different ranges for iterator '{x.min.name}'", blk)
            result[id(x.min)] = (mn, ext)
        if result:
            break
    if not result:
        raise sch.error(f"{what}/region", f"no buffer links block '{blk.name_hint}' to the "
                        f"blocks under loop '{f.loop_var.name}'", blk)
    return result


def _make_nest(sch, info, region, outer_loops, preserve_unit_loops, what):
    blk = info.block
    values, loops, preds = [], [], []
    n = 0
    bounds = C.loop_bounds(outer_loops)
    # unit loops around the new nest are folded to their value (as TVM's analyzer does)
    fold = {k: True for k, (lo, hi) in bounds.items() if lo == hi}
    A.FOLD.update(fold)
    try:
        return _nest_values(sch, info, region, bounds, preserve_unit_loops, what, values,
                            loops, preds)
    finally:
        A.FOLD.clear()


def _nest_values(sch, info, region, bounds, preserve_unit_loops, what, values, loops, preds):
    blk = info.block
    n = 0
    for iv in blk.iter_vars:
        dt = iv.var.dtype
        dom_lo = iv.dom.min.value if isinstance(iv.dom.min, E.IntImm) else None
        dom_hi = dom_lo + iv.dom.extent.value if dom_lo is not None and \
            isinstance(iv.dom.extent, E.IntImm) else None
        if id(iv.var) in region:
            mn, ext = region[id(iv.var)]
            if dom_hi is not None:
                # the producer computes no more than its domain
                if isinstance(mn, E.IntImm):
                    lo, hi = max(mn.value, dom_lo), min(mn.value + ext, dom_hi)
                    mn, ext = C.int32(lo, dt), max(hi - lo, 1)
                else:
                    ext = min(ext, dom_hi - dom_lo)
        else:
            if not isinstance(iv.dom.extent, E.IntImm):
                raise sch.error(f"{what}/symbolic-extent", f"iterator '{iv.var.name}' of "
                                f"block '{blk.name_hint}' has a non-constant domain", blk)
            mn, ext = iv.dom.min, iv.dom.extent.value
        if ext == 1 and not preserve_unit_loops:
            val = A.simplify(mn, bounds, binding=True)
        else:
            v = E.Var(f"ax{n}", dt)
            n += 1
            loops.append(C.new_loop(v, ext))
            bounds[id(v)] = (0, ext - 1)
            val = A.simplify(E.Add(mn, v, dt), bounds, binding=True)
        values.append(val)
        if dom_hi is not None and not isinstance(val, E.IntImm):
            b = A.bound_of(val, bounds)
            if b is not None and b[1] >= dom_hi:
                preds.append(A.simplify(E.LT(val, C.int32(dom_hi, dt), "bool"), bounds))
            if b is not None and b[0] < dom_lo:
                preds.append(A.simplify(E.GE(val, C.int32(dom_lo, dt), "bool"), bounds))
    pred = C.TRUE
    for p in preds:
        pred = C.and_(pred, p)
    realize = dataclasses.replace(info.realize, iter_values=tuple(values), predicate=pred)
    return realize, loops
