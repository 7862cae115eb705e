"""loop-nest/parallel-race: two iterations of a parallel loop (`T.parallel`, or a loop bound
to `blockIdx.*`) touch one element, at least one of them writing.  The iterations run at the
same time, so the value read, or the one left, depends on their timing: `B[0] = B[0] + A[i]`
under `T.parallel`, or `A[i + 1] = A[i] * 2`.  TVM compiles both without a word.

Only what is certain is reported: a witness, two values of the loop's variable and the
element they share, found by evaluating the accesses' indices and guards at every point of
the loops inside the parallel one (arith/enumerate.py: constant loops, at most 65,536
points for all the accesses under one parallel loop; the loops outside it at their first
values).  Iterations that store one value (no load, no call, not the loop's variables) to
one element by one store leave that value whatever their order, and are not reported.  Accesses in a block with
iterators inside the loop are left to the block rules (`signature/iter-type`,
`loop-nest/reduction-on-parallel`): a block's iterators declare its instances independent.
Storage allocated inside the loop is each iteration's own.  Under `blockIdx`, only the
function's parameters are read (shared and local memory belong to one thread block).  Not
read: vector accesses, accesses through an address (intrinsics), and loops of other extents.
Reported on the write, with the loop and the other access related."""
from __future__ import annotations

import numpy as np

from ..arith.enumerate import LIMIT, box_values
from ..diagnostics import error
from ..ir import expr as E
from ..ir import stmt as S
from ..ir.visit import contains, walk
from . import register
from ._common import const_int, full_env, func_accesses, vars_through

CODE = "loop-nest/parallel-race"


def _why(lp):
    """How a message says the loop runs its iterations at the same time (what the loop is,
    and the loop), or None."""
    if lp.kind == "parallel":
        return "parallel", "the parallel loop"
    tag = lp.thread_tag or ""
    if lp.kind == "thread_binding" and tag.startswith("blockIdx"):
        return f"bound to {tag}", f"the loop bound to {tag}"
    return None


def _invariant(a, inner, env) -> bool:
    """Whether store `a` writes one value in every iteration: no load, no call, none of the
    variables of the loops `inner` (ids) in its value (then iterations that store it to one
    element leave that value whatever their order)."""
    v = a.value
    return v is not None and not contains(v, lambda x: type(x) in (E.BufferLoad, E.Call)) \
        and not (vars_through(v, env) & inner)


def _allocated_inside(lp) -> set:
    """ids of the data Vars of storage allocated in the loop's body (each iteration's)."""
    out = set()

    def f(x):
        if type(x) is S.Allocate:
            out.add(id(x.buffer_var))
        elif type(x) is S.DeclBuffer:
            out.add(id(x.buffer.data))
        elif type(x) is S.Block:
            out.update(id(b.data) for b in x.alloc_buffers)
    if isinstance(lp.node, (S.For, S.AttrStmt)):
        walk(lp.node.body, f)
    return out


def _flat(buf):
    """(strides, offset) of a buffer whose layout is constant, row-major by default; None."""
    shape = [const_int(d) for d in buf.shape]
    strides = [const_int(s) for s in buf.strides] if buf.strides else None
    offset = const_int(buf.elem_offset) if buf.elem_offset is not None else 0
    if any(d is None for d in shape) or offset is None or \
            (strides is not None and any(s is None for s in strides)):
        return None
    if strides is None:
        strides, n = [], 1
        for d in reversed(shape):
            strides.insert(0, n)
            n *= d
    return strides, offset


def _points(a, lp, pos, env, limit):
    """The elements access `a` touches and the loop's value at each: (flat indices, loop
    values, [index arrays]) over the points where its guards hold, and the points of its
    box; None where they cannot be read or its box holds more than `limit` points."""
    ranges = {}
    for i, x in enumerate(a.loops):
        lo, n = const_int(x.min), const_int(x.extent)
        if lo is None or n is None:
            return None
        ranges[x.var] = (lo, n if i >= pos else min(n, 1))
    layout = _flat(a.buffer)
    if layout is None or len(a.indices) != len(layout[0]) or \
            any(type(i) is E.Ramp or (i.dtype.split("x")[0] != i.dtype) for i in a.indices):
        return None
    got = box_values(list(a.indices) + [c for c, _ in a.conds], ranges, env, limit)
    if got is None:
        return None
    idx, conds = got[:len(a.indices)], got[len(a.indices):]
    mask = np.ones(idx[0].shape if idx else (), dtype=bool)
    for c in conds:
        if c.dtype != np.bool_:
            return None
        mask = mask & c
    axis = list(ranges).index(lp.var)
    shape = mask.shape
    loop = np.broadcast_to(np.arange(ranges[lp.var][0], ranges[lp.var][0] + shape[axis])
                           .reshape([-1 if k == axis else 1 for k in range(len(shape))]),
                           shape)
    strides, offset = layout
    flat = sum((x * s for x, s in zip(idx, strides)), np.int64(offset))
    return np.broadcast_to(flat, shape)[mask], loop[mask], [x[mask] for x in idx], mask.size


