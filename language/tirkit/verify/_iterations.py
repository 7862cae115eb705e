"""The iterations of one loop, read point by point: what an access touches at each value of
the loop and of the loops inside it (arith/enumerate.py), for the rules on loops whose
iterations run at once (`loop-nest/parallel-race`, `loop-nest/vector-dependence`); and the
first element two iterations (or two instances of a block, verify/instance_dependence.py)
touch in conflict."""
from __future__ import annotations

import numpy as np

from ..analysis.accesses import accesses
from ..arith.enumerate import LIMIT, box_values, value_range
from ..ir import expr as E
from ..ir import stmt as S
from ..ir.dtype import lanes_of
from ..ir.equality import structural_equal
from ..ir.visit import contains, rebuild, vars_in
from ._common import const_int, vars_through


def allocated_inside(fa, lp) -> set:
    """ids of the data Vars of storage allocated in the body of loop `lp` (each
    iteration's): blocks' `T.alloc_buffer`s, `T.allocate`s and buffers declared there."""
    if not isinstance(lp.node, (S.For, S.AttrStmt)):
        return set()

    def inside(loops):
        return any(x is lp for x in loops)
    out = {id(b.data) for b, r in fa.allocs if inside(fa.loops_of[id(r)])}
    out.update(id(d.buffer_var if type(d) is S.Allocate else d.buffer.data)
               for d in fa.decls if inside(fa.decl_loops[id(d)]))
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


def touched(a, ranges, env, limit, guards=()):
    """What access `a` touches over the box `ranges` ({Var: (min, extent)}): (flat indices,
    mask, [index arrays]), arrays of the box's shape, the mask holding where its guards (and
    the conditions `guards`) hold and each index after the first lies in its dimension
    (past an inner dimension's end an index would name an element of the next row: that is
    `bounds/out-of-bounds`'s report); None where the access cannot be read or the box holds
    more than `limit` points."""
    layout = flat_layout(a.buffer)
    if layout is None or len(a.indices) != len(layout[0]) or \
            any(lanes_of(i.dtype) > 1 for i in a.indices):
        return None
    got = box_values(list(a.indices) + [c for c, _ in a.conds] + list(guards), ranges, env,
                     limit)
    if got is None:
        return None
    idx, conds = got[:len(a.indices)], got[len(a.indices):]
    shape = tuple(max(0, n) for _, n in ranges.values())
    mask = np.ones(shape, dtype=bool)
    for c in conds:
        if c.dtype != np.bool_:
            return None
        mask = mask & c
    for x, n in list(zip(idx, a.buffer.shape))[1:]:
        mask = mask & (x >= 0) & (x < const_int(n))
    strides, offset = layout
    flat = sum((x * s for x, s in zip(idx, strides)), np.int64(offset))
    return np.broadcast_to(flat, shape), mask, idx


def loop_box(a, pos, env):
    """(ranges, guards) of the points access `a` is read at under the loop at `pos` of its
    loops: {Var: [min, extent]} of its loops, those outside that loop at their first value,
    and the conditions that keep each point within the bounds of a loop whose bounds move
    with the loops around it (`range(i)` inside loop `i`); None where they cannot be read."""
    ranges, guards = {}, []
    for i, x in enumerate(a.loops):
        lo, n = const_int(x.min), const_int(x.extent)
        if lo is None or n is None:
            # the loop's values over those of the loops around, and a guard that keeps each
            # point within its own
            span = _moving_bounds(x, ranges, env, LIMIT)
            if span is None:
                return None
            (lo, n), guard = span
            guards.append(guard)
        ranges[x.var] = [lo, n if i >= pos else min(n, 1)]
    return ranges, guards


