"""reverse_compute_at: move a consumer block under a loop of its producers, computing the
region they write there.

    sch.reverse_compute_at(sch.get_block("relu"), j)

The region is solved as for compute_at, from how the block reads the buffer.

Refused: a loop that is an ancestor of the block or in another scope, a block that shares a
written buffer with another block, producers that are not all under the loop, a consumer
of the block placed before the insertion point, a block passed by the move that reads what
it writes, a consumer that reads what its producers do not write (some of its instances
would never run) or that would read beyond what they wrote in the same iteration, a region
that cannot be solved, a parallel, vectorized or thread-bound loop around the new place
whose iterations the block would make touch one element, one writing."""
from __future__ import annotations

from .move import move
from ..registry import primitive


@primitive("reverse_compute_at")
def reverse_compute_at(sch, block, loop, preserve_unit_loops=False, index=-1):
    return move(sch, block, loop, preserve_unit_loops, index, reverse=True)
