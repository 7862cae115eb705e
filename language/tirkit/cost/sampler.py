"""Random valid schedules of a kernel: the training data's variety.

    sch = random_schedule(func, module, rng)    # a Schedule (trace recorded), or None

Each block (outputs last to first) gets, at random: inlining (for a block that only copies
or pads), or multi-level tiling (each loop split into two or three with factors that divide
its extent), a reorder of the tiles (spatial tiles outside, reduction tiles in between), a
parallel outer loop (outer spatial tiles fused first), a vectorized innermost spatial loop, an
unrolled inner loop, and for a producer, placement inside its consumer's loops
(`compute_at`). A primitive that refuses is skipped (the schedule stays as it was); the caller
filters the result with the validator.
"""
from __future__ import annotations

from ..ir import expr as E
from ..ir import stmt as S
from ..schedule import Schedule, ScheduleError


def _divisors(n):
    return [d for d in range(1, n + 1) if n % d == 0]


def _extent(sch, loop):
    f = sch.get(loop)
    return f.extent.value if isinstance(f.extent, E.IntImm) else None


def _kinds(sch, block, loops):
    """'S' or 'R' per loop: the kind of the block iterator the loop feeds."""
    info = sch.block_info(block)
    kinds = {}
    for iv, val in zip(info.block.iter_vars, info.realize.iter_values):
        for x in _vars(val):
            kinds[id(x)] = "R" if iv.kind == "R" or kinds.get(id(x)) == "R" else iv.kind
    return [kinds.get(id(sch.get(lp).loop_var), "S") for lp in loops]


def _vars(e):
    if isinstance(e, E.Var):
        yield e
    for f in ("a", "b", "value"):
        x = getattr(e, f, None)
        if isinstance(x, E.PrimExpr):
            yield from _vars(x)


FAILED = object()


def _try(fn, *args, **kw):
    """fn's result, or FAILED when the primitive refused (the schedule is unchanged)."""
    try:
        return fn(*args, **kw)
    except ScheduleError:
        return FAILED


def _split(sch, rng, loop, levels):
    n = _extent(sch, loop)
    if n is None or n < 4:
        return [loop]
    factors = []
    rest = n
    for _ in range(levels - 1):
        ds = _divisors(rest)
        d = int(rng.choice(ds))
        factors.append(d)
        rest //= d
    factors = [rest] + factors[::-1]
    if sum(1 for f in factors if f > 1) <= 1 and rng.random() < 0.5:
        return [loop]
    parts = _try(sch.split, loop, factors)
    return [loop] if parts is FAILED else parts


def _simple(block: S.Block) -> bool:
    """A block that only copies or pads (no arithmetic but an if_then_else): inlinable."""
    return block.init is None and isinstance(block.body, S.BufferStore)


def tile_block(sch, block, rng):
    loops = sch.get_loops(block)
    kinds = _kinds(sch, block, loops)
    s_tiles, r_tiles = [[], [], []], [[], []]
    for lp, k in zip(loops, kinds):
        if k == "R":
            parts = _split(sch, rng, lp, 2) if rng.random() < 0.7 else [lp]
            parts = ([lp] if len(parts) == 1 else parts)
            r_tiles[0].append(parts[0])
            if len(parts) > 1:
                r_tiles[1].append(parts[1])
        else:
            levels = int(rng.choice([1, 2, 3], p=[0.2, 0.4, 0.4]))
            parts = _split(sch, rng, lp, levels) if levels > 1 else [lp]
            for i, p in enumerate(parts):
                s_tiles[3 - len(parts) + i].append(p)
    order = s_tiles[0] + s_tiles[1] + r_tiles[0] + s_tiles[2] + r_tiles[1]
    if rng.random() < 0.3:         # a reduction innermost is sometimes the better order
        order = s_tiles[0] + s_tiles[1] + r_tiles[0] + r_tiles[1] + s_tiles[2]
    if rng.random() < 0.8 and len(order) > 1:
        _try(sch.reorder, *order)
    loops = sch.get_loops(block)
    kinds = _kinds(sch, block, loops)
    if rng.random() < 0.7:
        outer = []
        for lp, k in zip(loops, kinds):
            if k != "S" or len(outer) >= 2:
                break
            outer.append(lp)
        if len(outer) == 2 and rng.random() < 0.5:
            fused = _try(sch.fuse, *outer)
            outer = outer if fused is FAILED else [fused]
        if outer:
            _try(sch.parallel, outer[0])
    loops = sch.get_loops(block)
    kinds = _kinds(sch, block, loops)
    if loops and kinds[-1] == "S" and rng.random() < 0.6:
        n = _extent(sch, loops[-1])
        if n is not None and 1 < n <= 64:
            _try(sch.vectorize, loops[-1])
    if len(loops) >= 2 and rng.random() < 0.3:
        lp = loops[-2] if rng.random() < 0.5 else loops[-1]
        n = _extent(sch, lp)
        if n is not None and n <= 16 and sch.get(lp).kind == "serial":
            _try(sch.unroll, lp)


def random_schedule(func, module, rng):
    """A Schedule of `func` (in `module`) with random tiling, its trace recorded."""
    names = _block_names(func)
    sch = Schedule(module, func.name)
    for name in reversed(names):
        block = _try(sch.get_block, name)
        if block is FAILED:
            continue
        b = sch.get(block)
        consumers = _try(sch.get_consumers, block)
        consumers = [] if consumers is FAILED else consumers
        if consumers and _simple(b) and rng.random() < 0.6:
            if _try(sch.compute_inline, block) is not FAILED:
                continue
        if consumers and rng.random() < 0.4:
            cloops = _try(sch.get_loops, consumers[0])
            if cloops is not FAILED and cloops:
                lp = cloops[int(rng.integers(0, min(len(cloops), 3)))]
                _try(sch.compute_at, block, lp)
        tile_block(sch, block, rng)
    return sch


def _block_names(func):
    from ..ir.visit import walk
    out = []

    def fn(x):
        if isinstance(x, S.Block) and x.name_hint != "root":
            out.append(x.name_hint)
        return True
    walk(func.body, fn)
    return out