def _conflict(entries):
    """The first element two loop values touch, one writing, other than by one store of one
    value: ((entry, point, loop value) of the write, the same of the other access) or None.
    entries: [(access, (flat, loop, idx), whether it stores one value everywhere)]."""
    flat = np.concatenate([p[0] for _, p, _ in entries])
    loop = np.concatenate([p[1] for _, p, _ in entries])
    write = np.concatenate([np.full(len(p[0]), a.is_write) for a, p, _ in entries])
    which = np.concatenate([np.full(len(p[0]), k) for k, (_, p, _) in enumerate(entries)])
    same = np.concatenate([np.full(len(p[0]), s) for _, p, s in entries])
    point = np.concatenate([np.arange(len(p[0])) for _, p, _ in entries])
    if not len(flat) or not write.any():
        return None
    order = np.lexsort((loop, flat))
    flat, loop, write, which, same, point = (x[order] for x in
                                             (flat, loop, write, which, same, point))
    starts = np.flatnonzero(np.r_[True, flat[1:] != flat[:-1]])
    lo = np.minimum.reduceat(loop, starts)
    hi = np.maximum.reduceat(loop, starts)
    wrote = np.logical_or.reduceat(write, starts)
    # (one store of one value alone: whatever the order, the element is left that value)
    alone = (np.minimum.reduceat(which, starts) == np.maximum.reduceat(which, starts)) & \
        np.logical_and.reduceat(same, starts)
    bad = np.flatnonzero(wrote & (lo != hi) & ~alone)
    if not len(bad):
        return None
    g = bad[0]
    end = starts[g + 1] if g + 1 < len(starts) else len(flat)
    rows = range(starts[g], end)
    w = next(r for r in rows if write[r])
    others = [r for r in rows if loop[r] != loop[w]]
    o = next((r for r in others if write[r]), others[0])
    return (which[w], point[w], loop[w]), (which[o], point[o], loop[o])


@register(CODE, fast=True)
def check_parallel_race(func, ctx):
    if ctx.incomplete(func):
        return []
    fa = func_accesses(func, ctx)
    env = full_env(fa)
    params = {id(b.data) for _, b in func.buffer_map}
    out = []
    for lp in fa.loops:
        why = _why(lp)
        n = const_int(lp.extent)
        if why is None or n is None or n < 2:
            continue
        inside = _allocated_inside(lp)
        inner = {id(x.var) for x in fa.loops if x is lp or
                 any(p is lp for p in fa.loop_parents.get(id(x), ()))}
        by_data, budget = {}, LIMIT
        for a in fa.accesses:
            pos = next((i for i, x in enumerate(a.loops) if x is lp), None)
            if pos is None or a.opaque or id(a.buffer.data) in inside or \
                    (why[0] != "parallel" and id(a.buffer.data) not in params) or \
                    any(r.block.iter_vars and a.block_loops[j] > pos
                        for j, r in enumerate(a.blocks)):
                continue
            pts = _points(a, lp, pos, env, budget)
            if pts is None:
                continue
            budget -= pts[3]
            by_data.setdefault(id(a.buffer.data), []).append(
                (a, pts, a.is_write and _invariant(a, inner, env)))
        for entries in by_data.values():
            found = _conflict(entries)
            if found is not None:
                out.append(_report(lp, why, entries, *found))
    return out


def _report(lp, why, entries, w, o):
    what, loop = why
    (wa, wp), (oa, op) = [(entries[k][0], entries[k][1]) for k, _, _ in (w, o)]
    elem = ", ".join(str(int(x[w[1]])) for x in wp[2])
    name = f"`{wa.buffer.name}[{elem}]`"
    v = lp.var.name
    if oa.is_write:
        msg = (f"iterations `{v}` = {w[2]} and `{v}` = {o[2]} of {loop} both write {name}: "
               "they may run at the same time, so the value left depends on their timing")
        other = f"iteration `{v}` = {o[2]} writes {name} here"
    else:
        msg = (f"iteration `{v}` = {o[2]} reads {name}, which iteration `{v}` = {w[2]} "
               f"writes: {loop} may run them at the same time, so the value read depends "
               "on their timing")
        other = f"iteration `{v}` = {o[2]} reads {name} here"
    related = [(lp.span, f"loop `{v}` is {what} here")] if lp.span else []
    if oa.span is not None and oa.span != wa.span:
        related.append((oa.span, other))
    return error(CODE, msg, wa.span or lp.span, related)
