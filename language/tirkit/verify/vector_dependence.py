"""loop-nest/vector-dependence: lanes of a vectorized loop that depend on each other.

TVM runs a vectorized loop's body one statement at a time for all its lanes, each
statement's loads before its store, and a loop inside it outside the lanes (at each of its
iterations, each statement for all lanes); the loop it stands for runs the lanes one after
another.  Where two lanes touch one element, one writing, in an order the vector form
reverses, the two give different results: `A[i + 1] = A[i] + 1` under `T.vectorized` reads
every `A[i]` before it stores, so lane 1 reads the old `A[1]`, where the serial loop reads
the one lane 0 wrote.  TVM compiles it without a word, and its result is not the loop's (nor
the one `tirkit run --check`'s interpreter, which runs the loop as written, computes).

The vector order of an access is its schedule vector: the loops inside the vectorized one
around it (where each starts, its value), then its statement, loads first.  The order is
reversed for lanes i < j when j's access comes first in it: a load of lane j in the
statement whose store lane i makes (or earlier), a store of lane j earlier than lane i's
access.  Found with a witness, as `loop-nest/parallel-race` finds one
(verify/_iterations.py), over storage allocated outside the loop (TVM widens one allocated
inside to a vector per lane), in a loop that holds no `while` (TVM's vectorizer refuses
one); not read: accesses in a loop inside whose bounds move with the lane (TVM runs it lane
by lane, in the loop's order).  Two accesses of one block with iterators are the block
rules' (`signature/iter-type`), two blocks' are read.  An element of storage that every
store of it stores alike in all lanes (indices, guards and value free of the lane, loads
only of storage the loop does not write or writes only so, none in a loop whose bounds
move with the lane: `T0[0] = A[0] * 2`, a reduction computed again in each lane from its
own init, softmax's sum from its maximum), or that one store writes with one value to
each element whichever lane makes it (`T_add[i // 2] = x[i // 2] + 1`, a producer
compute_at recomputes in each lane; as `loop-nest/parallel-race` reads it) is not reported
where each lane reads it after its own write: the lanes store the values the loop's lanes
store, and each reads the one the loop's lane reads.  Reported on the later access of the
serial order, with the loop and the other access related; its quick fix makes the loop
serial (verify/fixes.py)."""
from __future__ import annotations

import numpy as np

from ..diagnostics import error
from ..ir import expr as E
from ..ir import stmt as S
from ..ir.visit import contains
from . import register
from ._common import const_int, full_env, func_accesses, vars_through
from ._iterations import (block_owner, element_groups, element_text, invariant_store,
                          loop_at, loop_vars, owner_codes, points_by_storage, settled,
                          written_before, written_under)

CODE = "loop-nest/vector-dependence"


def _reversed(groups, meet, same, one, own, key, before, cut):
    """The first pair of lanes i < j touching one element, one writing, whose accesses the
    vector order runs in the other order, not both of one owner and not of an element
    whose value the order leaves as it is: ((entry, point, lane) of lane i's access, the
    same of lane j's) or None.  groups: `element_groups`' of the entries with their writes
    (flat, lane, entry, point, write, starts, ends); meet: per group, whether two lanes
    touch it, one writing.  Per row: same, one: whether its entry stores alike in every
    lane (`_alike`), one value to each element whichever lane makes it
    (`invariant_store`); own: its entry's owner (`owner_codes`); key: its place in the
    vector order (`_vector_keys`); before: `written_before`'s (either kind of store).  cut:
    some entry's points are a part of its own.  An element is left as it is where every
    read of it comes after its lane's own write (`settled`) and its stores all store
    alike, or are one store of one value."""
    _, lane, which, point, write, starts, ends = groups
    writer_lo = np.minimum.reduceat(np.where(write, which, which.max() + 1), starts)
    one_store = (writer_lo == np.maximum.reduceat(np.where(write, which, -1), starts)) & \
        np.logical_and.reduceat(~write | one, starts)
    bad = meet & ~(settled(write, same | one, before, starts, cut) &
                   (np.logical_and.reduceat(~write | same, starts) | one_store))

    def latest(best, q):
        """Of the rows in `best` ({owner: row}), the latest in the vector order that may
        pair with row q (not of q's owner)."""
        rows = [p for c, p in best.items() if c < 0 or c != own[q]]
        return max(rows, key=lambda p: key[p], default=None)
    for g in np.flatnonzero(bad):
        # lanes in increasing order: per owner, the latest access of the lanes before, and
        # the latest write
        top, top_write = {}, {}
        r = starts[g]
        while r < ends[g]:
            nxt = r
            while nxt < ends[g] and lane[nxt] == lane[r]:
                nxt += 1
            for q in range(r, nxt):
                p = latest(top if write[q] else top_write, q)
                if p is not None and key[p] > key[q]:
                    return (which[p], point[p], lane[p]), (which[q], point[q], lane[q])
            for q in range(r, nxt):
                for best, keep in ((top, True), (top_write, write[q])):
                    if keep and (own[q] not in best or key[q] > key[best[own[q]]]):
                        best[own[q]] = q
            r = nxt
    return None


