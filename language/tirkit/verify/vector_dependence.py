"""loop-nest/vector-dependence: lanes of a vectorized loop that depend on each other.

TVM runs a vectorized loop's body one statement at a time for all its lanes, each
statement's loads before its store; the loop it stands for runs the lanes one after another.
Where two lanes touch one element, one writing, in an order the vector form reverses, the
two give different results: `A[i + 1] = A[i] + 1` under `T.vectorized` reads every `A[i]`
before it stores, so lane 1 reads the old `A[1]`, where the serial loop reads the one lane 0
wrote.  TVM compiles it without a word, and its result is not the loop's (nor the one
`tirkit run --check`'s interpreter, which runs the loop as written, computes).

The order is reversed for lanes i < j when j's access comes first in the vector order: a
load of lane j in the statement whose store lane i makes (or an earlier statement), a store
of lane j in an earlier statement than lane i's access.  Found with a witness, as
`loop-nest/parallel-race` finds one (verify/_iterations.py): accesses right under the
vectorized loop (none in a loop inside it; two accesses of one block with iterators are the
block rules', `signature/iter-type`, while two blocks' are read), storage
allocated outside it (TVM widens one allocated inside to a vector per lane), in a loop
that holds no `while` (TVM's vectorizer refuses one).  Reported on the later access of the
serial order, with the loop and the other access related; its quick fix makes the loop
serial (verify/fixes.py)."""
from __future__ import annotations

import numpy as np

from ..diagnostics import error
from ..ir import stmt as S
from ..ir.visit import contains
from . import register
from ._common import const_int, full_env, func_accesses
from ._iterations import (block_owner, element_groups, element_text, loop_at,
                          owner_codes, points_by_storage)

CODE = "loop-nest/vector-dependence"


def _reversed(entries, owners):
    """The first pair of lanes i < j touching one element, one writing, whose accesses the
    vector order runs in the other order, not both of one owner: ((entry, point, lane) of
    lane i's access, the same of lane j's) or None.  entries: [(access, points)]; owners:
    one per entry (None for none)."""
    got = element_groups(entries, [_key(a) for a, _ in entries], owner_codes(owners))
    if got is None:
        return None
    _, lane, which, point, key, own, starts, ends = got

    def latest(best, q):
        """Of the rows in `best` ({owner: row}), the latest in the vector order that may
        pair with row q (not of q's owner)."""
        rows = [p for c, p in best.items() if c < 0 or c != own[q]]
        return max(rows, key=lambda p: key[p], default=None)
    for g in np.flatnonzero(np.minimum.reduceat(lane, starts) !=
                            np.maximum.reduceat(lane, starts)):
        # lanes in increasing order: per owner, the latest access of the lanes before, and
        # the latest write
        top, top_write = {}, {}
        r = starts[g]
        while r < ends[g]:
            nxt = r
            while nxt < ends[g] and lane[nxt] == lane[r]:
                nxt += 1
            for q in range(r, nxt):
                p = latest(top if key[q] % 2 else top_write, q)
                if p is not None and key[p] > key[q]:
                    return (which[p], point[p], lane[p]), (which[q], point[q], lane[q])
            for q in range(r, nxt):
                for best, keep in ((top, True), (top_write, key[q] % 2)):
                    if keep and (own[q] not in best or key[q] > key[best[own[q]]]):
                        best[own[q]] = q
            r = nxt
    return None


def _key(a) -> int:
    """Where an access comes in the vector order of one lane: its statement, loads first
    (odd: a store)."""
    return 2 * a.order + int(a.is_write)


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
    # (right under the loop: the order of one in a loop inside it is not read)
    by_data = points_by_storage(fa, lp, env, lambda a, pos: pos == len(a.loops) - 1,
                                blocks=True, within=within)
    for entries in by_data.values():
        found = _reversed(entries, [None if within else block_owner(a, len(a.loops) - 1)
                                    for a, _ in entries])
        if found is not None:
            return _report(lp, entries, *found)
    return None


def _report(lp, entries, first, second):
    (ai, pi), (aj, pj) = [(entries[w][0], entries[w][1]) for w, _, _ in (first, second)]
    li, lj = first[2], second[2]
    name, v = element_text(ai, pi, first[1]), f"`{lp.var.name}`"
    if ai.is_write and not aj.is_write:
        msg = (f"lane {v} = {lj} reads {name} before lane {v} = {li} writes it: the "
               "vectorized loop makes every lane's loads of a statement before its store, so "
               "the lane reads the old value, where the loop it stands for reads the new one")
        at, other = aj, (ai, f"lane {v} = {li} writes {name} here")
    elif aj.is_write and not ai.is_write:
        msg = (f"lane {v} = {li} reads {name} after lane {v} = {lj} writes it: the "
               "vectorized loop runs a statement for every lane before the next one, so the "
               "lane reads the new value, where the loop it stands for reads the old one")
        at, other = ai, (aj, f"lane {v} = {lj} writes {name} here")
    else:
        msg = (f"lanes {v} = {li} and {v} = {lj} both write {name}, the vectorized loop in "
               f"the other order: it leaves lane {li}'s value, where the loop it stands for "
               f"leaves lane {lj}'s")
        at, other = aj, (ai, f"lane {v} = {li} writes {name} here")
    related = [(lp.span, f"loop {v} is vectorized here")] if lp.span else []
    if other[0].span is not None and other[0].span != at.span:
        related.append((other[0].span, other[1]))
    return error(CODE, msg, at.span or lp.span, related)
