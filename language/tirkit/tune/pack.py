"""Packing an operand for the tiled sketch: the operand that the vectorized loop walks along
its last dimension, copied once into a layout where each vector tile's rows follow one
another.

    packs = packable_operands(block, vector_iterator)      # (Pack, ...)
    packs[0].apply(sch, block_rv, width=32, extent=1024, parallel=True)

`B[k, j]` of a 1024³ GEMM, with `j` vectorized 32 wide, becomes `B_reindex[j // 32, k,
j % 32]` (`reindex`, then `transform_layout`): the register tile then reads 128 contiguous
bytes per `k` instead of 128 bytes at a stride of 4 KiB, which alias in the L1 cache
(a 1024³ GEMM on TVM's best tiles, the sketch's other decisions alike: 24.4 ms unpacked,
20.1 ms packed, the copy included; medians of seven interleaved rounds on one thread).
The copy's loops follow the operand's own dimensions, its innermost one split by the width
and vectorized, so both its reads and its writes are contiguous; with the parallel decision
its outer loop is parallel.
"""
from __future__ import annotations

import dataclasses

from ..analysis.regions import regions_of
from ..ir import expr as E
from ..ir.visit import find_all


@dataclasses.dataclass(frozen=True)
class Pack:
    read: int            # the block's read region of the operand
    buffer: str
    dims: int            # dimensions of the copy: the iterators the access uses
    vector: int          # the vectorized iterator's place among them
    source: tuple        # per dimension of the operand, its iterator's place among them

    def index_map(self, width: int) -> str:
        names = [f"v{i}" for i in range(self.dims)]
        outer = [f"{v} // {width}" if i == self.vector else v for i, v in enumerate(names)]
        return f"lambda {', '.join(names)}: ({', '.join(outer)}, {names[self.vector]} % {width})"

    def apply(self, sch, block, width: int, extent: int, parallel: bool):
        copy = sch.reindex(block, ("read", self.read))
        sch.transform_layout(block, ("read", self.read), self.index_map(width))
        loops = sch.get_loops(copy)[-self.dims:]
        order = [loops[i] for i in self.source]
        if order != loops:
            sch.reorder(*order)
        _, lanes = sch.split(order[-1], [extent // width, width])
        sch.vectorize(lanes)
        if parallel:
            sch.parallel(order[0])


def _loads(body, buf) -> list:
    return [x.indices for x in find_all(body, lambda x: x.buffer is buf, E.BufferLoad)]


def packable_operands(block, vector_var) -> tuple:
    """The read operands of `block` indexed by plain, distinct iterators (two or more), the
    last of them `vector_var` (the vectorized loop's iterator), each read at one place."""
    reads, writes = regions_of(block)
    written = {id(r.buffer) for r in writes}
    position = {id(iv.var): i for i, iv in enumerate(block.iter_vars)}
    out = []
    for k, region in enumerate(reads):
        buf = region.buffer
        if id(buf) in written:
            continue
        found = _loads(block.body, buf)
        if not found or any(len(a) != len(found[0]) or any(x is not y for x, y in
                                                           zip(a, found[0])) for a in found):
            continue
        idx = found[0]
        if len(idx) < 2 or idx[-1] is not vector_var or \
                not all(isinstance(e, E.Var) and id(e) in position for e in idx) or \
                len({id(e) for e in idx}) != len(idx):
            continue
        used = sorted(position[id(e)] for e in idx)          # the copy's dimensions
        source = tuple(used.index(position[id(e)]) for e in idx)
        out.append(Pack(k, buf.name, len(idx), used.index(position[id(vector_var)]), source))
    return tuple(out)


__all__ = ["Pack", "packable_operands"]
