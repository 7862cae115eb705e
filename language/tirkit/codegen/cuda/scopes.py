"""GPU pass: place `shared` and `local` allocations where a GPU keeps them, then size them.

A `local` (or `warp`) buffer belongs to one thread: its allocation moves inside the thread
bindings that enclose all its uses, and the shared compaction pass (passes/compact.py) sinks
and shrinks it from there, thread indices fixed.

A `shared` buffer belongs to one thread block: its allocation moves inside the blockIdx
bindings, through threadIdx/vthread bindings (which it spans) and through serial loops whose
iterations each touch their own slice of it or write it before they read it (TVM allocates
at the lowest common ancestor of the accesses: analysis/footprint.py, which the
shared-memory rule sizes with); it then shrinks to the box its accesses cover,
relaxed over every thread index below the block and every loop below its place.  The result
gets explicit row-major strides, so the CPU-oriented compaction leaves it as it is (it would
wrongly fix thread indices).
"""
from __future__ import annotations

import dataclasses

from ...ir import expr as E
from ...ir import stmt as S
from ...analysis.footprint import loop_domain, loop_ranges, per_iteration, written_first
from ...analysis.regions import single_trip
from ...ir.visit import rebuild, walk
from ..passes.blocks import allocate
from ..passes.compact import accesses, compact_buffer, with_single_trip
from ..passes.rewrite import transform


_SCOPED = ("shared", "local", "warp", "wmma.")     # scopes a GPU allocates in the kernel


def allocation_scope(alloc: S.Allocate) -> str:
    """The storage scope of what an Allocate makes: its buffer's, else its pointer's."""
    if isinstance(alloc.body, S.DeclBuffer):
        return alloc.body.buffer.scope or "global"
    return getattr(alloc.buffer_var.type_annotation, "scope", None) or "global"


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


def is_thread_binding(s, prefix=("threadIdx", "vthread")) -> bool:
    """Whether s is a loop bound to a thread tag that starts with prefix."""
    return isinstance(s, S.For) and s.kind == "thread_binding" and \
        (s.thread_tag or "").startswith(prefix)


def _place(stmt, buf, shared, relaxed, wrap):
    """Descend from stmt to where buf's allocation goes; wrap(stmt, relaxed) marks it."""
    t = type(stmt)
    if t is S.For and stmt.kind == "thread_binding":
        tag = stmt.thread_tag or ""
        r = dict(relaxed)
        if shared and not tag.startswith("blockIdx") and isinstance(stmt.extent, E.IntImm):
            r[id(stmt.loop_var)] = (0, stmt.extent.value - 1)
        return dataclasses.replace(stmt, body=_place(stmt.body, buf, shared, r, wrap))
    if t is S.For and shared and stmt.kind in ("serial", "unrolled"):
        acc = accesses(stmt.body, buf, vectors=True)
        if acc and (single_trip(stmt) or per_iteration(
                written_first(stmt.body, buf, stmt.loop_var), acc, stmt.loop_var,
                loop_ranges(stmt.body, dict(relaxed)), loop_domain(stmt))):
            return dataclasses.replace(stmt, body=_place(stmt.body, buf, shared,
                                                         with_single_trip(relaxed, stmt),
                                                         wrap))
        return wrap(stmt, relaxed)
    if t is S.SeqStmt:
        users = [i for i, s in enumerate(stmt.seq) if _uses(s, buf.data)]
        if len(users) == 1:
            seq = list(stmt.seq)
            seq[users[0]] = _place(seq[users[0]], buf, shared, relaxed, wrap)
            return dataclasses.replace(stmt, seq=tuple(seq))
        return wrap(stmt, relaxed)
    if t in (S.Allocate, S.DeclBuffer, S.AttrStmt, S.AllocateConst) or \
            t is S.LetStmt and not _uses(stmt.value, buf.data):
        return dataclasses.replace(stmt, body=_place(stmt.body, buf, shared, relaxed,
                                                     wrap))
    return wrap(stmt, relaxed)


def _pointer_use(stmt, data) -> bool:
    """Is data an argument of a call under stmt (an address taken)?"""
    found = []

    def fn(x):
        if found:
            return False
        if isinstance(x, E.Call) and any(a is data for a in x.args):
            found.append(x)
        return None
    walk(stmt, fn)
    return bool(found)


def _row_major(buf):
    """buf with explicit row-major strides (the compaction pass leaves such a buffer alone)."""
    strides, size = [], 1
    for s in reversed(buf.shape):
        if not isinstance(s, E.IntImm):
            return None
        strides.append(E.IntImm("int32", size))
        size *= s.value
    return dataclasses.replace(buf, strides=tuple(reversed(strides)))