def loop_points(a, lp, pos, env, limit, box=None):
    """The elements access `a` touches and the loop's value at each: (flat indices, loop
    values, [index arrays]) over the points where it touches one (`touched`), the points
    of its box, {id(Loop): values} of the loops inside `lp` around it at each point, and
    whether the box was cut; None where they cannot be read.  `box`: `loop_box`'s, when
    already made.  A box of more than `limit` points is cut: a prefix of each loop, the
    largest cut first, `lp` kept to two values at least; a witness found in part of the
    points holds for the whole."""
    box = box or loop_box(a, pos, env)
    if box is None:
        return None
    ranges, guards = {v: list(r) for v, r in box[0].items()}, box[1]
    cut = box_size(ranges) > limit
    if not cut_box(ranges, limit, lambda v: 2 if v is lp.var else 1):
        return None
    got = touched(a, {v: tuple(x) for v, x in ranges.items()}, env, limit, guards)
    if got is None:
        return None
    flat, mask, idx = got
    shape, names = mask.shape, list(ranges)
    loop = np.broadcast_to(_axis(ranges, names, lp.var), shape)
    inner = {id(x): np.broadcast_to(_axis(ranges, names, x.var), shape)[mask]
             for x in a.loops[pos + 1:]}
    return flat[mask], loop[mask], [x[mask] for x in idx], mask.size, inner, cut


def _moving_bounds(x, ranges, env, limit):
    """((min, extent), guard) of loop `x` whose bounds are expressions of the loops in
    `ranges` ({Var: [min, extent]}, the loops around it): the values it takes over theirs,
    and the condition `min <= var < min + extent` of each point; None where they cannot
    be read."""
    box = {v: tuple(r) for v, r in ranges.items()}
    end = E.Add(x.min, x.extent, x.min.dtype)
    lo, hi = value_range(x.min, box, env, limit), value_range(end, box, env, limit)
    if lo is None or hi is None:
        return None
    guard = E.And(E.GE(x.var, x.min, "bool"), E.LT(x.var, end, "bool"), "bool")
    return (lo[0], max(0, hi[1] - lo[0])), guard


def box_size(ranges) -> int:
    """The points of the box `ranges` ({Var: [min, extent]})."""
    return int(np.prod([max(0, n) for _, n in ranges.values()], dtype=np.int64))


def cut_box(ranges, limit, floor) -> bool:
    """Cut the box `ranges` ({Var: [min, extent]}, in place) to at most `limit` points: a
    prefix of each loop, halving the one with the most values above `floor(var)` first
    (the fewest values it may keep, 1 or 2); False where it cannot be cut that far.  A
    witness found in part of a box holds for the whole."""
    while box_size(ranges) > limit:
        v = max(ranges, key=lambda x: ranges[x][1] - 2 * (floor(x) - 1))
        if ranges[v][1] <= floor(v):
            return False
        ranges[v][1] = (ranges[v][1] + 1) // 2
    return True


def loop_at(func, node):
    """(the accesses of `func`, the Loop record of its loop statement `node`, or None)."""
    fa = accesses(func)
    return fa, next((x for x in fa.loops if x.node is node), None)


def _axis(ranges, names, var):
    """The values of loop `var` along its own axis of the box `ranges`."""
    k = names.index(var)
    lo, n = ranges[var]
    return np.arange(lo, lo + max(0, n)).reshape([-1 if j == k else 1
                                                  for j in range(len(names))])


def element_text(a, pts, p) -> str:
    """How a message names the element access `a` touches at point `p` of its points
    (`loop_points`' third item, the index arrays): `A[1, 0]`, or `B[()]` for a 0-d
    buffer."""
    return f"`{a.buffer.name}[{', '.join(str(int(x[p])) for x in pts[2]) or '()'}]`"


def element_groups(entries, *columns, points=()):
    """The points of `entries` ([(access, points, ...)], points as `loop_points` gives them)
    sorted by element, then by loop value: (flat, loop, which entry, which point, each of
    `columns` (one value per entry), each of `points` (one array per entry, a value per
    point), group starts, group ends), a group being the points of one element; None where
    there is no point."""
    sizes = [len(p[0]) for _, p, *_ in entries]
    if not sum(sizes):
        return None
    flat = np.concatenate([p[0] for _, p, *_ in entries])
    loop = np.concatenate([p[1] for _, p, *_ in entries])
    which = np.repeat(np.arange(len(entries)), sizes)
    point = np.concatenate([np.arange(n) for n in sizes])
    order = np.lexsort((loop, flat))
    cols = [np.repeat(np.asarray(c), sizes)[order] for c in columns]
    cols += [np.concatenate(p)[order] for p in points]
    flat, loop, which, point = (x[order] for x in (flat, loop, which, point))
    starts = np.flatnonzero(np.r_[True, flat[1:] != flat[:-1]])
    return (flat, loop, which, point, *cols, starts, np.r_[starts[1:], len(flat)])


