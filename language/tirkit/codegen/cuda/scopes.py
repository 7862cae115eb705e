"""GPU pass: place `shared` and `local` allocations where a GPU keeps them, then size them.

A `local` (or `warp`) buffer belongs to one thread: its allocation moves inside the thread
bindings that enclose all its uses, and the shared compaction pass (passes/compact.py) sinks
and shrinks it from there, thread indices fixed.

A `shared` buffer belongs to one thread block: its allocation moves inside the blockIdx
bindings, through threadIdx/vthread bindings (which it spans) and through serial loops whose
iterations each touch their own slice of it; it then shrinks to the box its accesses cover,
relaxed over every thread index below the block and every loop below its place.  The result
gets explicit row-major strides, so the CPU-oriented compaction leaves it as it is (it would
wrongly fix thread indices).
"""
from __future__ import annotations

import dataclasses

from ...ir import expr as E
from ...ir import stmt as S
from ...ir.visit import walk
from ..arith import affine, bound, separates
from ..passes.blocks import allocate
from ..passes.compact import accesses
from ..passes.rewrite import transform


def _key(e):
    if isinstance(e, E.Var):
        return ("v", id(e))
    if isinstance(e, E.IntImm):
        return ("i", e.dtype, e.value)
    if dataclasses.is_dataclass(e):
        out = [type(e).__name__]
        for f in dataclasses.fields(e):
            if f.name != "span":
                v = getattr(e, f.name)
                out.append(tuple(_key(x) for x in v) if isinstance(v, tuple) else
                           _key(v) if dataclasses.is_dataclass(v) else v)
        return tuple(out)
    return e


def _uses(stmt, data) -> bool:
    found = []

    def fn(x):
        if found:
            return False
        if x is data or isinstance(x, (E.BufferLoad, S.BufferStore)) and x.buffer.data is data:
            found.append(x)
        return not isinstance(x, S.Buffer)
    walk(stmt, fn)
    return bool(found)


def _ranges(stmt, out=None):
    out = {} if out is None else out

    def fn(x):
        if isinstance(x, S.For) and isinstance(x.min, E.IntImm) and \
                isinstance(x.extent, E.IntImm):
            out[id(x.loop_var)] = (x.min.value, x.min.value + x.extent.value - 1)
    walk(stmt, fn)
    return out


def _is_thread(s, prefix=("threadIdx", "vthread")):
    return isinstance(s, S.For) and s.kind == "thread_binding" and \
        (s.thread_tag or "").startswith(prefix)


def _place(stmt, buf, shared, relaxed, inside, wrap):
    """Descend from stmt to where buf's allocation goes; wrap(stmt, relaxed) marks it."""
    t = type(stmt)
    if t is S.For and stmt.kind == "thread_binding":
        tag = stmt.thread_tag or ""
        r = dict(relaxed)
        if shared and not tag.startswith("blockIdx") and isinstance(stmt.extent, E.IntImm):
            r[id(stmt.loop_var)] = (0, stmt.extent.value - 1)
        return dataclasses.replace(stmt, body=_place(stmt.body, buf, shared, r,
                                                     inside or not tag.startswith("blockIdx"),
                                                     wrap))
    if t is S.For and shared and inside and stmt.kind in ("serial", "unrolled"):
        acc = accesses(stmt.body, buf)
        if acc and separates(acc, id(stmt.loop_var), _ranges(stmt.body, dict(relaxed)), _key):
            return dataclasses.replace(stmt, body=_place(stmt.body, buf, shared, relaxed,
                                                         inside, wrap))
        return wrap(stmt, relaxed)
    if t is S.SeqStmt:
        users = [i for i, s in enumerate(stmt.seq) if _uses(s, buf.data)]
        if len(users) == 1:
            seq = list(stmt.seq)
            seq[users[0]] = _place(seq[users[0]], buf, shared, relaxed, inside, wrap)
            return dataclasses.replace(stmt, seq=tuple(seq))
        return wrap(stmt, relaxed)
    if t in (S.Allocate, S.DeclBuffer, S.AttrStmt, S.AllocateConst) or \
            t is S.LetStmt and not _uses(stmt.value, buf.data):
        return dataclasses.replace(stmt, body=_place(stmt.body, buf, shared, relaxed, inside,
                                                     wrap))
    return wrap(stmt, relaxed)


