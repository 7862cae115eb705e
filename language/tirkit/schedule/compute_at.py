"""compute_at: move a producer block under a loop of its consumers, computing only the
region they read there.

    sch.compute_at(sch.get_block("B"), j)

Refused: a loop that is an ancestor of the block or in another scope, a block that writes
an output of the function, consumers that are not all under the loop, a producer of the
block placed after the insertion point, a region that is not a box of constant size."""
from __future__ import annotations

from ._compute_at import move
from .registry import primitive


@primitive("compute_at")
def compute_at(sch, block, loop, preserve_unit_loops=False, index=-1):
    return move(sch, block, loop, preserve_unit_loops, index, reverse=False)
