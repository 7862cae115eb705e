"""compute_at: move a producer block under a loop of its consumers, computing only the
region they read there.

    sch.compute_at(sch.get_block("B"), j)

The region is solved per buffer dimension from how the block writes it (an iterator, an
iterator plus or minus a constant, times or divided by a constant, iterators fused in mixed
radix or split as `v // c, v % c`, a constant); loops of symbolic extent are relaxed too. A
block's own predicate moves with it: conjuncts its new range guarantees are dropped, the
others kept over the new bindings.

Refused: a loop that is an ancestor of the block or in another scope, a block that writes
an output of the function or shares a written buffer with another block, consumers that
are not all under the loop, a producer of the block placed after the insertion point, a
block passed by the move that writes what it reads, a region that cannot be solved, a
parallel, vectorized or thread-bound loop around the new place whose iterations the
block, computed in each, would make touch one element, one writing (`parallel`'s check)."""
from __future__ import annotations

from .move import move
from ..registry import primitive


@primitive("compute_at")
def compute_at(sch, block, loop, preserve_unit_loops=False, index=-1):
    return move(sch, block, loop, preserve_unit_loops, index, reverse=False)
