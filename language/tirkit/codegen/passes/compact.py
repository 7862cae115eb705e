"""Pass 3: region compaction of intermediate buffers.

First each allocation sinks to the innermost statement that holds all of its accesses,
entering a loop only when every iteration of that loop touches its own slice of the buffer
(so a per-iteration allocation keeps the program's meaning).  Then the buffer shrinks to
the box its accesses cover inside that statement, indices shifted to the box's origin.
"""
from __future__ import annotations

import dataclasses

from ...ir import expr as E
from ...ir import stmt as S
from ...ir.dtype import is_int
from ...ir.visit import walk
from ...analysis.footprint import (canonical, compact_box, loop_domain, loop_ranges,
                                   per_iteration)
from ...analysis.regions import single_trip
from ...arith.affine import Aff
from ...arith.interval import Analyzer
from ...arith.writeback import to_expr
from .blocks import allocate
from .rewrite import transform


def accesses(stmt, buf, vectors=False):
    """Index tuples of every load/store of buf under stmt; None when buf escapes (used by
    data pointer, aliased, or indexed with vectors: with `vectors`, a Ramp of integers is
    an index too)."""
    out, bad = [], []

    def index(i):
        if isinstance(i, E.Ramp):
            return vectors and is_int(i.base.dtype)
        return is_int(i.dtype)

    def fn(x):
        if isinstance(x, (E.BufferLoad, S.BufferStore)):
            if x.buffer is buf:
                if not all(index(i) for i in x.indices):
                    bad.append(x)
                out.append(x.indices)
            elif x.buffer.data is buf.data:
                bad.append(x)
        elif isinstance(x, E.BufferRef) and x.buffer.data is buf.data:
            bad.append(x)
        elif x is buf.data:
            bad.append(x)
        return None if not isinstance(x, S.Buffer) else False
    walk(stmt, fn)
    # data var occurrences inside loads/stores are not escapes: walk skips Buffer fields
    return None if bad else out


def _private_to_iteration(stmt: S.For, buf) -> bool:
    """Every iteration of loop `stmt` touches a slice of buf no other iteration touches (a
    loop of one iteration trivially does)."""
    if single_trip(stmt):
        return True
    return per_iteration(False, accesses(stmt.body, buf, vectors=True), stmt.loop_var,
                         loop_ranges(stmt.body), loop_domain(stmt))


def with_single_trip(ranges, loop: S.For):
    """`ranges` ({id(var): (lo, hi)}) with the value of `loop`'s variable when it has one
    iteration at a constant (an allocation sunk into it sees a constant, not a symbol)."""
    if not (single_trip(loop) and isinstance(loop.min, E.IntImm)):
        return ranges
    out = dict(ranges or {})
    out[id(loop.loop_var)] = (loop.min.value, loop.min.value)
    return out


def _uses(stmt, buf) -> bool:
    found = []

    def fn(x):
        if found:
            return False
        if isinstance(x, (E.BufferLoad, S.BufferStore, E.BufferRef)) and \
                x.buffer.data is buf.data:
            found.append(x)
        if x is buf.data:
            found.append(x)
        return not isinstance(x, S.Buffer)
    walk(stmt, fn)
    return bool(found)


def _sink(stmt, buf, wrap, fixed=None):
    t = type(stmt)
    if t is S.For and stmt.kind in ("serial", "parallel", "unrolled") and \
            _private_to_iteration(stmt, buf):
        return dataclasses.replace(stmt, body=_sink(stmt.body, buf, wrap,
                                                    with_single_trip(fixed, stmt)))
    if t is S.SeqStmt:
        users = [i for i, s in enumerate(stmt.seq) if _uses(s, buf)]
        if len(users) == 1:
            i = users[0]
            seq = list(stmt.seq)
            seq[i] = _sink(seq[i], buf, wrap, fixed)
            return dataclasses.replace(stmt, seq=tuple(seq))
        return wrap(stmt, fixed)
    if t in (S.Allocate, S.DeclBuffer, S.AttrStmt, S.AllocateConst):
        return dataclasses.replace(stmt, body=_sink(stmt.body, buf, wrap, fixed))
    if t is S.LetStmt and not _uses(stmt.value, buf):
        return dataclasses.replace(stmt, body=_sink(stmt.body, buf, wrap, fixed))
    return wrap(stmt, fixed)


def _compact(buf, body, fixed):
    """(new buffer, index rewriter) for buf allocated around body, or None."""
    if not accesses(body, buf, vectors=True):
        return None
    return compact_buffer(buf, body, fixed)


def compact_buffer(buf, body, ranges=None):
    """(buf shrunk to the box its accesses in `body` cover (analysis.footprint.compact_box:
    loops inside `body` and the variables of `ranges` ({id(var): (lo, hi)}) relaxed, guards
    applied), the rewriter of an index tuple into it), or None when no dimension shrinks.
    Shared with the GPU pass that places shared buffers."""
    seen = {}
    box = compact_box(body, buf, ranges, seen)
    if all(b is None for b in box):
        return None
    shape = tuple(old if b is None else E.IntImm(old.dtype, b[1])
                  for b, old in zip(box, buf.shape))
    new_buf = dataclasses.replace(buf, shape=shape)
    plain = Analyzer()

    def reindex(indices):
        out = []
        for b, ix in zip(box, indices):
            if b is None:
                out.append(ix)
                continue
            if isinstance(ix, E.Ramp):           # a vector of elements: its base moves
                rel = canonical(plain.to_aff(ix.base), seen) - b[0]
                out.append(dataclasses.replace(
                    ix, base=to_expr(Aff(rel.terms, rel.const, ix.base.dtype))))
                continue
            rel = canonical(plain.to_aff(ix), seen) - b[0]
            out.append(to_expr(Aff(rel.terms, rel.const, ix.dtype)))
        return tuple(out)
    return new_buf, reindex


def compact_regions(body: S.Stmt, params=()) -> S.Stmt:
    def fn(x):
        if not (isinstance(x, S.Allocate) and isinstance(x.body, S.DeclBuffer)):
            return None
        buf = x.body.buffer
        inner = x.body.body
        if buf.strides or buf.elem_offset is not None or buf.axis_separators:
            return None                      # an explicit layout stays as written
        placed = []

        def wrap(s, fixed):
            placed.append((s, fixed))
            return _Marker(s)
        sunk = _sink(inner, buf, wrap)
        if not placed:
            return None
        res = _compact(buf, *placed[0])
        new_buf, reindex = res if res else (buf, None)

        def fix(s):
            if reindex is None:                  # moved, not shrunk: the allocation as it was
                return dataclasses.replace(x, body=dataclasses.replace(x.body, body=s))

            def rb(y):
                if isinstance(y, (E.BufferLoad, S.BufferStore)) and y.buffer is buf:
                    return dataclasses.replace(y, buffer=new_buf, indices=reindex(y.indices))
                return None
            return allocate(new_buf, transform(s, rb), x.span)
        return transform(sunk, lambda y: fix(y.stmt) if isinstance(y, _Marker) else None)
    return transform(body, fn)


@dataclasses.dataclass(frozen=True, eq=False)
class _Marker(S.Stmt):
    stmt: S.Stmt
