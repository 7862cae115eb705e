"""Statements -> LLVM: memory access (scalar, contiguous vector, masked, gather/scatter),
loops (serial, vectorized as LLVM vector code, parallel outlined onto the thread pool),
allocations (stack for small constant sizes, heap otherwise), conditions, and leaving early
(`T.ret`, `break`, `continue`)."""
from __future__ import annotations

import contextlib

import llvmlite.ir as ir

from ...ir import expr as E
from ...ir import stmt as S
from ...ir.dtype import bytes_of, parse_dtype
from ...ir.visit import contains, walk
from ...arith.linear import coefficient
from ..errors import THREAD_BINDING, UNSUPPORTED, fail
from ..passes.control import BREAK, RET, control_op
from . import types as T
from .address import element_ptr
from .pipeline import left_rolled

LOOP_HINTS = {"unroll": "llvm.loop.unroll.enable", "vectorize": "llvm.loop.vectorize.enable"}
STACK_LIMIT = 128 * 1024          # bytes: larger or symbolic allocations go to the heap


class StmtMixin:
    # ---- memory -------------------------------------------------------------------
    def index(self, e):
        """An i64 offset (scalar or vector) from an index expression."""
        old, self.index_mode = self.index_mode, True
        try:
            v = self.expr(e)
        finally:
            self.index_mode = old
        t = T.with_lanes(T.I64, T.lanes(v.type))
        if T.element(v.type).width == 64:
            return v
        unsigned = parse_dtype(e.dtype).kind == "uint"
        k = T.int_value(v)
        if k is not None:                  # a constant offset
            w = v.type.width
            return T.const(T.I64, k if unsigned or k < 1 << (w - 1) else k - (1 << w))
        return self.b.zext(v, t) if unsigned else self.b.sext(v, t)

    def _varying(self, e) -> bool:
        if not self.varying:
            return False
        return contains(e, lambda x: id(x) in self.varying, E.Var)

    def _access(self, buf, idx):
        """('scalar', ptr) | ('vector', ptr, n) contiguous | ('gather', ptrs, n)."""
        base_ptr = self.ptrs.get(id(buf.data))
        if base_ptr is None:
            fail(UNSUPPORTED, f"buffer '{buf.name}' has no storage here", buf)
        mt = T.memory_type(buf.dtype)
        if isinstance(idx, E.Ramp) and E.is_const_int(idx.stride, 1) and \
                not self._varying(idx.base):
            return "vector", element_ptr(self, base_ptr, idx.base, mt), idx.lanes
        if not self._varying(idx) and parse_dtype(idx.dtype).lanes == 1:
            return "scalar", element_ptr(self, base_ptr, idx, mt)
        if self.vec is not None and not isinstance(idx, E.Ramp):
            var, base, n = self.vec
            others = set(self.varying) - {id(var)}
            c = coefficient(idx, var)
            if c == 1 and not self._uses_any(idx, others):
                saved = self.vars[id(var)]
                self.bind(var, base)
                self.varying.discard(id(var))
                try:
                    off = self.index(idx)
                finally:
                    self.bind(var, saved)
                    self.varying.add(id(var))
                return "vector", self.b.gep(base_ptr, [off], source_etype=mt), n
        off = self.index(idx)
        ptrs = self.b.gep(base_ptr, [off], source_etype=mt)
        ptrs.type = ir.VectorType(T.PTR, T.lanes(off.type))     # a vector of addresses
        return "gather", ptrs, T.lanes(off.type)

    def _uses_any(self, e, ids):
        return bool(ids) and contains(e, lambda x: id(x) in ids, E.Var)

    def load(self, e: E.BufferLoad):
        return self.checked_access(e.buffer, e.indices[0], e, lambda: self._load(e), False)

    def _load(self, e: E.BufferLoad):
        buf = e.buffer
        mt = T.memory_type(buf.dtype)
        align = max(1, bytes_of(parse_dtype(buf.dtype).element()))
        kind, p, *rest = self._access(buf, e.indices[0])
        if kind == "scalar":
            v = self.b.load(p, typ=mt, align=align)
            return self.from_memory(v, buf.dtype)
        n = rest[0]
        vt = ir.VectorType(mt, n)
        mask = self.mask_for(n)
        if kind == "vector":
            if mask is None:
                v = self.b.load(p, typ=vt, align=align)
            else:
                v = self.call_named(f"llvm.masked.load.{T.mangle(vt)}.p0", vt,
                                    [p, T.I32(align), mask, ir.Constant(vt, ir.Undefined)])
        else:
            if mask is None:
                mask = T.const(ir.VectorType(T.I1, n), 1)
            v = self.call_named(f"llvm.masked.gather.{T.mangle(vt)}.v{n}p0", vt,
                                [p, T.I32(align), mask, ir.Constant(vt, ir.Undefined)])
        return self.from_memory(v, buf.dtype)

    def store(self, s: S.BufferStore):
        value = self.to_memory(self.expr(s.value), s.buffer.dtype)
        self.checked_access(s.buffer, s.indices[0], s, lambda: self._store(s, value), True)

    def _store(self, s: S.BufferStore, value):
        buf = s.buffer
        mt = T.memory_type(buf.dtype)
        align = max(1, bytes_of(parse_dtype(buf.dtype).element()))
        kind, p, *rest = self._access(buf, s.indices[0])
        if kind == "scalar":
            if isinstance(value.type, ir.VectorType) and not isinstance(mt, ir.VectorType):
                value = self.b.extract_element(value, T.I32(value.type.count - 1))
            if self.mask is not None:
                self._guarded(lambda: self.b.store(value, p, align=align))
            else:
                self.b.store(value, p, align=align)
            return
        n = rest[0]
        vt = ir.VectorType(mt, n)
        value = self.splat(value, n)
        mask = self.mask_for(n)
        if kind == "vector":
            if mask is None:
                self.b.store(value, p, align=align)
            else:
                self.call_named(f"llvm.masked.store.{T.mangle(vt)}.p0", T.VOID,
                                [value, p, T.I32(align), mask])
        else:
            if mask is None:
                mask = T.const(ir.VectorType(T.I1, n), 1)
            self.call_named(f"llvm.masked.scatter.{T.mangle(vt)}.v{n}p0", T.VOID,
                            [value, p, T.I32(align), mask])

    def _guarded(self, emit):
        """Run emit only when some lane of the current mask is on."""
        m = self.mask
        n = T.lanes(m.type)
        anyon = self.b.icmp_unsigned("!=", self.b.bitcast(m, ir.IntType(n)), ir.IntType(n)(0))
        with self.b.if_then(anyon):
            emit()

    def from_memory(self, v, dtype):
        if parse_dtype(dtype).kind == "bool":
            return self.b.icmp_unsigned("!=", v, T.const(v.type, 0))
        return v

    def to_memory(self, v, dtype):
        if parse_dtype(dtype).kind == "bool":
            return self.b.zext(v, T.with_lanes(T.I8, T.lanes(v.type)))
        return v

    def _x_BufferLoad(self, e):
        return self.load(e)

    # ---- masks --------------------------------------------------------------------
    def mask_for(self, n):
        if self.mask is None:
            return None
        return self.splat(self.mask, n) if T.lanes(self.mask.type) != n else self.mask

    @contextlib.contextmanager
    def masked(self, cond):
        old = self.mask
        self.mask = cond if old is None else self.b.and_(*self.match(old, cond))
        try:
            yield
        finally:
            self.mask = old

    # ---- statements ---------------------------------------------------------------
    def stmt(self, s):
        m = getattr(self, "_s_" + type(s).__name__, None)
        if m is None:
            fail(UNSUPPORTED, f"the CPU backend cannot compile {type(s).__name__}", s)
        m(s)

    def _s_SeqStmt(self, s):
        for x in s.seq:
            self.stmt(x)

    def _s_BufferStore(self, s):
        self.store(s)

    def _s_Evaluate(self, s):
        op = control_op(s)
        if op is not None:
            return self.leave(s.value)
        if isinstance(s.value, E.Call):
            self.expr(s.value)

    # ---- leaving early: T.ret, break, continue ------------------------------------
    def leave(self, call):
        """Emit T.ret / break / continue (`passes.control` checked where they stand).  Code
        after them in the same block is dead: it goes to a block without predecessors."""
        if call.op == RET:
            ret_dtype = self.ret_dtype
            v = self.cast(self.expr(call.args[0]), call.args[0].dtype, ret_dtype)
            if self.result is None or T.lanes(v.type) != 1:
                fail(UNSUPPORTED, "T.ret cannot return from here", call)
            self.b.store(self.to_memory(v, ret_dtype), self.result, align=8)
            flag = self.b.gep(self.result, [T.I64(8)], source_etype=T.I8)
            self.b.store(T.I8(1), flag)
            self._free_heap(0)
            self.b.ret_void()
        else:
            if not self.loop_targets:
                fail(UNSUPPORTED, "`break`/`continue` outside a loop", call)
            cont, brk, depth = self.loop_targets[-1]
            self._free_heap(depth)
            self.b.branch(brk if call.op == BREAK else cont)
        self.b.position_at_end(self.b.append_basic_block("dead"))

    def _free_heap(self, depth):
        for p in reversed(self.heap[depth:]):
            self.call_named("free", T.VOID, [p])

    @contextlib.contextmanager
    def loop_scope(self, cont, brk):
        self.loop_targets.append((cont, brk, len(self.heap)))
        try:
            yield
        finally:
            self.loop_targets.pop()

    def _s_LetStmt(self, s):
        v = self.expr(s.value)
        self.bind(s.var, v)
        if T.lanes(v.type) > 1 and parse_dtype(s.var.dtype).lanes == 1:
            self.varying.add(id(s.var))
        self.stmt(s.body)

    def _s_AttrStmt(self, s):
        self.stmt(s.body)

    def _s_AssertStmt(self, s):
        self.stmt(s.body)

    def _s_DeclBuffer(self, s):
        if id(s.buffer.data) not in self.ptrs:
            b = s.buffer
            if id(b.data) in self.vars:      # `data=` a pointer value: no storage we know
                fail(UNSUPPORTED, f"buffer '{b.name}' has no storage", s)
            # `T.decl_buffer(shape, dtype)` without `data=` allocates its storage
            return self._s_Allocate(S.Allocate(b.data, b.dtype, tuple(b.shape) or
                                               (E.IntImm("int64", 1),), E.IntImm("bool", 1), s,
                                               span=s.span))
        self.stmt(s.body)

    def _s_AllocateConst(self, s):
        self.ptrs[id(s.buffer_var)] = self.shared.constant_global(s.const_name)
        self.storage_size(s.buffer_var, int(self.shared.constants[s.const_name].nbytes))
        self.stmt(s.body)

    def _s_Allocate(self, s):
        size = None
        n = 1
        for d in s.extents:
            if isinstance(d, E.IntImm):
                n *= d.value
            else:
                n = None
                break
        elem = max(1, bytes_of(s.dtype))
        mt = T.memory_type(s.dtype)
        if n is not None and n * elem <= STACK_LIMIT:
            p = self.entry_builder.alloca(ir.ArrayType(mt, max(n, 1)))
            p.align = 64
            p.type = T.PTR                       # opaque: indexed by element type
            self.ptrs[id(s.buffer_var)] = p
            self.storage_size(s.buffer_var, n * elem)
            self.stmt(s.body)
            return
        size = T.I64(elem)
        for d in s.extents:
            size = self.b.mul(size, self.index(d))
        self.storage_size(s.buffer_var, size, None if n is None else n * elem)
        size = self.b.and_(self.b.add(size, T.I64(63 + 64)), T.I64(~63))
        p = self.call_named("aligned_alloc", T.PTR, [T.I64(64), size])
        self.ptrs[id(s.buffer_var)] = p
        self.heap.append(p)
        try:
            self.stmt(s.body)
        finally:
            self.heap.pop()
        self.call_named("free", T.VOID, [p])

    def _s_IfThenElse(self, s):
        c = self.condition(s.condition)
        if T.lanes(c.type) > 1:
            with self.masked(c):
                self.stmt(s.then_case)
            if s.else_case is not None:
                with self.masked(self.b.not_(c)):
                    self.stmt(s.else_case)
            return
        if s.else_case is None:
            with self.b.if_then(c):
                self.stmt(s.then_case)
            return
        with self.b.if_else(c) as (then, otherwise):
            with then:
                self.stmt(s.then_case)
            with otherwise:
                self.stmt(s.else_case)

    def _s_While(self, s):
        bl = self.b
        head = bl.append_basic_block("while.head")
        body = bl.append_basic_block("while.body")
        end = bl.append_basic_block("while.end")
        bl.branch(head)
        bl.position_at_end(head)
        bl.cbranch(self.condition(s.condition), body, end)
        bl.position_at_end(body)
        with self.loop_scope(head, end):
            self.stmt(s.body)
        bl.branch(head)
        bl.position_at_end(end)

    # ---- loops --------------------------------------------------------------------
    def _s_For(self, s):
        if s.kind == "thread_binding":
            fail(THREAD_BINDING, f"loop '{s.loop_var.name}' is bound to GPU thread "
                 f"'{s.thread_tag}'", s)
        if s.kind == "parallel" and self.vec is None:
            return self.parallel(s)
        if s.kind == "vectorized" and self.vec is None and self._vectorizable(s):
            return self.vectorized(s)
        hint = "unroll" if s.kind == "unrolled" else None   # vectorized: LLVM decides
        if hint is None and s.kind == "serial" and self.shared.unroll_count and \
                left_rolled(s):
            hint = self.shared.unroll_count
        if T.value_type(s.loop_var.dtype) == T.I32:       # counted in 64 bits, see `loop`
            lo, ext, dtype = self.index(s.min), self.index(s.extent), "int64"
        else:
            lo, ext, dtype = self.expr(s.min), self.expr(s.extent), s.loop_var.dtype
        self.loop(s.loop_var, lo, self.arith(E.Add, lo, ext, dtype),
                  lambda: self.stmt(s.body), hint=hint)

    def loop(self, var, lo, end, body, step=1, hint=None):
        """A counted loop.  An int32 variable counts in 64 bits (the type of addresses) and
        its int32 value is that counter truncated: index arithmetic then uses the counter
        directly (`ExprMixin.wide`)."""
        bl = self.b
        t = T.value_type(var.dtype)
        wide = t == T.I32
        if wide:
            t = T.I64
            lo = self.sext64(lo) if lo.type != t else lo
            end = self.sext64(end) if end.type != t else end
        lo = self.cast(lo, f"int{lo.type.width}", var.dtype) if lo.type != t else lo
        end = self.cast(end, f"int{end.type.width}", var.dtype) if end.type != t else end
        pre = bl.block
        head = bl.append_basic_block(f"for.{var.name}")
        body_bb = bl.append_basic_block(f"for.{var.name}.body")
        latch = bl.append_basic_block(f"for.{var.name}.next")      # `continue` goes here
        exit_bb = bl.append_basic_block(f"for.{var.name}.end")
        bl.branch(head)
        bl.position_at_end(head)
        i = bl.phi(t, name=var.name)
        i.add_incoming(lo, pre)
        bl.cbranch(bl.icmp_signed("<", i, end), body_bb, exit_bb)
        bl.position_at_end(body_bb)
        if wide:
            narrow = bl.trunc(i, T.I32)
            self.bind(var, narrow)
            self.wide_vars[id(var)] = (narrow, i)
        else:
            self.bind(var, i)
        with self.loop_scope(latch, exit_bb):
            body()
        bl.branch(latch)
        bl.position_at_end(latch)
        nxt = bl.add(i, ir.Constant(t, step))
        nxt.flags.append("nsw")
        i.add_incoming(nxt, latch)
        br = bl.branch(head)
        if hint is not None:       # made a distinct loop ID by pipeline.loop_metadata
            node = [ir.MetaDataString(self.module, LOOP_HINTS[hint])] if isinstance(hint, str) \
                else [ir.MetaDataString(self.module, "llvm.loop.unroll.count"), T.I32(hint)]
            br.set_metadata("llvm.loop", self.module.add_metadata(node))
        bl.position_at_end(exit_bb)

    def _vectorizable(self, s) -> bool:
        if not isinstance(s.extent, E.IntImm) or s.extent.value < 2:
            return False
        bad = []
        ok_stmts = (S.SeqStmt, S.BufferStore, S.LetStmt, S.IfThenElse, S.Evaluate)

        def fn(x):
            if bad:
                return False
            if isinstance(x, S.Stmt) and not isinstance(x, ok_stmts):
                bad.append(x)
            elif isinstance(x, (E.Ramp, E.Broadcast, E.Let)):
                bad.append(x)
            elif isinstance(x, (E.BufferLoad, S.BufferStore)) and \
                    parse_dtype(x.buffer.dtype).lanes != 1:
                bad.append(x)
            elif isinstance(x, E.Call) and x.op.startswith("call_"):
                bad.append(x)
            return not isinstance(x, S.Buffer)
        walk(s.body, fn)
        return not bad

    def vectorized(self, s):
        n = s.extent.value
        width = n if n <= 32 else 16           # longer loops: chunks of 16, masked tail
        lo = self.expr(s.min)
        t = T.value_type(s.loop_var.dtype)
        steps = ir.Constant(ir.VectorType(t, width), [ir.Constant(t, i) for i in range(width)])

        def body(base):
            first = T.int_value(base)
            self.bind(s.loop_var, self.b.add(self.splat(base, width), steps)
                      if first is None else T.const_vector(t, [first + i for i in range(width)]))
            self.varying.add(id(s.loop_var))
            self.vec = (s.loop_var, base, width)
            try:
                self.stmt(s.body)
            finally:
                self.vec = None
                self.varying.discard(id(s.loop_var))
        if width == n:
            body(lo)
            return
        chunk = E.Var(s.loop_var.name + "_c", s.loop_var.dtype)

        def chunked():
            base = self.b.add(lo, self.b.mul(self.vars[id(chunk)], ir.Constant(t, width)))
            body(base)
        self.loop(chunk, ir.Constant(t, 0), ir.Constant(t, n // width), chunked)
        if n % width:                  # the tail: one masked chunk
            on = ir.Constant(ir.VectorType(T.I1, width),
                             [ir.Constant(T.I1, int(i < n % width)) for i in range(width)])
            with self.masked(on):
                body(self.b.add(lo, ir.Constant(t, n - n % width)))
