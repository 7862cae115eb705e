"""signature/iter-type on instances that depend on each other: two instances of a block that
differ in a spatial iterator touch one element, at least one of them writing.

A spatial iterator declares its block's instances independent: any order, or all at once,
gives the same result, and schedule primitives (`parallel`, `vectorize`, `reorder`) rely on
it.  `A[vi + 1] = A[vi] + B[vi]` under `vi = T.axis.spatial(15, i)` breaks that: instance
`vi` = 1 reads the element instance 0 writes.  TVM compiles the block in loop order, and its
schedule primitives refuse it later ("does not have compact dataflow": it reads what it
writes and is no reduction).  An iterator whose instances must run in order is a scan
(`T.axis.scan`), which TVM keeps in order.

- error, when one instance reads an element another writes (before or after it);
- warning, when two instances write one element and none reads it (`B[vi // 2] = A[vi]`):
  the last one wins; TVM takes such a block for a complete one, and a schedule that runs
  `vi` in parallel makes the instances overwrite each other's value.

Only what is certain is reported: a witness, two instances and the element they share,
found by evaluating the bindings, the indices and the guards at each point of the loops that
run the block's instances (arith/enumerate.py; the loops must be constants).  The loops
outside the block around it are taken at their first value (its instances are its own),
and so are loops bound to blockIdx (each thread block has its own shared memory).  Beyond
4,096 instances a prefix of each loop is read: a witness found there holds for the whole.
The instances of a pair must agree in the block's ordered iterators (scan, opaque): those
run in order; reduction iterators may differ.  Read as `signature/iter-type` reads stores:
accesses of the block's own body to parameters and global or shared buffers allocated
outside it, not `T.match_buffer` views; instances that each store one value (no load, no
call, no iterator in it) to one element by one store leave that value whatever their order.
A block that `signature/iter-type` already reports for a store its spatial iterator does not
index is left to that report.  Not read: vector accesses, accesses through an address.
Reported on the first spatial iterator in which the two instances differ, the two accesses
related; its quick fix declares that iterator `T.axis.scan` where the source declares it
alone (verify/fixes.py)."""
from __future__ import annotations

import numpy as np

from ..arith.enumerate import LIMIT, box_values
from ..diagnostics import error, warning
from . import register
from ._common import block_label, const_int, full_env, func_accesses
from ._iterations import (box_size, cut_box, element_text, first_conflict, invariant_store,
                          touched, written_under)
from .iter_type import CODE, block_accesses, shared_outside, unindexed_in

BLOCK_LIMIT = 1 << 12       # instances read per block: a prefix of each loop beyond it


def instance_box(fa, r, limit=BLOCK_LIMIT):
    """({Var: (min, extent)}, whether it was cut): the loops that run block r's instances,
    each cut to a prefix where the box would hold more than `limit` points; those outside
    the block around r and those bound to blockIdx at their first value.  None where a
    loop is not constant (a loop outside at its first value needs only a constant start)
    or runs nothing."""
    parents = fa.blocks_of[id(r)]
    start = len(fa.loops_of[id(parents[-1])]) if parents else 0
    ranges = {}
    for k, lp in enumerate(fa.loops_of[id(r)]):
        lo, n = const_int(lp.min), const_int(lp.extent)
        fixed = k < start or (lp.thread_tag or "").startswith("blockIdx")
        if lo is None or (n is not None and n < 1) or (n is None and not fixed):
            return None
        ranges[lp.var] = [lo, 1 if fixed else n]
    cut = box_size(ranges) > limit
    if not cut_box(ranges, limit, lambda v: 2):
        return None
    return {v: tuple(x) for v, x in ranges.items()}, cut


def _ids(arrays, shape):
    """Ids of the tuples of the arrays' values at each point of the box, equal where the
    tuples are (all 0 for no array): mixed-radix numbers over the values' spans."""
    key, radix = np.zeros(shape, dtype=np.int64), 1
    for a in arrays:
        lo, hi = int(a.min()), int(a.max())
        radix *= hi - lo + 1
        if radix >= 1 << 62:
            rows = np.stack([np.broadcast_to(x, shape).ravel() for x in arrays], axis=1)
            return np.unique(rows, axis=0, return_inverse=True)[1].reshape(shape)
        key = key * (hi - lo + 1) + (a - lo)
    return key


def _points(a, ranges, env, ordered, spatial, iters, limit):
    """What access `a` touches at each instance where it touches one (`touched`): (element
    keys, the instance's spatial key, [index arrays], points read, [iterator value
    arrays]), an element key telling the element and the instance's ordered iterators
    apart; None where the access cannot be read."""
    got = touched(a, ranges, env, limit)
    if got is None:
        return None
    flat, mask, idx = got
    key = flat * (int(ordered.max()) + 1) + ordered
    return key[mask], spatial[mask], [x[mask] for x in idx], mask.size, \
        [v[mask] for v in iters]