def _by_row(per_entry, which, point):
    """Values given per point of each entry (one array per entry), in the rows of
    `element_groups` (each row's entry and point)."""
    starts = np.cumsum([0] + [len(x) for x in per_entry[:-1]])
    return np.concatenate(per_entry)[starts[which] + point]


def _vector_keys(entries, inner, first):
    """Per entry, each point's place in the vector order as a number, equal for the lanes
    of one access at one iteration of the loops inside: the schedule vector (where each
    loop inside starts, its value; ...; the statement, loads first) in lexicographic
    order.  inner: per entry, the loops inside the vectorized one around it; first: {id(Loop):
    the first statement order in it}."""
    width = 2 * max(len(x) for x in inner) + 1
    rows = []
    for (a, pts), loops in zip(entries, inner):
        m = np.full((len(pts[0]), width), -1, dtype=np.int64)
        for d, x in enumerate(loops):
            m[:, 2 * d] = 2 * first[id(x)]
            m[:, 2 * d + 1] = pts[4][id(x)]
        m[:, 2 * len(loops)] = 2 * a.order + int(a.is_write)
        rows.append(m)
    every = np.concatenate(rows)
    # (the vector as one number in mixed radix, the columns' order kept; the number so far
    # ranked again, keeping its order, where the next column would overflow it)
    keys, bound = np.zeros(len(every), dtype=np.int64), 1
    for column in every.T:
        lo, n = column.min(), int(column.max() - column.min()) + 1
        if bound * n >= 1 << 62:
            keys = np.unique(keys, return_inverse=True)[1].astype(np.int64).reshape(-1)
            bound = int(keys.max()) + 1
        keys, bound = keys * n + (column - lo), bound * n
    return np.split(keys, np.cumsum([len(m) for m in rows])[:-1])


def _alike(fa, lp, lane, env, moved) -> set:
    """ids of the data Vars of the storage that loop `lp` (its variable's id `lane`)
    writes only by stores that store alike in every lane (`_uniform`), each reading only
    such storage or storage the loop does not write: the largest such set, found by
    dropping storage until none is left to drop.  `moved`: storage a store in a loop
    whose bounds move with the lane writes (run a number of times of each lane's own, it
    stores alike in none)."""
    stores = [a for a in fa.accesses
              if (a.is_write or a.opaque) and any(x is lp for x in a.loops)]
    alike = {id(a.buffer.data) for a in stores}
    moving = moved | {id(a.buffer.data) for a in stores if a.opaque}
    while True:
        drop = {id(a.buffer.data) for a in stores if id(a.buffer.data) in moving or
                not _uniform(a, lane, env, moving)} & alike
        if not drop:
            return alike
        alike -= drop
        moving |= drop


def _moves(a, lp, lane, env) -> bool:
    """Whether access `a` is in a loop inside `lp` whose bounds move with the lane (the
    variable's id `lane`), a loop TVM runs lane by lane."""
    inner = a.loops[next(k for k, x in enumerate(a.loops) if x is lp) + 1:]
    return any(lane in vars_through(x.min, env) | vars_through(x.extent, env) for x in inner)


def _uniform(a, lane, env, moving) -> bool:
    """Whether store `a` stores alike in every lane of the vectorized loop whose variable's
    id is `lane`: its indices, guards and value free of the lane (through block iterators'
    bindings and lets), no call in the value but of a pure function, and no load of storage
    in `moving` (ids of the data Vars of storage the loop writes that may hold other values
    in other lanes).  Run in step, the lanes then store the same values to one element at
    the same statements, as long as each reads it after its own write (`settled`)."""
    if not a.is_write or a.value is None or contains(
            a.value, lambda x: (type(x) is E.Call and x.op not in E.PURE_CALLS) or (
                type(x) is E.BufferLoad and id(x.buffer.data) in moving)):
        return False
    return not any(lane in vars_through(e, env)
                   for e in (a.value, *a.indices, *(c for c, _ in a.conds)))


@register(CODE, fast=True)
def check_vector_dependence(func, ctx):
    if ctx.incomplete(func):
        return []
    fa = func_accesses(func, ctx)
    env = full_env(fa)
    out = []
    for lp in fa.loops:
        if lp.kind == "vectorized":
            found = _dependence(fa, lp, env)
            if found is not None:
                out.append(found)
    return out


def lane_conflict(func, node):
    """The error of two lanes of loop `node` (a For of `func`, made vectorized) whose
    accesses to one element the vector form reverses, two accesses of one block with
    iterators included: what the `vectorize` schedule primitive refuses; None."""
    fa, lp = loop_at(func, node)
    return _dependence(fa, lp, full_env(fa), within=True) if lp is not None else None


