"""GPU pass: virtual threads (`vthread` bindings) interleaved as TVM's InjectVirtualThread
interleaves them.

A vthread binding is not a loop around its body: each statement that depends on the
virtual thread runs once per virtual thread, in place, and a statement that does not runs
once.  In a tiled matmul under `for vy in T.thread_binding(2, "vthread.y")`, the copies of
A and B to shared memory run once per thread, and only the accumulation into the register
tile runs for each `vy`: as a loop around the whole body, every shared copy (and barrier)
ran twice.

A statement depends on the virtual thread (is *touched*) when it uses its variable, a
variable whose value does (a `let`, a loop bound), or a buffer that a touched statement
stored to (found by a fixed point over the body, as TVM's VarTouchedAnalysis does).  The
binding sinks through sequences, loops, conditions and `let`s that are not touched, and
becomes a serial loop over each touched statement it reaches.  It stops at (stays around)
a touched loop bound, condition or `let` value, a vectorized loop, and an allocation of a
touched buffer: each virtual thread has its own copy of that buffer (TVM widens it by the
number of virtual threads).
"""
from __future__ import annotations

import dataclasses

from ...ir import expr as E
from ...ir import stmt as S
from ...ir.visit import rebuild, walk
from .scopes import allocation_scope


def _is_vthread(s) -> bool:
    return isinstance(s, S.For) and s.kind == "thread_binding" and \
        (s.thread_tag or "").startswith("vthread")


def _used(node, handles=False) -> set:
    """ids of the variables under node, buffers' data variables of its accesses included
    (`handles`: only those, and handle variables: what a call may write through)."""
    out = set()

    def fn(x):
        if isinstance(x, E.Var):
            if not handles or x.dtype == "handle":
                out.add(id(x))
            return False
        if isinstance(x, (E.BufferLoad, S.BufferStore, E.BufferRef)):
            out.add(id(x.buffer.data))
        return True
    walk(node, fn)
    return out


def _touched(body, var) -> set:
    """ids of the variables (and buffers' data variables) that depend on `var` in body."""
    edges = []                     # (ids a definition reads, ids it defines)

    def fn(x):
        if isinstance(x, S.LetStmt):
            edges.append((_used(x.value), {id(x.var)}))
        elif isinstance(x, S.For):
            edges.append((_used((x.min, x.extent)), {id(x.loop_var)}))
        elif isinstance(x, S.BufferStore):
            edges.append((_used((x.value, x.indices)), {id(x.buffer.data)}))
        elif isinstance(x, S.Evaluate):          # a call writes the memory it is given
            edges.append((_used(x.value), _used(x.value, handles=True)))
        elif isinstance(x, S.Allocate):
            edges.append((_used((x.extents, x.condition)), {id(x.buffer_var)}))
        return True
    walk(body, fn)
    touched = {id(var)}
    grown = True
    while grown:
        grown = False
        for reads, defines in edges:
            if reads & touched and not defines <= touched:
                touched |= defines
                grown = True
    return touched


def _inject(loop: S.For, touched: set, allocated: set) -> S.Stmt:
    def around(s):
        return S.For(loop.loop_var, loop.min, loop.extent, "serial", s, span=loop.span)

    def hit(node):
        return bool(_used(node) & touched)

    def push(s):
        t = type(s)
        if t is S.SeqStmt:
            return dataclasses.replace(s, seq=tuple(push(x) for x in s.seq))
        if t is S.For:
            if s.kind == "vectorized" or hit((s.min, s.extent)):
                return around(s)
            return dataclasses.replace(s, body=push(s.body))
        if t is S.IfThenElse:
            if hit(s.condition):
                return around(s)
            return dataclasses.replace(s, then_case=push(s.then_case),
                                       else_case=None if s.else_case is None
                                       else push(s.else_case))
        if t is S.LetStmt or t is S.AssertStmt:
            if hit(s.value if t is S.LetStmt else (s.condition, s.message)):
                return around(s)
            return dataclasses.replace(s, body=push(s.body))
        if t is S.Allocate and id(s.buffer_var) in touched and \
                not allocation_scope(s).startswith("shared"):
            wide = _widen(s, loop)                 # one copy per virtual thread
            if wide is None:
                return around(s)
            s = wide
        if t is S.Allocate or t is S.AllocateConst:
            if t is S.AllocateConst and id(s.buffer_var) in touched:
                return around(s)
            return dataclasses.replace(s, body=push(s.body))
        if t is S.DeclBuffer and id(s.buffer.data) in touched and \
                id(s.buffer.data) not in allocated:
            return around(s)          # it may allocate (`T.decl_buffer` without data)
        if t is S.DeclBuffer or t is S.AttrStmt:
            return dataclasses.replace(s, body=push(s.body))
        return around(s) if hit(s) else s
    return push(loop.body)


def _widen(alloc, loop):
    """A flat allocation made inside a virtual-thread binding, with one copy per virtual
    thread laid end to end (element `i` of thread `v` at `i + v * size`), as TVM widens a
    touched allocation; None where its size or its uses are not plain (a symbolic size, an
    address taken by a call)."""
    size = 1
    for x in alloc.extents:
        if not isinstance(x, E.IntImm):
            return None
        size *= x.value
    if not isinstance(loop.extent, E.IntImm) or not E.is_const_int(loop.min, 0):
        return None
    data = alloc.buffer_var
    plain = []

    def check(x):
        if isinstance(x, (E.BufferLoad, S.BufferStore)) and x.buffer.data is data:
            plain.append(len(x.indices) == 1 and not x.buffer.strides and
                         x.buffer.elem_offset is None)
        elif isinstance(x, E.BufferRef) and x.buffer.data is data or \
                isinstance(x, E.Call) and any(a is data for a in x.args):
            plain.append(False)
        return True
    walk(alloc.body, check)
    if not all(plain):
        return None
    dtype = alloc.extents[0].dtype if alloc.extents else "int32"
    wide = E.IntImm(dtype, size * loop.extent.value)
    offset = E.Mul(loop.loop_var, E.IntImm(loop.loop_var.dtype, size), loop.loop_var.dtype)
    buffers = {}

    def widened(b):
        if id(b) not in buffers:
            buffers[id(b)] = dataclasses.replace(b, shape=(wide,))
        return buffers[id(b)]

    def shift(i):
        if isinstance(i, E.Ramp):
            return dataclasses.replace(i, base=E.Add(i.base, offset, i.base.dtype))
        return E.Add(i, offset, i.dtype)

    def fn(new, old):
        if isinstance(new, (E.BufferLoad, S.BufferStore)) and new.buffer.data is data:
            return dataclasses.replace(new, buffer=widened(new.buffer),
                                       indices=(shift(new.indices[0]),))
        if isinstance(new, S.DeclBuffer) and new.buffer.data is data:
            return dataclasses.replace(new, buffer=widened(new.buffer))
        return None
    return dataclasses.replace(alloc, extents=(wide,), body=rebuild(alloc.body, fn))


def inject_virtual_threads(body: S.Stmt) -> S.Stmt:
    """Each vthread binding in body sunk to the statements that depend on it (inner
    bindings first, as TVM injects them)."""
    allocated = set()
    walk(body, lambda x: allocated.add(id(x.buffer_var)) if isinstance(x, S.Allocate) else True)

    def fn(new, old):
        if not _is_vthread(new):
            return None
        return _inject(new, _touched(new.body, new.loop_var), allocated)
    return rebuild(body, fn)