def _compact_shared(buf, body, relaxed):
    """(new buffer, reindex) with the box of buf's accesses in body, thread indices relaxed."""
    acc = accesses(body, buf)
    if not acc:
        return None
    ranges = _ranges(body, dict(relaxed))
    shape, plans = [], []
    for d in range(len(buf.shape)):
        parts = []
        for ix in acc:
            coeffs, const, terms = affine(ix[d])
            inner, outer, lo, hi = {}, [], const, const
            for k, c in coeffs.items():
                r = bound(terms[k], ranges) if isinstance(k, tuple) else ranges.get(k)
                if r is None:
                    outer.append((_key(terms[k]), c))
                    continue
                inner[k] = (c, terms[k])
                lo, hi = lo + min(c * r[0], c * r[1]), hi + max(c * r[0], c * r[1])
            parts.append((tuple(sorted(outer, key=repr)), lo, hi))
        old = buf.shape[d]
        if len({p[0] for p in parts}) != 1 or not isinstance(old, E.IntImm):
            shape.append(old)
            plans.append(None)
            continue
        lo, hi = min(p[1] for p in parts), max(p[2] for p in parts)
        if hi - lo + 1 >= old.value or (lo < 0 and not parts[0][0]):
            shape.append(old)
            plans.append(None)
            continue
        shape.append(E.IntImm(old.dtype, hi - lo + 1))
        plans.append(lo)
    strides, acc_n = [], 1
    for s in reversed(shape):
        strides.append(E.IntImm("int32", acc_n))
        acc_n = acc_n * s.value if isinstance(s, E.IntImm) and acc_n is not None else None
        if acc_n is None:
            return None
    new_buf = dataclasses.replace(buf, shape=tuple(shape), strides=tuple(reversed(strides)))

    def reindex(indices):
        out = []
        for d, ix in enumerate(indices):
            if plans[d] is None:
                out.append(ix)
                continue
            coeffs, const, terms = affine(ix)
            e = None
            for k, c in coeffs.items():
                r = bound(terms[k], ranges) if isinstance(k, tuple) else ranges.get(k)
                if r is None:
                    continue
                t = terms[k] if c == 1 else E.Mul(terms[k], E.IntImm(ix.dtype, c), ix.dtype)
                e = t if e is None else E.Add(e, t, ix.dtype)
            k0 = const - plans[d]
            e = E.IntImm(ix.dtype, k0) if e is None else \
                E.Add(e, E.IntImm(ix.dtype, k0), ix.dtype) if k0 else e
            out.append(e)
        return tuple(out)
    return new_buf, reindex


@dataclasses.dataclass(frozen=True, eq=False)
class _Here(S.Stmt):
    stmt: S.Stmt
    relaxed: dict


def place_scoped_buffers(body: S.Stmt) -> S.Stmt:
    """Move each shared/local allocation inside the thread bindings (see the module doc)."""
    def fn(x):
        if not (isinstance(x, S.Allocate) and isinstance(x.body, S.DeclBuffer)):
            return None
        buf = x.body.buffer
        scope = buf.scope or "global"
        if not scope.startswith(("shared", "local", "warp")) or buf.strides or \
                buf.elem_offset is not None:
            return None
        shared = scope.startswith("shared")
        placed = []

        def wrap(s, relaxed):
            placed.append((s, relaxed))
            return _Here(s, relaxed)
        moved = _place(x.body.body, buf, shared, {}, False, wrap)
        if not placed:
            return None
        new_buf, reindex = buf, None
        if shared:
            res = _compact_shared(buf, placed[0][0], placed[0][1])
            if res is not None:
                new_buf, reindex = res

        def put(h):
            s = h.stmt
            if reindex is not None:
                def rb(y):
                    if isinstance(y, (E.BufferLoad, S.BufferStore)) and y.buffer is buf:
                        return dataclasses.replace(y, buffer=new_buf, indices=reindex(y.indices))
                    return None
                s = transform(s, rb)
            return allocate(new_buf, s, x.span)
        return transform(moved, lambda y: put(y) if isinstance(y, _Here) else None)
    return transform(body, fn)