def _dependence(fa, lp, env, within=False):
    """The first pair of lanes of vectorized loop `lp` in reversed order, or None; `within`:
    two accesses of one block with iterators count too."""
    n = const_int(lp.extent)
    if n is None or n < 2 or contains(lp.node.body, lambda x: True, S.While):
        return None             # (TVM's vectorizer refuses a `while` inside)
    lane = id(lp.var)

    def keep(a, pos):
        # (TVM runs a loop inside whose bounds move with the lane lane by lane)
        return not _moves(a, lp, lane, env)
    by_data = points_by_storage(fa, lp, env, keep, blocks=True, within=within)
    # (storage a store in such a loop writes: the one store read may not be the only one,
    # and none stores alike)
    moved = {id(a.buffer.data) for a in fa.accesses if a.is_write and
             any(x is lp for x in a.loops) and _moves(a, lp, lane, env)}
    alike = _alike(fa, lp, lane, env, moved)
    written = written_under(fa, lp)
    loops = loop_vars(fa, lp)
    first = {}
    for a in fa.accesses:
        for x in a.loops:
            first[id(x)] = min(first.get(id(x), a.order), a.order)
    for entries in by_data.values():
        groups = element_groups(entries, [a.is_write for a, _ in entries])
        if groups is None:
            continue            # (no point: a guard that holds nowhere)
        _, lane_of, which, point, write, starts, _ = groups
        meet = np.logical_or.reduceat(write, starts) & \
            (np.minimum.reduceat(lane_of, starts) != np.maximum.reduceat(lane_of, starts))
        if not meet.any():
            continue            # (the order is read only where two lanes meet)
        inner = [a.loops[a.loops.index(lp) + 1:] for a, _ in entries]
        same = [a.is_write and id(a.buffer.data) in alike for a, _ in entries]
        one = [a.is_write and id(a.buffer.data) not in moved and
               invariant_store(a, loops, env, written) for a, _ in entries]
        owners = owner_codes([None if within else block_owner(a, a.loops.index(lp))
                              for a, _ in entries])
        before = written_before([(a, pts, x or y) for (a, pts), x, y in
                                 zip(entries, same, one)], inner)
        found = _reversed(groups, meet, np.asarray(same)[which], np.asarray(one)[which],
                          np.asarray(owners)[which],
                          _by_row(_vector_keys(entries, inner, first), which, point),
                          _by_row(before, which, point), any(pts[5] for _, pts in entries))
        if found is not None:
            return _report(lp, entries, inner, *found)
    return None


def _report(lp, entries, inner, first, second):
    (ai, pi), (aj, pj) = [(entries[w][0], entries[w][1]) for w, _, _ in (first, second)]
    li, lj = first[2], second[2]
    at_i, at_j = (_iteration(inner[w], entries[w][1], p) for w, p, _ in (first, second))
    name, v = element_text(ai, pi, first[1]), f"`{lp.var.name}`"
    runs = "runs a statement for every lane before the next one"
    if any(inner[w] for w, _, _ in (first, second)):
        loops = ", ".join(f"`{x.var.name}`" for x in inner[first[0]] or inner[second[0]])
        runs = (f"runs each statement, at each iteration of the loops inside it ({loops}), "
                "for every lane before the next one")
    if ai.is_write and not aj.is_write:
        how = ("makes every lane's loads of a statement before its store"
               if ai.order == aj.order and at_i == at_j else runs)
        msg = (f"lane {v} = {lj} reads {name}{at_j} before lane {v} = {li} writes it{at_i}: "
               f"the vectorized loop {how}, so the lane reads the old value, where the loop "
               "it stands for reads the new one")
        at, other = aj, (ai, f"lane {v} = {li} writes {name} here")
    elif aj.is_write and not ai.is_write:
        msg = (f"lane {v} = {li} reads {name}{at_i} after lane {v} = {lj} writes it{at_j}: "
               f"the vectorized loop {runs}, so the lane reads the new value, where the loop "
               "it stands for reads the old one")
        at, other = ai, (aj, f"lane {v} = {lj} writes {name} here")
    else:
        msg = (f"lanes {v} = {li}{at_i} and {v} = {lj}{at_j} both write {name}, the "
               f"vectorized loop in the other order: it leaves lane {li}'s value, where the "
               f"loop it stands for leaves lane {lj}'s")
        at, other = aj, (ai, f"lane {v} = {li} writes {name} here")
    related = [(lp.span, f"loop {v} is vectorized here")] if lp.span else []
    if other[0].span is not None and other[0].span != at.span:
        related.append((other[0].span, other[1]))
    return error(CODE, msg, at.span or lp.span, related)


def _iteration(loops, pts, p) -> str:
    """How a message names the iteration of the loops inside the vectorized one at point
    `p` of an access's points: " at `k` = 3", or nothing."""
    if not loops:
        return ""
    return " at " + ", ".join(f"`{x.var.name}` = {int(pts[4][id(x)][p])}" for x in loops)
