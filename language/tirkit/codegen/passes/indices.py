"""After compaction: buffer indices with floor divisions and modulos simplified over the loop ranges.

A layout written by `transform_layout` (`B_pack[j // 32, k, j % 32]`) or a split binding
reaches the lowered loops as `(64*a + 32*b + j3) // 32` and `(64*a + 32*b + j3) % 32`
with `0 <= j3 < 32`: over the ranges of the loops around the access these are `2*a + b`
and `j3`.  Left as they are, the flattened index is not linear in the vectorized loop's
variable and the access becomes a gather of single elements (a packed GEMM ran 7x slower
than the unpacked one).  Each index that holds a floor division or modulo is simplified by
arith's tables with the constant ranges of the loops (loop variables are unique, so
the ranges of all loops serve every index); the simplified form is taken when it holds
fewer divisions and modulos than the index as written.
"""
from __future__ import annotations

import dataclasses

from ...analysis.footprint import loop_ranges
from ...arith.writeback import simplify
from ...ir import expr as E
from ...ir import stmt as S
from ...ir.dtype import is_int, parse_dtype
from ...ir.visit import find_all
from .rewrite import transform

_DIVISIONS = (E.FloorDiv, E.FloorMod)


def _divisions(e) -> int:
    return len(find_all(e, lambda x: True, _DIVISIONS))


def simplify_indices(body):
    bounds = loop_ranges(body)
    if not bounds:
        return body

    def index(i):
        if not (is_int(i.dtype) and parse_dtype(i.dtype).lanes == 1):
            return i
        n = _divisions(i)
        if not n:
            return i
        out = simplify(i, bounds)
        return out if _divisions(out) < n else i

    def fn(x):
        if isinstance(x, (E.BufferLoad, S.BufferStore)):
            new = tuple(index(i) for i in x.indices)
            if any(a is not b for a, b in zip(new, x.indices)):
                return dataclasses.replace(x, indices=type(x.indices)(new))
        return None
    return transform(body, fn)
