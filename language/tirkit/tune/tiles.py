"""Perfect tile sizes: random factorizations of a loop extent and their mutations.

    sample_tiles(1024, 4, 64, rng)       # e.g. [8, 4, 2, 16]: the product is 1024
    mutate_tiles([8, 4, 2, 16], 64, rng) # a prime factor moved from one level to another

The innermost factor never passes `max_innermost` (as MetaSchedule's sample_perfect_tile).
"""
from __future__ import annotations

import functools


@functools.lru_cache(maxsize=1024)
def divisors(n: int) -> tuple:
    return tuple(d for d in range(1, n + 1) if n % d == 0)


@functools.lru_cache(maxsize=1024)
def prime_factors(n: int) -> tuple:
    out, p = [], 2
    while p * p <= n:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    if n > 1:
        out.append(n)
    return tuple(out)


def sample_tiles(extent: int, levels: int, max_innermost: int, rng, multiple: int = 1) -> list:
    """A random perfect tiling: `levels` factors whose product is `extent`, each prime factor
    of the extent placed on a level drawn uniformly (the innermost level refused when it
    would pass `max_innermost`).  `multiple`: where it divides the extent (and fits under
    `max_innermost`), the innermost factor is a multiple of it (a loop to vectorize: a whole
    number of the CPU's vector registers)."""
    tiles = [1] * levels
    rest = prime_factors(extent)
    if multiple > 1 and extent % multiple == 0 and multiple <= max_innermost:
        tiles[-1] = multiple
        rest = prime_factors(extent // multiple)
    for p in rest:
        level = int(rng.integers(0, levels))
        if level == levels - 1 and tiles[-1] * p > max_innermost:
            level = int(rng.integers(0, levels - 1)) if levels > 1 else 0
        tiles[level] *= p
    return tiles


def mutate_tiles(tiles, max_innermost: int, rng, multiple: int = 1) -> list:
    """Move one prime factor of one level to another level (the tiling stays perfect; an
    innermost factor that is a multiple of `multiple` stays one)."""
    tiles = list(tiles)
    sources = [i for i, t in enumerate(tiles) if t > 1]
    if not sources or len(tiles) < 2:
        return tiles
    src = sources[int(rng.integers(0, len(sources)))]
    p = prime_factors(tiles[src])[int(rng.integers(0, len(prime_factors(tiles[src]))))]
    dst = int(rng.integers(0, len(tiles) - 1))
    dst = dst + 1 if dst >= src else dst
    last = len(tiles) - 1
    if dst == last and tiles[dst] * p > max_innermost:
        return tiles
    if src == last and multiple > 1 and tiles[last] % multiple == 0 \
            and (tiles[last] // p) % multiple != 0:
        return tiles
    tiles[src] //= p
    tiles[dst] *= p
    return tiles


class FirstChoice:
    """A stand-in random generator that always takes the first option (to check that a
    sketch applies)."""

    def integers(self, lo, hi=None):
        return 0 if hi is None else lo

    def random(self):
        return 0.0

    def choice(self, seq):
        return seq[0]
