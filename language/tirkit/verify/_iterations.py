"""The iterations of one loop, read point by point: what an access touches at each value of
the loop and of the loops inside it (arith/enumerate.py), for the rules on loops whose
iterations run at once (`loop-nest/parallel-race`, `loop-nest/vector-dependence`)."""
from __future__ import annotations

import numpy as np

from ..arith.enumerate import LIMIT, box_values
from ..ir import stmt as S
from ..ir.dtype import lanes_of
from ..ir.visit import walk
from ._common import const_int


def allocated_inside(lp) -> set:
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


def flat_layout(buf):
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


def loop_points(a, lp, pos, env, limit):
    """The elements access `a` touches and the loop's value at each: (flat indices, loop
    values, [index arrays]) over the points where its guards hold, and the points of its
    box; None where they cannot be read or its box holds more than `limit` points."""
    ranges = {}
    for i, x in enumerate(a.loops):
        lo, n = const_int(x.min), const_int(x.extent)
        if lo is None or n is None:
            return None
        ranges[x.var] = (lo, n if i >= pos else min(n, 1))
    layout = flat_layout(a.buffer)
    if layout is None or len(a.indices) != len(layout[0]) or \
            any(lanes_of(i.dtype) > 1 for i in a.indices):
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


def element_groups(entries, *columns):
    """The points of `entries` ([(access, points, ...)], points as `loop_points` gives them)
    sorted by element, then by loop value: (flat, loop, which entry, which point, each of
    `columns` (one value per entry), group starts, group ends), a group being the points of
    one element; None where there is no point."""
    sizes = [len(p[0]) for _, p, *_ in entries]
    if not sum(sizes):
        return None
    flat = np.concatenate([p[0] for _, p, *_ in entries])
    loop = np.concatenate([p[1] for _, p, *_ in entries])
    which = np.repeat(np.arange(len(entries)), sizes)
    point = np.concatenate([np.arange(n) for n in sizes])
    order = np.lexsort((loop, flat))
    cols = [np.repeat(np.asarray(c), sizes)[order] for c in columns]
    flat, loop, which, point = (x[order] for x in (flat, loop, which, point))
    starts = np.flatnonzero(np.r_[True, flat[1:] != flat[:-1]])
    return (flat, loop, which, point, *cols, starts, np.r_[starts[1:], len(flat)])


def points_by_storage(fa, lp, env, keep) -> dict:
    """{id(data Var): [(access, points)]} of the accesses under loop `lp` that
    `keep(access, lp's position in its loops)` accepts and whose points can be read
    (`loop_points`), leaving out accesses through an address, storage allocated inside the
    loop (each iteration's own) and accesses in a block with iterators inside it (whose
    iterators declare its instances independent: the block rules judge those); at most
    LIMIT points in all."""
    inside = allocated_inside(lp)
    out, budget = {}, LIMIT
    for a in fa.accesses:
        pos = next((i for i, x in enumerate(a.loops) if x is lp), None)
        if pos is None or a.opaque or id(a.buffer.data) in inside or not keep(a, pos) or \
                any(r.block.iter_vars and a.block_loops[j] > pos
                    for j, r in enumerate(a.blocks)):
            continue
        pts = loop_points(a, lp, pos, env, budget)
        if pts is not None:
            budget -= pts[3]
            out.setdefault(id(a.buffer.data), []).append((a, pts))
    return out
