"""bounds/out-of-bounds: a load, a store or a `T.match_buffer` region that provably leaves
its buffer.

Each access is read in the iterators of its enclosing blocks (their declared domains) and
the loops inside the innermost of them, under the guards that enclose it (`T.where`, `if`,
`T.if_then_else`).  Only what is certain is reported: the index's extreme value over those
ranges must fall outside the dimension, and no guard the analysis cannot read may mention
the index's variables.

An index the interval arithmetic cannot bound exactly (a remainder, a bitwise operator: a
swizzled layout) is taken at every point of its loops' values instead, where those are
constant and few and no guard mentions its variables (arith/enumerate.py).

A vector access under a vector condition (`T.if_then_else(T.Ramp(b, 1, 4) < T.Broadcast(n, 4),
A[T.Ramp(b, 1, 4)], ...)`, as TVM masks a vectorized tail) is read lane by lane: each lane
accesses only where its own lane of the condition holds.

A buffer declared over storage it does not own (`T.decl_buffer(..., data=X.data)`, as TVM's
merged shared-memory pools and flattened views write it) is checked against that storage:
a 1-d view may use every element the owner's bytes hold; a multi-d view is not checked.  A
view over a bare pointer parameter (`data: T.handle("float32")`) has no known size: TVM uses
a nominal shape such as `(1,)` there, so it is not checked either.
"""
from __future__ import annotations

import dataclasses

from ..analysis.accesses import Loop
from ..analysis.regions import analyzer_for, index_range
from ..arith.enumerate import value_range
from ..diagnostics import error
from ..ir import expr as E
from ..ir.dtype import bytes_of, lanes_of
from ..ir.visit import lane_of
from . import register
from ._common import (const_size, constant_box, exact_aff, full_env, func_accesses,
                      loose_vars, storage_owners, text, vars_through)

def out_of_bounds_spans(func, ctx):
    """(line, column) of the accesses this rule reports (rules that would report the same
    access for another reason stay quiet there: one root cause, one diagnostic)."""
    return {(d.span.line, d.span.column) for d in check_bounds(func, ctx) if d.span}


@register("bounds", codes=("bounds/out-of-bounds",), fast=True)
def check_bounds(func, ctx):
    key = ("bounds", id(func))
    if key not in ctx.cache:
        ctx.cache[key] = _check_bounds(func, ctx)
    return list(ctx.cache[key])


def _check_bounds(func, ctx):
    fa = func_accesses(func, ctx)
    out = []
    seen = set()
    owners = storage_owners(func, ctx)
    params = set(func.params)
    views = {}
    matched = set(fa.matched)
    for a in fa.accesses + fa.matched:
        if a.opaque or a.span is None or not a.indices:
            continue
        buf = a.buffer
        if len(a.indices) != len(buf.shape):
            continue
        if id(buf) not in views:
            views[id(buf)] = _view_shape(buf, owners, params)
        shape = views[id(buf)]
        if shape is None:
            continue
        lanes = _per_lane(a)
        if lanes is None:
            continue
        written, a = a, lanes
        x = len(a.blocks) - 1
        while x > 0 and not a.blocks[x].block.iter_vars:
            x -= 1
        if x >= 0 and a.blocks and a.blocks[x].block.iter_vars:
            # every enclosing block's iterators over their declared domains
            ivs = [iv for r in a.blocks[:x + 1] for iv in r.block.iter_vars]
            own = {iv.var for iv in ivs}
            env = {v: b for v, b in fa.env.items() if v not in own}
            env.update(fa.lets)
            an = _sized(analyzer_for(fa, a, env=env, from_loop=a.block_loops[x],
                                     from_block=x, iter_ranges=ivs), ctx)
            conds = [c for c, d in a.conds if d > x]
        else:
            env = dict(fa.env)
            env.update(fa.lets)
            an = _sized(analyzer_for(fa, a, env=env), ctx)
            conds = [c for c, _ in a.conds]
        cond_vars = set()
        for c in conds:
            if not _readable_cond(c, an, env):
                cond_vars.update(vars_through(c, env))
        full = None
        loose = None
        for d, idx in enumerate(a.indices):
            if _row_major_vector(written.indices, d, shape):
                continue
            base = idx.base if isinstance(idx, E.Ramp) else idx
            aff = an.to_aff(base, env)
            if not exact_aff(aff):
                bad = _enumerated(fa, a, idx, shape[d])
                if bad is not None:
                    _report(out, seen, a, written, matched, buf, shape, d, bad)
                continue
            if any(id(v) in cond_vars for v in aff.all_vars()):
                continue
            if loose is None:
                loose = loose_vars(a.loops)
            if loose and loose & _loopvars_through(an.to_aff(base, full_env(fa))):
                continue
            dim = an.to_aff(shape[d])
            rng = index_range(an, idx, env)
            bad = _outside(an, rng, dim)
            if bad is None:
                continue
            # and in the loops themselves (bindings substituted, T.where respected)
            if full is None:
                fenv = dict(fa.env)
                fenv.update(fa.lets)
                full = (_sized(analyzer_for(fa, a, env=fenv), ctx), fenv)
            fan, fenv = full
            if _outside(fan, index_range(fan, idx, fenv), dim) is None:
                continue
            _report(out, seen, a, written, matched, buf, shape, d, bad)
    return out