def points_by_storage(fa, lp, env, keep, blocks=False, within=False) -> dict:
    """{id(data Var): [(access, points)]} of the accesses under loop `lp` that
    `keep(access, lp's position in its loops)` accepts and whose points can be read
    (`loop_points`), for storage some of them write; leaving out accesses through an
    address or a `T.match_buffer` view (each block instance's own region, which the view's
    indices do not tell), storage allocated inside the loop (each iteration's own) and,
    unless `blocks`, accesses in a block with iterators inside it (whose iterators declare
    its instances independent: the block rules judge two accesses of one such block,
    `block_owner`, and storage only one such block touches is left out, unless `within`);
    at most LIMIT points in all, shared out from the smallest box up: each access reads its
    whole box where its share holds it, a prefix of it otherwise (`loop_points`)."""
    inside = allocated_inside(fa, lp)
    views = {id(m.buffer) for r in fa.realizes for m in r.block.match_buffers}
    groups = {}
    for a in fa.accesses:
        pos = next((i for i, x in enumerate(a.loops) if x is lp), None)
        if pos is None or a.opaque or id(a.buffer.data) in inside or \
                id(a.buffer) in views or not keep(a, pos):
            continue
        owner = block_owner(a, pos)
        if owner is None or blocks:
            groups.setdefault(id(a.buffer.data), []).append((a, pos, owner))
    todo = []
    for key, group in groups.items():
        owners = {id(o) if o is not None else None for _, _, o in group}
        if not any(a.is_write for a, _, _ in group) or \
                (not within and None not in owners and len(owners) == 1):
            continue
        for a, pos, _ in group:
            box = loop_box(a, pos, env)
            if box is not None:
                todo.append((key, a, pos, box, box_size(box[0])))
    # the budget shared out from the smallest box up: whole boxes where they fit, an equal
    # share of what is left for the others
    limits, budget = {}, LIMIT
    for k, t in enumerate(sorted(range(len(todo)), key=lambda t: todo[t][4])):
        limits[t] = min(todo[t][4], budget // (len(todo) - k))
        budget -= limits[t]
    out = {}
    for t, (key, a, pos, box, _) in enumerate(todo):
        pts = loop_points(a, lp, pos, env, limits[t], box)
        if pts is not None:
            out.setdefault(key, []).append((a, pts))
    return out


def loop_vars(fa, lp) -> set:
    """ids of the variables of loop `lp` and of the loops inside it."""
    return {id(x.var) for x in fa.loops
            if x is lp or any(p is lp for p in fa.loop_parents.get(id(x), ()))}


def written_under(fa, scope) -> set:
    """ids of the data Vars of storage some access under `scope` (a loop's Loop record, or
    a BlockRealize) writes (or passes by address)."""
    return {id(a.buffer.data) for a in fa.accesses
            if (a.is_write or a.opaque) and any(x is scope for x in a.loops + a.blocks)}


def block_owner(a, pos):
    """The outermost block with iterators around access `a` inside the loop at position
    `pos` of its loops (its BlockRealize), or None."""
    return next((r for j, r in enumerate(a.blocks)
                 if r.block.iter_vars and a.block_loops[j] > pos), None)


def invariant_store(a, inner, env, written=frozenset()) -> bool:
    """Whether store `a` writes one value to each element, whichever iteration makes it: no
    call in its value but of a pure function (`E.PURE_CALLS`: `T.exp`, `T.if_then_else`, as
    a padding writes its zeros), no load of storage in `written` (ids of the data Vars the
    loop writes), and each variable in it either determined by an index of the store itself
    (`B[vi] = A[vi] + 1`: one element, one `vi`; `_pinned`), inside a load at the store's
    own indices, or free of the loops `inner` (ids).  Iterations that store it to one
    element by one store then leave that value whatever their order."""
    v = a.value
    if v is None or contains(v, lambda x: (type(x) is E.Call and x.op not in E.PURE_CALLS) or (
            type(x) is E.BufferLoad and id(x.buffer.data) in written)):
        return False
    pinned = _pinned(a)
    # (a load at the store's own indices is a value of the element: `B[i, j % 4] = A[i,
    # j % 4]`)
    v = rebuild(v, lambda x, _: E.IntImm("int32", 0) if type(x) is E.BufferLoad and
                len(x.indices) == len(a.indices) and
                all(structural_equal(p, q) for p, q in zip(x.indices, a.indices)) else None)
    return all(id(x) in pinned or not (vars_through(x, env) & inner) for x in vars_in(v))


def _pinned(a) -> set:
    """ids of the variables that one index of access `a` determines alone: the index is
    the variable times a constant other than 0, plus a constant (`vi`, `vj + 64`)."""
    from ..arith import Analyzer
    an, out = Analyzer(), set()
    for i in a.indices:
        if isinstance(i, E.Var):
            out.add(id(i))
            continue
        aff = an.to_aff(i)
        ((k, c),) = aff.terms.items() if len(aff.terms) == 1 else ((None, 0),)
        if isinstance(k, E.Var) and c:
            out.add(id(k))
    return out


def first_conflict(entries, reads_first=False, owners=None, inner=None, cut=False):
    """The first element two keys touch (values of a loop, or instances of a block), one
    writing, in an order that matters: ((entry, point, key) of the write, the same of the
    other access) or None; the other access a write where there is one, or, with
    `reads_first`, a read where there is one (of a greater key where there is one).
    entries: [(access, points, whether it stores one value to each element)], points as
    `loop_points` gives them (the key for the loop value).  owners: one per entry (None
    for none); two accesses of one owner are no pair.  inner: one per entry, the loops
    inside one key around the access (their values the points' fifth item).  An element
    written by one store of one value (`invariant_store`) is left out where every key that
    reads it wrote it before (`written_before`; without `inner`, where no key reads it):
    whatever the order, each read and the end find that value.  `cut`: some entry's points
    are a part of its own (a read's earlier write may be outside them): every element one
    store of one value writes is left out."""
    got = element_groups(entries, [a.is_write for a, _, _ in entries],
                         [same for _, _, same in entries],
                         owner_codes(owners if owners is not None else [None] * len(entries)),
                         points=[written_before(entries, inner)])
    if got is None:
        return None
    flat, loop, which, point, write, same, own, before, starts, ends = got
    lo = np.minimum.reduceat(loop, starts)
    hi = np.maximum.reduceat(loop, starts)
    wrote = np.logical_or.reduceat(write, starts)
    # (every access of one owner: no pair)
    lo_own = np.minimum.reduceat(own, starts)
    one = (lo_own == np.maximum.reduceat(own, starts)) & (lo_own >= 0)
    bad = wrote & (lo != hi) & ~one
    if bad.any():
        big = np.iinfo(np.int64).max
        writer_lo = np.minimum.reduceat(np.where(write, which, big), starts)
        writer_hi = np.maximum.reduceat(np.where(write, which, -1), starts)
        bad &= ~((writer_lo == writer_hi) & settled(write, same, before, starts, cut))
    for g in np.flatnonzero(bad):
        rows = np.arange(starts[g], ends[g])
        pair = _pair(rows, loop, write, own, reads_first)
        if pair is not None:
            w, o = pair
            return (which[w], point[w], loop[w]), (which[o], point[o], loop[o])
    return None


def settled(write, same, before, starts, cut):
    """Per group of `element_groups` (one element): whether every write of it is a store
    `same` marks and every read comes after its key's own write of it (`before`,
    `written_before`'s, not -1), or, with `cut` (a read's earlier write may lie outside the
    points read), every write is one of `same`."""
    return np.logical_and.reduceat(~write | same, starts) & \
        np.logical_and.reduceat(write | (before >= 0) | cut, starts)


def written_before(entries, inner):
    """Per point of each read entry, the store of one value (its entry) whose write of the
    element, in the same key, comes before the read in execution order: the values of the
    loops both are in, then the statement order; -1 where there is none (or no `inner`)."""
    out = [np.full(len(p[0]), -1, dtype=np.int64) for _, p, _ in entries]
    if inner is None:
        return out
    for k, (w, wp, same) in enumerate(entries):
        if not same:
            continue
        for j, (r, rp, _) in enumerate(entries):
            if r.is_write or not len(rp[0]) or not len(wp[0]):
                continue
            shared = []
            for x, y in zip(inner[k], inner[j]):
                if x is not y:
                    break
                shared.append(id(x))
            stamp_w, stamp_r = _stamps(len(wp[0]), [wp[4][v] for v in shared], w.order,
                                       len(rp[0]), [rp[4][v] for v in shared], r.order)
            where = np.flatnonzero(out[j] < 0)
            if not len(where):
                continue
            hit = _earlier(wp[0], wp[1], stamp_w, rp[0][where], rp[1][where], stamp_r[where])
            out[j][where[hit]] = k
    return out


def _stamps(n_w, w_loops, w_order, n_r, r_loops, r_order):
    """Comparable execution times of a write's and a read's points within one key: the
    shared loops' values in mixed radix, then the statement order (a write stamp is below
    a read stamp exactly when the write comes first)."""
    stamp_w, stamp_r = np.zeros(n_w, dtype=np.int64), np.zeros(n_r, dtype=np.int64)
    for a, b in zip(w_loops, r_loops):
        lo = min(int(a.min()), int(b.min()))
        span = max(int(a.max()), int(b.max())) - lo + 1
        stamp_w, stamp_r = stamp_w * span + (a - lo), stamp_r * span + (b - lo)
    return stamp_w * 2 + (0 if w_order < r_order else 2), stamp_r * 2 + 1


def _earlier(w_flat, w_key, w_stamp, r_flat, r_key, r_stamp):
    """For each read point, whether a write point of the same element and key has a
    smaller stamp."""
    lo = min(int(w_key.min()), int(r_key.min()))
    span = max(int(w_key.max()), int(r_key.max())) - lo + 1
    w_at, r_at = w_flat * span + (w_key - lo), r_flat * span + (r_key - lo)
    order = np.lexsort((w_stamp, w_at))
    w_at, w_stamp = w_at[order], w_stamp[order]
    first = np.r_[True, w_at[1:] != w_at[:-1]]
    w_at, w_stamp = w_at[first], w_stamp[first]      # the earliest write per element and key
    at = np.minimum(np.searchsorted(w_at, r_at), len(w_at) - 1)
    return (w_at[at] == r_at) & (w_stamp[at] < r_stamp)


def owner_codes(owners) -> list:
    """Owners (one per entry, None for none) as ints: one per owner from 0, and for an
    entry of none its own negative code (its accesses pair with any other)."""
    ids = {}
    return [-1 - k if o is None else ids.setdefault(id(o), len(ids))
            for k, o in enumerate(owners)]


def _pair(rows, loop, write, own, reads_first):
    """(write row, other row) of a group that may be a pair: other keys, not one owner."""
    def ok(w, others):
        return (loop[others] != loop[w]) & ((own[w] < 0) | (own[others] != own[w]))
    writes = rows[write[rows]]
    if reads_first:         # (a read after the write where there is one)
        back = None
        for o in rows[~write[rows]]:
            m = ok(o, writes)
            if m.any():
                later = m & (loop[writes] < loop[o])
                if later.any():
                    return writes[later][0], o
                back = back or (writes[m][0], o)
        if back is not None:
            return back
    for w in writes:
        m = ok(w, rows)
        if m.any():
            cand = rows[m]
            return w, next((r for r in cand if write[r]), cand[0])
    return None
