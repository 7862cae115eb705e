"""The loop nest a sketch tiles: a reduction block whose loops bind its iterators one to one.

    loops = tileable_loops(sch, block_rv)     # (Loop(extent, "S" | "R"), ...) or None
    is_elementwise(block)                     # what sketches inline or fuse around it
    sch, b, sp, rd, extent = split_levels(module, func, block, inline, loops, tiles, 4, 2)
    unroll_within(sch, loops_in_priority_order, extent)   # unrolled up to MAX_UNROLLED
"""
from __future__ import annotations

import dataclasses

from ..ir import expr as E
from ..schedule import Schedule, ScheduleError


MAX_INNERMOST = 64          # the largest innermost tile (MetaSchedule's max_innermost_factor)
MAX_UNROLLED = 64           # the largest product of the extents a sketch unrolls


@dataclasses.dataclass(frozen=True)
class Loop:
    extent: int
    kind: str                # "S" or "R"


def vector_lanes(dtype: str) -> int:
    """Lanes of `dtype` in this CPU's widest vector register (512 bits with AVX-512F, 256
    with AVX, else 128): what a sketch's vectorized tile is a multiple of."""
    from ..ir.dtype import parse_dtype
    try:
        from ..codegen.llvm.peak import enabled_features
        f = enabled_features()
    except ImportError:                 # no llvmlite: nothing is measured here anyway
        f = set()
    bits = 512 if "avx512f" in f else 256 if "avx" in f else 128
    return max(1, bits // max(1, parse_dtype(dtype).bits))


def extent_of(loop):
    return loop.extent.value if isinstance(loop.extent, E.IntImm) else None


def is_elementwise(block) -> bool:
    """A block with spatial iterators only and no init (a cast, a padding, a ReLU)."""
    return all(iv.kind == "S" for iv in block.iter_vars) and block.init is None


def tileable_loops(sch, rv):
    """The Loop list of a block whose loops bind its iterators one to one, with at least one
    reduction iterator and constant extents; else None."""
    info = sch.block_info(rv)
    block, realize = info.block, info.realize
    loops = info.loops
    if not any(iv.kind == "R" for iv in block.iter_vars) or block.init is None:
        return None
    if len(loops) != len(block.iter_vars) or any(iv.kind not in "SR" for iv in block.iter_vars):
        return None
    by_var = {}
    for iv, value in zip(block.iter_vars, realize.iter_values):
        if not isinstance(value, E.Var):
            return None
        by_var[id(value)] = iv
    out = []
    for lp in loops:
        iv = by_var.get(id(lp.loop_var))
        if iv is None or lp.kind != "serial" or extent_of(lp) is None:
            return None
        if not (isinstance(lp.min, E.IntImm) and lp.min.value == 0):
            return None
        out.append(Loop(extent_of(lp), iv.kind))
    # a perfect nest: each loop's body is the next loop, the innermost the block
    for outer, inner in zip(loops, loops[1:] + [realize]):
        if outer.body is not inner:
            return None
    return tuple(out)


def split_levels(module, func, block, inline, loops, tiles, s_levels, r_levels, prepare=None):
    """A sketch's first steps: a Schedule of `func` with the `inline` producers inlined,
    `prepare(sch, block rv)` applied (when given: steps that leave the block's loops as
    they are, such as packing an operand), and each loop of `block` (described by `loops`)
    split by its `tiles` factors.  Returns (sch, block rv, spatial parts by level, reduction
    parts by level, {id(part): factor})."""
    sch = Schedule(module, func)
    for name in inline:
        sch.compute_inline(sch.get_block(name))
    b = sch.get_block(block)
    if prepare is not None:
        prepare(sch, b)
    found = sch.get_loops(b)
    if len(found) != len(loops):
        raise ScheduleError("tune", "sketch", f"block '{block}' has {len(found)} "
                            f"loops, the sketch {len(loops)}")
    sp = [[] for _ in range(s_levels)]
    rd = [[] for _ in range(r_levels)]
    extent = {}
    for lp, info, factors in zip(found, loops, tiles):
        parts = sch.split(lp, list(factors))
        for level, part, f in zip(sp if info.kind == "S" else rd, parts, factors):
            level.append(part)
            extent[id(part)] = f
    return sch, b, sp, rd, extent


def unroll_within(sch, loops, extent, budget=MAX_UNROLLED):
    """Unroll `loops` in the order given, each one whose extent (`extent[id(loop)]`) is more
    than 1 and keeps the product of the unrolled extents within `budget`."""
    product = 1
    for lp in loops:
        n = extent[id(lp)]
        if n > 1 and product * n <= budget:
            sch.unroll(lp)
            product *= n


__all__ = ["Loop", "MAX_INNERMOST", "MAX_UNROLLED", "extent_of", "is_elementwise",
           "split_levels", "tileable_loops", "unroll_within", "vector_lanes"]