def _compact_shared(buf, body, relaxed):
    """(new buffer, reindex) with the box of buf's accesses in body, thread indices relaxed,
    and explicit row-major strides (so the CPU-oriented compaction leaves it alone)."""
    if not accesses(body, buf, vectors=True):
        return None
    done = compact_buffer(buf, body, dict(relaxed))
    new_buf, reindex = done if done is not None else (buf, lambda indices: tuple(indices))
    strides, size = [], 1
    for s in reversed(new_buf.shape):
        if not isinstance(s, E.IntImm):
            return None
        strides.append(E.IntImm("int32", size))
        size *= s.value
    return dataclasses.replace(new_buf, strides=tuple(reversed(strides))), reindex


@dataclasses.dataclass(frozen=True, eq=False)
class _Here(S.Stmt):
    stmt: S.Stmt
    relaxed: dict


def _enclosing_bindings(body):
    """id(Allocate) -> {id(var): (lo, hi)} of the threadIdx/vthread bindings that enclose it:
    a shared buffer allocated below a thread binding is still one buffer for the whole
    block, so those indices are relaxed too."""
    out = {}

    def fn(x):
        if not (isinstance(x, S.For) and x.kind == "thread_binding"):
            return None
        tag = x.thread_tag or ""

        def mark(y):
            if isinstance(y, S.Allocate):
                ranges = out.setdefault(id(y), {})
                if not tag.startswith("blockIdx") and isinstance(x.extent, E.IntImm):
                    ranges[id(x.loop_var)] = (0, x.extent.value - 1)
        walk(x.body, mark)
    walk(body, fn)
    return out


def _allocate_declared(body: S.Stmt) -> S.Stmt:
    """A `T.decl_buffer` of a scoped buffer that no `Allocate` gives storage allocates it
    (the first declaration of its data; later ones are views): written as the Allocate +
    DeclBuffer of the other allocations, it is placed as they are, so a local one declared
    above the thread launches is still one per thread."""
    allocated, first = set(), {}

    def scan(x):
        if isinstance(x, (S.Allocate, S.AllocateConst)):
            allocated.add(id(x.buffer_var))
        elif isinstance(x, S.DeclBuffer):
            first.setdefault(id(x.buffer.data), id(x))
        return True
    walk(body, scan)

    def fn(x, old):
        if not isinstance(x, S.DeclBuffer) or id(x.buffer.data) in allocated or \
                first.get(id(x.buffer.data)) != id(old) or \
                not (x.buffer.scope or "global").startswith(_SCOPED):
            return None
        return allocate(x.buffer, x.body, x.span)
    return rebuild(body, fn)


def _declare_views(body: S.Stmt) -> S.Stmt:
    """An Allocate with no declaration of its storage that one buffer views in place (the
    classic `red_1 = T.Buffer((64,), data=red, scope="shared")` after `red =
    T.allocate(...)`) declares that buffer: written as the other allocations are, it is
    placed as they are."""
    def fn(x, old):
        if not isinstance(x, S.Allocate) or isinstance(x.body, S.DeclBuffer):
            return None
        views, declared = {}, []

        def scan(y):
            b = y.buffer if isinstance(y, (S.BufferStore, E.BufferLoad, S.DeclBuffer)) \
                else None
            if b is not None and b.data is x.buffer_var:
                views[id(b)] = b
                if isinstance(y, S.DeclBuffer):
                    declared.append(b)
        walk(x.body, scan)
        if len(views) != 1 or declared:
            return None
        (buf,) = views.values()
        return dataclasses.replace(x, body=S.DeclBuffer(buf, x.body, span=x.span))
    return rebuild(body, fn)


def place_scoped_buffers(body: S.Stmt) -> S.Stmt:
    """Move each shared/local allocation inside the thread bindings (see the module doc)."""
    body = _allocate_declared(_declare_views(body))
    enclosing = _enclosing_bindings(body)

    def fn(x, old):
        if not (isinstance(x, S.Allocate) and isinstance(x.body, S.DeclBuffer)):
            return None
        buf = x.body.buffer
        scope = buf.scope or "global"
        if not scope.startswith(_SCOPED) or buf.strides or \
                buf.elem_offset is not None:
            return None
        shared = scope.startswith("shared")
        # a buffer some call reaches through its pointer (wmma fragments, tvm_access_ptr
        # operands) keeps its shape: the call's offsets index it as declared
        opaque = scope.startswith("wmma.") or _pointer_use(x.body.body, buf.data)
        placed = []

        def wrap(s, relaxed):
            placed.append((s, relaxed))
            return _Here(s, relaxed)
        relaxed = enclosing.get(id(old), {})
        moved = _place(x.body.body, buf, shared, dict(relaxed) if shared else {}, wrap)
        if not placed:
            return None
        new_buf, reindex = buf, None
        if opaque:
            new_buf = _row_major(buf) or buf
        elif shared:
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
    return rebuild(body, fn)
