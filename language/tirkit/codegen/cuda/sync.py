"""GPU pass: insert `T.tvm_storage_sync("shared")` (`__syncthreads()`) where threads of a
block exchange data through shared memory.

The rule is the one of TVM's storage-sync pass, on the statements of the per-thread program
(below a kernel's blockIdx bindings, sibling threadIdx loops one after another):

* before a statement that reads a shared buffer written since the last barrier at another
  index (so possibly by another thread): read after write;
* before a statement that writes a shared buffer read since the last barrier at another
  index: write after read (another thread may still need the old value).

A loop is scanned as its body running again after itself (what the end of one iteration left
unsynchronized meets the start of the next), so the barrier that guards a loop-carried
exchange lands inside the loop.  Accesses at the very same index expression are one thread's
own (TVM's assumption) when the index uses every thread dimension of the kernel (TVM asks
for the innermost); `s[0]`, written by thread 0 and read by all, is an exchange.  Barriers
go only between the statements of a sequence or loop body, never under a condition, so
every thread reaches every barrier.
"""
from __future__ import annotations

import dataclasses

from ...ir import expr as E
from ...ir import stmt as S
from ...ir.visit import find_all, vars_in, walk
from ...ir.hash import structural_key
from .scopes import is_thread_binding

SYNC_OP = "tvm_storage_sync"


def barrier(span=None) -> S.Stmt:
    return S.Evaluate(E.Call("int32", SYNC_OP, (E.StringImm("shared"),)), span=span)


def is_barrier(s) -> bool:
    """A block-wide barrier (`__syncthreads()`); `T.tvm_storage_sync("warp")` is not one."""
    return isinstance(s, S.Evaluate) and isinstance(s.value, E.Call) and \
        s.value.op == SYNC_OP and not is_warp_barrier(s)


def is_warp_barrier(s) -> bool:
    """`T.tvm_storage_sync("warp")`: `__syncwarp()`, ordering the memory accesses of the
    threads of one warp (the tensor-core intrinsics put it between a tile's store and the
    next load of it by other lanes)."""
    return isinstance(s, S.Evaluate) and isinstance(s.value, E.Call) and \
        s.value.op == SYNC_OP and len(s.value.args) == 1 and \
        isinstance(s.value.args[0], E.StringImm) and s.value.args[0].value == "warp"


def _shared(buf) -> bool:
    return (buf.scope or "").startswith("shared")


def _summary(stmt, threads):
    """(reads, writes): {id(data): set of (index key, per-thread)} of the shared accesses
    under stmt; per-thread: the index uses an index of each thread dimension of the kernel
    (`threads`: one set of variable ids per threadIdx tag), so two threads never meet at it
    (TVM's storage-sync pass asks the same of the innermost thread index)."""
    reads, writes = {}, {}

    def key(indices):
        used = {id(v) for v in vars_in(tuple(indices))}
        return (tuple(structural_key(i) for i in indices),
                all(used & ids for ids in threads))

    def fn(x):
        if isinstance(x, E.BufferLoad) and _shared(x.buffer):
            reads.setdefault(id(x.buffer.data), set()).add(key(x.indices))
        elif isinstance(x, S.BufferStore) and _shared(x.buffer):
            writes.setdefault(id(x.buffer.data), set()).add(key(x.indices))
        elif isinstance(x, E.Call) and x.op == "tvm_access_ptr" and \
                (getattr(x.args[1].type_annotation, "scope", None) or "").startswith("shared"):
            # a pointer into shared memory (a wmma load or store): its whole extent
            k = (("ptr", structural_key(x.args[2]), structural_key(x.args[3])), False)
            mask = x.args[4].value if isinstance(x.args[4], E.IntImm) else 3
            if mask & 1:
                reads.setdefault(id(x.args[1]), set()).add(k)
            if mask & 2:
                writes.setdefault(id(x.args[1]), set()).add(k)
    walk(stmt, fn)
    return reads, writes


def _conflict(a, b) -> bool:
    """Accesses a and b ({data: index keys}) may touch one element from two threads: they
    use two index expressions, or one that is not per-thread."""
    for d, ka in a.items():
        kb = b.get(d)
        if kb and (len(ka | kb) > 1 or not all(per_thread for _, per_thread in ka | kb)):
            return True
    return False


def _merge(into, more):
    for d, ks in more.items():
        into.setdefault(d, set()).update(ks)


