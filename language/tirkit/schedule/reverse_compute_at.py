"""reverse_compute_at: move a consumer block under a loop of its producers, computing the
region they write there.

    sch.reverse_compute_at(sch.get_block("relu"), j)

Refused: a loop that is an ancestor of the block or in another scope, producers that are
not all under the loop, a consumer of the block placed before the insertion point, a region
that is not a box of constant size."""
from __future__ import annotations

from ._compute_at import move
from .registry import primitive


@primitive("reverse_compute_at")
def reverse_compute_at(sch, block, loop, preserve_unit_loops=False, index=-1):
    return move(sch, block, loop, preserve_unit_loops, index, reverse=True)