def _in_question(b, accesses) -> list:
    """The accesses to storage the block writes whose elements do not tell its spatial
    instances apart at a glance: every access to it through one buffer, and at one
    dimension each spatial iterator as the index itself (`C[vi, vj]` beside `C[vi, vj]` or
    `C[vi, vj + 1]`: one element, one value of `vi` and `vj`), is left out."""
    spatial = {id(iv.var) for iv in b.iter_vars if iv.kind == "S"}
    by_data = {}
    for a in accesses:
        by_data.setdefault(id(a.buffer.data), []).append(a)
    out = []
    for group in by_data.values():
        if not any(a.is_write for a in group):
            continue
        pinned = None               # {(dimension, id(iterator))} in every access
        for a in group:
            here = {(d, id(i)) for d, i in enumerate(a.indices) if id(i) in spatial}
            pinned = here if pinned is None else pinned & here
        if len({id(a.buffer) for a in group}) > 1 or {v for _, v in pinned} != spatial:
            out.extend(group)
    return out


@register("signature/instances", codes=(CODE,), fast=True)
def check_instance_dependence(func, ctx):
    if ctx.incomplete(func):
        return []
    fa = func_accesses(func, ctx)
    by_block, _ = block_accesses(fa)
    shared = shared_outside(fa)
    env = full_env(fa)
    out, budget = [], LIMIT
    for r in fa.realizes:
        b = r.block
        if not any(iv.kind == "S" for iv in b.iter_vars):
            continue
        kept = [a for a in by_block.get(id(r), ()) if shared(a, r)]
        here = _in_question(b, kept)
        if not here or unindexed_in(fa, r, [a for a in kept if a.is_write]):
            continue            # (iter_type's report on a store the iterator misses)
        ranges, cut = instance_box(fa, r, min(BLOCK_LIMIT, budget)) or (None, False)
        iters = box_values(list(r.iter_values), ranges, env) if ranges else None
        if iters is None:
            continue
        budget -= iters[0].size if iters else 1
        shape = iters[0].shape if iters else ()
        kinds = [iv.kind for iv in b.iter_vars]
        spatial = _ids([v for v, k in zip(iters, kinds) if k == "S"], shape)
        ordered = _ids([v for v, k in zip(iters, kinds) if k not in ("S", "R")], shape)
        inner = {id(v) for v in ranges} | {id(iv.var) for iv in b.iter_vars}
        written = written_under(fa, r)
        by_data = {}
        for a in here:
            pts = _points(a, ranges, env, ordered, spatial, iters, LIMIT)
            if pts is not None:
                same = a.is_write and invariant_store(a, inner, env, written)
                by_data.setdefault(id(a.buffer.data), []).append((a, pts, same))
        for entries in by_data.values():
            found = first_conflict(entries, reads_first=True, cut=cut)
            if found is not None:
                out.append(_report(b, entries, *found))
                break
    return out


def _report(b, entries, w, o):
    (wa, wp, _), (oa, op, _) = entries[w[0]], entries[o[0]]
    values = [[int(x[p]) for x in pts[4]] for pts, p in ((wp, w[1]), (op, o[1]))]
    differ = [k for k, iv in enumerate(b.iter_vars)
              if iv.kind == "S" and values[0][k] != values[1][k]]
    names = [f"`{b.iter_vars[k].var.name}`" for k in differ]

    def who(vals):
        if len(differ) == 1:
            return f"{names[0]} = {vals[differ[0]]}"
        return f"({', '.join(names)}) = ({', '.join(str(vals[k]) for k in differ)})"
    first = names[0]
    scan = f"declare {first} with T.axis.scan if the order matters"
    wrote = element_text(wa, wp, w[1])
    related = [(wa.span, f"{who(values[0])} writes {wrote} here"),
               (oa.span, f"{who(values[1])} {'writes' if oa.is_write else 'reads'} "
                         f"{element_text(oa, op, o[1])} here")]
    related = [(s, m) for s, m in related if s is not None]
    at = b.iter_vars[differ[0]].span or wa.span
    if oa.is_write:
        return warning(CODE, f"{block_label(b)}: instances {who(values[0])} and "
                       f"{who(values[1])} of spatial iterator{'s' * (len(names) > 1)} "
                       f"{_and(names)} both write {wrote}: the last one wins, and a schedule "
                       f"that runs {first} in parallel makes them overwrite each other's "
                       f"value; {scan}", at, related)
    refused = ", and TVM's schedule primitives refuse the block (it lacks compact " \
        "dataflow)" if b.init is None and oa.buffer is wa.buffer else ""
    return error(CODE, f"{block_label(b)}: the instances of spatial "
                 f"iterator{'s' * (len(names) > 1)} {_and(names)} depend on each other: "
                 f"{who(values[1])} reads {element_text(oa, op, o[1])}, which {who(values[0])} "
                 f"writes; a spatial iterator declares its instances independent (any "
                 f"order, or all at once){refused}; {scan}", at, related)


def _and(names):
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
