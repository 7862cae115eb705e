"""Locality features of one store: how much data the loops around it touch, what a cache
of a given size would miss, and how each buffer is walked by the innermost and the
vectorized loop.

    f = locality(loops, accesses)    # {name: value} for the names in NAMES
    f = locality(loops, accesses, moves)    # the same, each access's `moving` loops given

`loops` is [(For, extent)] from the outermost to the store, `accesses` [(form, element
bytes, elements)] with `form` the buffer's flat index over the loop positions (`coef`: the
coefficient of each loop, `opaque`: loops reached through a non-affine term).

Working set at level l: for each buffer, the elements its index reaches while the loops
l..n-1 run (the product of the extents of the loops it varies with, at most the buffer),
in bytes and in 64-byte lines (the loop with the smallest stride walks lines, not
elements). A cache of C bytes keeps the working set of the outermost level that fits; the
misses are that level's lines once per iteration of the loops outside it (a working-set
model: it ignores reuse across those outer loops). All values are log2(1 + x).
"""
from __future__ import annotations

import functools
import math

LINE = 64                         # cache line bytes
CURVE = 10                        # points a curve over the loop levels is sampled at
CACHES = (("l1", 32 * 1024), ("l2", 1024 * 1024))
PAGE = 4096                       # bytes the hardware prefetcher follows a stream within

NAMES = ([f"footprint.{i}" for i in range(CURVE)]
         + [f"cache.{name}_lines" for name, _ in CACHES]
         + [f"cache.{name}_level" for name, _ in CACHES]
         + ["cache.l2_scattered"]
         + ["inner.contiguous", "inner.broadcast", "inner.strided",
            "vector.contiguous", "vector.broadcast", "vector.strided", "vector.bytes"])


def lg(x) -> float:
    """How every count is given to the model: log2(1 + x)."""
    return math.log2(1.0 + float(x)) if x > 0 else 0.0


def sample_curve(curve) -> list:
    """A curve over the loop levels (from the store outwards) at CURVE evenly spaced points,
    linearly interpolated, each as lg."""
    return [lg(curve[lo] + (curve[hi] - curve[lo]) * frac) for lo, hi, frac in _samples(len(curve))]


@functools.lru_cache(maxsize=64)             # one entry per loop depth
def _samples(n) -> tuple:
    """(lower point, upper point, fraction between them) of each sample of a curve of n points."""
    out = []
    for k in range(CURVE):
        pos = k * (n - 1) / (CURVE - 1)
        lo = int(math.floor(pos))
        out.append((lo, min(lo + 1, n - 1), pos - lo))
    return tuple(out)


def varies(form, i) -> bool:
    return bool(form.coef.get(i, 0)) or i in form.opaque


def moving(form, n) -> list:
    """The loops among the first n an index varies with, outer to inner."""
    return [i for i in range(n) if varies(form, i)]


def _level(loops, accesses, moves, level):
    """(bytes, lines, scattered lines) touched by the loops level..n-1. Scattered: lines of
    a buffer walked in runs of at most one line, each run a page or more from the next (the
    stride of the loop after the run), which the prefetcher cannot stream. `moves`: the
    loops each access varies with (`moving`)."""
    total_b = total_l = total_s = 0.0
    for (form, eb, size), move in zip(accesses, moves):
        uniq = 1
        walks = []                          # (stride, extent) of the affine loops
        for i in move:
            if i >= level:
                uniq *= loops[i][1]
                s = abs(form.coef.get(i, 0))
                if s and loops[i][1] > 1:
                    walks.append((s, loops[i][1]))
        uniq = min(uniq, size)
        per_line = LINE / eb
        walks.sort()
        gap = None                          # elements from one run to the next
        if walks and walks[0][0] < per_line:
            # the smallest-stride loop walks one run of step * (extent - 1) + 1 elements,
            # lengthened by each loop that continues it (stride: the run's length so far)
            step, run = walks[0]
            for s, e in walks[1:]:
                if s != step * run:
                    gap = s
                    break
                run *= e
            runs = max(1.0, uniq / run)
            span = math.ceil((step * (run - 1) + 1) / per_line)
            lines = runs * span
        else:
            span = 1
            gap = walks[0][0] if walks else None
            lines = uniq
        lines = min(lines, math.ceil(size * eb / LINE))
        total_b += uniq * eb
        total_l += lines
        if span <= 1 and gap is not None and gap * eb >= PAGE:
            total_s += lines
    return total_b, total_l, total_s


def stride(form, i):
    """Elements between consecutive iterations of loop i (0: does not move), or None when
    the index reaches the loop non-affinely."""
    return None if i in form.opaque else abs(form.coef.get(i, 0))


def walk_kinds(loops, accesses, i):
    """Buffers walked contiguously, not at all (broadcast) and with a stride by loop i."""
    cont = bcast = strided = 0
    for form, eb, _ in accesses:
        s = stride(form, i)
        if s == 0:
            bcast += 1
        elif s == 1:
            cont += 1
        else:
            strided += 1
    return cont, bcast, strided


def locality(loops, accesses, moves=None) -> dict:
    n = len(loops)
    if moves is None:
        moves = [moving(form, n) for form, _, _ in accesses]
    levels = [_level(loops, accesses, moves, lv) for lv in range(n + 1)]   # outer .. store
    out = dict.fromkeys(NAMES, 0.0)
    # footprint curve: from the store outwards, as the intensity curve
    curve = sample_curve([levels[lv][0] for lv in range(n, -1, -1)])
    for k, v in enumerate(curve):
        out[f"footprint.{k}"] = v
    outer = [1]
    for _, e in loops:
        outer.append(outer[-1] * e)
    for name, size in CACHES:
        fit = next((lv for lv in range(n + 1) if levels[lv][0] <= size), n)
        out[f"cache.{name}_lines"] = lg(levels[fit][1] * outer[fit])
        out[f"cache.{name}_level"] = n - fit
        if name == "l2":
            out["cache.l2_scattered"] = lg(levels[fit][2] * outer[fit])
    if n:
        c, b, s = walk_kinds(loops, accesses, n - 1)
        out["inner.contiguous"], out["inner.broadcast"], out["inner.strided"] = c, b, s
        vec = [i for i, (f, _) in enumerate(loops) if f.kind == "vectorized"]
        if vec:
            c, b, s = walk_kinds(loops, accesses, vec[-1])
            out["vector.contiguous"], out["vector.broadcast"], out["vector.strided"] = c, b, s
            out["vector.bytes"] = lg(loops[vec[-1]][1] * max(eb for _, eb, _ in accesses))
    return out