def _report(out, seen, a, written, matched, buf, shape, d, bad):
    key = (a.span, d)
    if key in seen:
        return
    seen.add(key)
    idx = written.indices[d]
    if written in matched:
        what = f"`T.match_buffer` views `{buf.name}` out of bounds: the region's " \
               f"dimension {d}"
    else:
        what = f"{'writes' if a.is_write else 'reads'} `{buf.name}` out of bounds: " \
               f"index `{text(idx)}` of dimension {d}"
    out.append(error(
        "bounds/out-of-bounds",
        f"{what} {bad}, but the dimension has extent {text(shape[d])}"
        f"{'' if shape is buf.shape else ' (elements of its storage)'}",
        a.span))


def _enumerated(fa, a, idx, dim):
    """How an index the interval arithmetic cannot bound exactly (a remainder, a bitwise
    operator) leaves its dimension, taken at every point of its loops' values
    (arith/enumerate.py), or None: where the loops are not constant and few, a guard
    mentions its variables, or it stays inside."""
    if isinstance(idx, E.Ramp) or not isinstance(dim, E.IntImm):
        return None
    env = full_env(fa)
    used = vars_through(idx, env)
    if any(used & vars_through(c, env) for c, _ in a.conds):
        return None
    got = value_range(idx, constant_box(a.loops), env)
    if got is None or (got[0] >= 0 and got[1] < dim.value):
        return None
    return f"ranges over [{got[0]}, {got[1]}]"


def _per_lane(a):
    """`a` itself, or, under a vector condition, one lane of it: its vector indices and
    conditions written for a lane variable that a vectorized loop over the lanes binds.  A
    scalar access under a vector condition is made when some lane holds, so the lane
    variable is free in its conditions (and a guard that mentions it is not readable).
    None where the lanes cannot be read alone."""
    vector = [c for c, _ in a.conds if lanes_of(c.dtype) > 1]
    if not vector:
        return a
    n = lanes_of(vector[0].dtype)
    if any(lanes_of(c.dtype) != n for c in vector) or \
            any(lanes_of(i.dtype) not in (1, n) for i in a.indices):
        return None
    lane = E.Var("lane", "int32")
    conds = tuple((lane_of(c, lane), d) for c, d in a.conds)
    indices = tuple(lane_of(i, lane) for i in a.indices)
    if any(c is None for c, _ in conds) or any(i is None for i in indices):
        return None
    loop = Loop(lane, E.IntImm("int32", 0), E.IntImm("int32", n), "vectorized")
    return dataclasses.replace(a, indices=indices, conds=conds, loops=a.loops + (loop,))


def _loopvars_through(aff):
    return set(aff.all_vars())


def _view_shape(buf, owners, params):
    """The shape an access to buf is checked against, or None to leave it alone."""
    owner = owners.get(buf.data)
    if owner is None:
        return None if buf.data in params else buf.shape
    shape, dtype, ob = owner
    if ob is buf or (shape == buf.shape and dtype == buf.dtype):
        return buf.shape
    if len(buf.shape) != 1:
        return None
    n = const_size(shape)
    if n is None:
        return None
    return (E.IntImm("int32", n * bytes_of(dtype) // max(1, bytes_of(buf.dtype))),)


def _outside(an, rng, dim):
    lo, hi = rng
    if (hi is not None and an.prove_nonneg(hi - dim)) or (lo is not None and an.prove_neg(lo)):
        return f"ranges over [{lo!r}, {hi!r}]" if lo is not None and hi is not None else \
            f"reaches {hi!r}" if hi is not None else f"goes down to {lo!r}"
    return None


def _sized(an, ctx):
    """The analyzer with the values a run gives the kernel's shape variables and scalar
    parameters (`ctx.sizes`: id -> (variable, value)), when it checks one run's inputs."""
    for v, n in (ctx.sizes or {}).values():
        an.bind(v, n, n)
    return an


def _readable_cond(c, an, env):
    """A conjunction of comparisons of one variable against bounds (fully understood), and of
    `x != c` for a constant strictly inside x's range (`if i != 5:`): it excludes no extreme
    value, and extremes are all this rule reasons on."""
    if isinstance(c, E.And):
        return _readable_cond(c.a, an, env) and _readable_cond(c.b, an, env)
    if isinstance(c, (E.LT, E.LE, E.GT, E.GE, E.EQ)):
        return len(vars_through(c)) <= 1
    if isinstance(c, E.Not) and isinstance(c.a, (E.LT, E.LE, E.GT, E.GE)):
        return len(vars_through(c)) <= 1          # an else branch, `not (i < 3)`: `i >= 3`
    if isinstance(c, E.NE):
        x, k = (c.a, c.b) if isinstance(c.b, E.IntImm) else (c.b, c.a)
        if isinstance(x, E.Var) and isinstance(k, E.IntImm):
            lo, hi = an.bound(an.to_aff(x, env))
            return lo is not None and hi is not None and lo.is_const() and hi.is_const() \
                and lo.const < k.value < hi.const
    return False


def _row_major_vector(indices, d, shape):
    """A unit-stride vector access in the last dimension, the others constant, that stays
    within the buffer's row-major storage (`B[0, T.Ramp(0, 1, 64)]` of a (16, 4) buffer: the
    whole buffer as one vector, as tensor intrinsics load it)."""
    idx = indices[d]
    if d != len(indices) - 1 or d == 0 or not isinstance(idx, E.Ramp) or \
            not E.is_const_int(idx.stride, 1) or not isinstance(idx.base, E.IntImm) or \
            not all(isinstance(i, E.IntImm) for i in indices[:-1]) or \
            not all(isinstance(s, E.IntImm) for s in shape):
        return False
    flat = 0
    for i, s in zip(indices, shape):
        flat = flat * s.value + (i.base.value if i is idx else i.value)
    total = 1
    for s in shape:
        total *= s.value
    return 0 <= flat and flat + idx.lanes <= total
