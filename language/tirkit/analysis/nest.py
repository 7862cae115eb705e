"""Facts about a kernel's loop nest that an editor shows next to the code: how many innermost
iterations run under a loop, which blocks write and read a buffer, the regions a block
accesses as the region analysis infers them, a buffer's size, a constant's value range."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..ir import expr as E
from ..ir import stmt as S
from ..ir.dtype import bytes_of
from ..ir.visit import const_int, contains, find_first, walk
from .cost import Poly, extent_poly
from .regions import accesses, block_regions


def loop_trip_count(loop: S.For) -> Poly:
    """Iterations of the innermost loops under `loop` (itself included), summed over the
    loop nests below it; symbolic extents stay symbols."""
    total = Poly()

    def visit(s, mult):
        nonlocal total
        if s is None:
            return
        if isinstance(s, S.SeqStmt):
            for x in s.seq:
                visit(x, mult)
        elif isinstance(s, S.For):
            m = mult * extent_poly(s.extent)
            if not contains(s.body, lambda x: True, S.For):
                total = total + m
            else:
                visit(s.body, m)
        elif isinstance(s, S.BlockRealize):
            visit(s.block.body, mult)
        elif hasattr(s, "body"):
            visit(s.body, mult)
            if isinstance(s, S.IfThenElse):
                visit(s.else_case, mult)
        elif isinstance(s, S.IfThenElse):
            visit(s.then_case, mult)
            visit(s.else_case, mult)

    visit(loop, Poly.const(1))
    return total


def producers_consumers(func: S.PrimFunc, buf) -> tuple:
    """(names of the blocks that write `buf`, names of the blocks that read it), in order of
    appearance; a block counts for what its own body (not an inner block) does."""
    prod, cons = [], []

    def fn(x):
        if isinstance(x, S.Block) and x.name_hint != "root":
            w, r = [], []

            def inner(y):
                if isinstance(y, S.BufferStore) and y.buffer is buf:
                    w.append(1)
                elif isinstance(y, E.BufferLoad) and y.buffer is buf:
                    r.append(1)
                elif isinstance(y, S.Block) and y is not x:
                    return False
                return True
            walk((x.init, x.body), inner)
            if w and x.name_hint not in prod:
                prod.append(x.name_hint)
            if r and x.name_hint not in cons:
                cons.append(x.name_hint)
        return True
    walk(func.body, fn)
    return prod, cons


def buffer_bytes(buf: S.Buffer):
    """The bytes a buffer holds, or None when its shape is symbolic."""
    n = bytes_of(buf.dtype)
    for d in buf.shape:
        v = const_int(d)
        if v is None:
            return None
        n *= v
    return n


def value_stats(array):
    """(min, max, mean) of a constant's values, or None when there are none."""
    if array is None or not array.size:
        return None
    a = np.asarray(array, dtype=np.float64)
    return float(a.min()), float(a.max()), float(a.mean())


def find_realize(func: S.PrimFunc, block: S.Block):
    """The BlockRealize of `block` in `func` (its bindings and predicate), or None."""
    return find_first(func.body, lambda x: x.block is block, S.BlockRealize)


@dataclass(frozen=True)
class InferredRegion:
    """A region of `buffer` that a block accesses: per dimension `(lo, hi)` inclusive bounds
    (affine forms in the block's iterators, None where unbounded); `dims` is None when the
    access is opaque."""
    buffer: S.Buffer
    dims: tuple | None


def inferred_regions(func: S.PrimFunc, realize) -> tuple:
    """(reads, writes) of the block under `realize` as lists of InferredRegion, as the region
    analysis infers them from the body. A reduction's read of its own output is left out, as
    TVM leaves it out of `T.reads`."""
    found = block_regions(accesses(func), realize)
    written = {id(a.buffer) for a, _ in found if a.is_write}
    reads, writes = [], []
    for a, reg in found:
        if not a.is_write and realize.block.init is not None and id(a.buffer) in written:
            continue
        region = InferredRegion(a.buffer, None if reg is None else tuple(reg))
        (writes if a.is_write else reads).append(region)
    return reads, writes