class _State:
    def __init__(self, threads=()):
        self.reads, self.writes = {}, {}
        self.threads = threads          # per threadIdx tag of the kernel: its variables

    def copy(self):
        s = _State(self.threads)
        s.reads = {k: set(v) for k, v in self.reads.items()}
        s.writes = {k: set(v) for k, v in self.writes.items()}
        return s


def _needs(state, reads, writes) -> bool:
    return _conflict(state.writes, reads) or _conflict(state.reads, writes)


def _scan(stmt, state):
    """stmt with barriers inserted, given the accesses unsynchronized before it; state is
    updated to what is unsynchronized after it."""
    if isinstance(stmt, S.SeqStmt):
        out = []
        for s in stmt.seq:
            out.extend(_scan_item(s, state))
        return dataclasses.replace(stmt, seq=tuple(out)) if len(out) != len(stmt.seq) or \
            any(a is not b for a, b in zip(out, stmt.seq)) else stmt
    return _wrap_seq(_scan_item(stmt, state), stmt)


def _wrap_seq(items, orig):
    if len(items) == 1:
        return items[0]
    return S.SeqStmt(tuple(items), span=getattr(orig, "span", None))


def _scan_item(s, state):
    if is_barrier(s):
        state.reads, state.writes = {}, {}
        return [s]
    if isinstance(s, (S.For, S.SeqStmt, S.Allocate, S.DeclBuffer, S.LetStmt, S.AttrStmt)):
        reads, writes = _summary(s, state.threads)
        if not reads and not writes:
            return [s]
        out = []
        if _needs(state, reads, writes):            # the earliest place: before the whole
            out.append(barrier(getattr(s, "span", None)))
            state.reads, state.writes = {}, {}
        if isinstance(s, S.For) and s.kind == "thread_binding":
            return out + [dataclasses.replace(s, body=_scan(s.body, state))]
        if isinstance(s, S.For):
            before = state.copy()
            once = state.copy()
            _scan(s.body, once)                     # one iteration: what it leaves behind
            entry = before.copy()
            _merge(entry.reads, once.reads)
            _merge(entry.writes, once.writes)
            body = _scan(s.body, entry)             # the next iterations meet it
            state.reads, state.writes = entry.reads, entry.writes
            return out + [dataclasses.replace(s, body=body)]
        if isinstance(s, S.SeqStmt):
            return out + [_scan(s, state)]
        return out + [dataclasses.replace(s, body=_scan(s.body, state))]
    reads, writes = _summary(s, state.threads)
    out = []
    if _needs(state, reads, writes):
        out.append(barrier(getattr(s, "span", None)))
        state.reads, state.writes = {}, {}
    _merge(state.reads, reads)
    _merge(state.writes, writes)
    out.append(s)
    return out


def _thread_vars(kernel) -> tuple:
    """One set of variable ids per threadIdx tag bound in kernel."""
    tags = {}
    for x in find_all(kernel, lambda x: is_thread_binding(x, "threadIdx"), S.For):
        tags.setdefault(x.thread_tag, set()).add(id(x.loop_var))
    return tuple(tags.values())


def insert_syncs(body: S.Stmt) -> S.Stmt:
    """Barriers in every kernel's per-thread program: below its outermost blockIdx binding
    (every thread of the block runs all of it, sibling threadIdx loops one after another), or
    below its threadIdx binding in a kernel of one block."""
    def visit(s):
        if isinstance(s, S.For) and s.kind == "thread_binding" and \
                (s.thread_tag or "").startswith(("threadIdx", "blockIdx")):
            return dataclasses.replace(s, body=_scan(s.body, _State(_thread_vars(s))))
        if isinstance(s, S.For):
            return dataclasses.replace(s, body=visit(s.body))
        if isinstance(s, S.SeqStmt):
            seq = tuple(visit(x) for x in s.seq)
            return dataclasses.replace(s, seq=seq)
        if isinstance(s, (S.Allocate, S.DeclBuffer, S.LetStmt, S.AttrStmt, S.AllocateConst)):
            return dataclasses.replace(s, body=visit(s.body))
        if isinstance(s, S.IfThenElse):
            return dataclasses.replace(s, then_case=visit(s.then_case),
                                       else_case=visit(s.else_case) if s.else_case else None)
        return s
    return visit(body)
