"""One LLVM module per lowered PrimFunc.

    void tirkit_<name>(ptr buffers, ptr scalars, ptr launch, ptr result)  # the runtime calls
      -> tirkit_<name>_impl(ptr noalias A, ..., i32 n, ..., ptr launch, ptr result)

`T.ret(value)` stores the value at result[0..8) (its memory type: bool as one byte, bfloat16
as its bits), sets the byte result[8] to 1 and returns; the runtime reads it from there.

A parallel loop is outlined: its body becomes `<fn>_parK_body(i64 begin, i64 end, ...values in
scope)` (pointers noalias), reached through `<fn>_parK(ptr closure, i64 begin, i64 end)`; the
caller packs the values in scope into a closure and calls `launch(fn, closure, n)`, the
runtime's thread pool, which runs chunks of [0, n) in parallel.
"""
from __future__ import annotations

import llvmlite.ir as ir
import numpy as np

from ...ir import expr as E
from ...ir.dtype import bytes_of
from ..passes import LoweredFunc
from . import types as T
from ..runtime import FIRST_SIZE_WORD
from .checks import CheckMixin, add_table
from .exprs import ExprMixin
from .stmts import StmtMixin
from . import subroutines

LAUNCH_TYPE = ir.FunctionType(T.VOID, [T.PTR, T.PTR, T.I64])
PAR_TYPE = ir.FunctionType(T.VOID, [T.PTR, T.I64, T.I64])


def _mentioned(stmt) -> set:
    """ids of the variables and buffer data a statement refers to."""
    from ...ir import stmt as S
    from ...ir.visit import walk
    out, seen = set(), set()

    def fn(x):
        if isinstance(x, E.Var):
            out.add(id(x))
        elif isinstance(x, (E.BufferLoad, S.BufferStore, S.DeclBuffer, E.BufferRef)) and \
                id(x.buffer) not in seen:            # each buffer's shape walked once
            seen.add(id(x.buffer))
            out.add(id(x.buffer.data))
            walk(x.buffer.shape, fn)
            walk(x.buffer.strides, fn)
            if x.buffer.elem_offset is not None:
                walk(x.buffer.elem_offset, fn)
    walk(stmt, fn)
    return out


class _FnPtr:
    """A function pointer value seen as a callee of type LAUNCH_TYPE."""

    def __init__(self, value):
        self.value, self.type, self.function_type = value, value.type, LAUNCH_TYPE

    def get_reference(self):
        return self.value.get_reference()

    def __str__(self):
        return str(self.value)


class ModuleState:
    def __init__(self, lowered: LoweredFunc, triple="", layout="", unroll_count=0):
        self.lowered = lowered
        self.checks = []                      # what checked code tests, in order (checks.py)
        self.unroll_count = unroll_count      # hint for innermost rolled loops (0: none)
        self.module = ir.Module(name=lowered.name)
        self.module.triple = triple
        self.module.data_layout = layout
        self.counter = 0
        self.globals = {}
        self.callees = {}                     # name -> (ir.Function, LoweredFunc): subroutines.py
        self.constants = dict(lowered.constants)
        for c in lowered.callees:
            self.constants.update(c.constants)

    def fresh(self, stem):
        self.counter += 1
        return f"{stem}{self.counter}"

    def constant_global(self, name):
        g = self.globals.get(name)
        if g is None:
            arr = np.ascontiguousarray(self.constants[name])
            data = bytearray(arr.tobytes()) or bytearray(1)
            ty = ir.ArrayType(T.I8, len(data))
            g = ir.GlobalVariable(self.module, ty, name=f"__tirkit_const_{name}")
            g.initializer = ir.Constant(ty, data)
            g.global_constant = True
            g.linkage = "internal"
            g.align = 64
            g.type = T.PTR
            self.globals[name] = g
        return g


class FuncEmitter(CheckMixin, ExprMixin, StmtMixin):
    def __init__(self, shared: ModuleState, fn: ir.Function, launch, result=None, report=None):
        self.shared = shared
        self.module = shared.module
        self.fn = fn
        entry = fn.append_basic_block("entry")
        self.entry_builder = ir.IRBuilder(entry)
        body = fn.append_basic_block("body")
        self.entry_builder.branch(body)
        self.entry_builder.position_at_start(entry)
        self.b = ir.IRBuilder(body)
        self.launch = launch
        self.result = result          # where T.ret stores the value (None: a parallel body)
        self.ret_dtype = shared.lowered.ret_dtype     # what T.ret returns (a callee: its own)
        self.report = report          # the report area of checked code (None: unchecked)
        self.sizes = {}               # id(storage var) -> its bytes (i64), in checked code
        self.static_sizes = {}        # id(storage var) -> its bytes where known (checked code)
        self.ranges = {}              # id(int var) -> (lo, hi) known bounds (checked code)
        self.loop_targets = []        # (continue block, break block, heap depth), innermost last
        self.heap = []                # heap allocations live at this point, innermost last
        self.vars, self.ptrs = {}, {}
        self.wide_vars = {}           # id(int32 loop var) -> (its value, its 64-bit counter)
        self.memo = {}                # id(pure index expression) -> (block, value, var ids)
        self.memo_users = {}          # id(var) -> ids of the remembered expressions using it
        self.offsets = {}             # id(index) -> (index, its split): nodes kept alive
        self.varying = set()
        self.vec = None
        self.mask = None
        self.index_mode = False
        self.call_depth = T.I32(0)    # calls this code runs under (checked code: subroutines)

    # ---- parallel loops -----------------------------------------------------------
    def parallel(self, s):
        used = _mentioned(s)
        scope = [("v", k, v) for k, v in self.vars.items()
                 if k in used and not isinstance(v.type, ir.VectorType)]
        scope += [("p", k, v) for k, v in self.ptrs.items() if k in used]
        scope += [("z", k, v) for k, v in self.sizes.items() if k in used]
        scope.append(("l", 0, self.launch))
        if self.report is not None:
            scope.append(("r", 0, self.report))
            scope.append(("d", 0, self.call_depth))
        name = self.shared.fresh(f"{self.fn.name}_par")
        # body function: (begin, end, values...) with noalias pointers
        body_ty = ir.FunctionType(T.VOID, [T.I64, T.I64] + [v.type for _, _, v in scope])
        body_fn = ir.Function(self.module, body_ty, name=name + "_body")
        body_fn.linkage = "internal"
        for (kind, _, _), arg in zip(scope, body_fn.args[2:]):
            if kind == "p":
                arg.add_attribute("noalias")
        child = FuncEmitter(self.shared, body_fn, None)
        for (kind, key, _), arg in zip(scope, body_fn.args[2:]):
            if kind == "v":
                child.vars[key] = arg
            elif kind == "p":
                child.ptrs[key] = arg
            elif kind == "z":
                child.sizes[key] = arg
            elif kind == "l":
                child.launch = arg
            elif kind == "d":
                child.call_depth = arg
            else:
                child.report = arg
        child.static_sizes, child.ranges = dict(self.static_sizes), dict(self.ranges)
        t = T.value_type(s.loop_var.dtype)
        if t == T.I32:                   # counted in 64 bits (StmtMixin.loop)
            t = T.I64
            lo = child.index(s.min)
        else:
            lo = child.expr(s.min)
        begin = child.b.trunc(body_fn.args[0], t) if t.width < 64 else body_fn.args[0]
        end = child.b.trunc(body_fn.args[1], t) if t.width < 64 else body_fn.args[1]
        child.loop(s.loop_var, child.b.add(lo, begin), child.b.add(lo, end),
                   lambda: child.stmt(s.body))
        child.b.ret_void()
        # trampoline: unpack the closure
        struct = ir.LiteralStructType([v.type for _, _, v in scope])
        tramp = ir.Function(self.module, PAR_TYPE, name=name)
        tb = ir.IRBuilder(tramp.append_basic_block("entry"))
        vals = []
        for i, (_, _, v) in enumerate(scope):
            p = tb.gep(tramp.args[0], [T.I32(0), T.I32(i)], source_etype=struct)
            vals.append(tb.load(p, typ=v.type))
        tb.call(body_fn, [tramp.args[1], tramp.args[2]] + vals)
        tb.ret_void()
        # caller: pack and launch
        clo = self.entry_builder.alloca(struct)
        clo.type = T.PTR
        for i, (_, _, v) in enumerate(scope):
            p = self.b.gep(clo, [T.I32(0), T.I32(i)], source_etype=struct)
            self.b.store(v, p)
        n = self.cast(self.expr(s.extent), s.extent.dtype, "int64")
        self.b.call(_FnPtr(self.launch), [tramp, clo, n])


def _static_bytes(b):
    """The bytes of a parameter buffer's array where its shape is constant (the runtime
    refuses an array of another shape), else None."""
    if not all(isinstance(d, E.IntImm) for d in b.shape):
        return None
    return int(np.prod([d.value for d in b.shape], dtype=np.int64)) * max(1, bytes_of(b.dtype))


def build_module(lowered: LoweredFunc, triple="", layout="", unroll_count=0,
                 checked=False) -> tuple[ir.Module, str]:
    """The LLVM module of a lowered function and the name of its entry symbol; with
    `unroll_count`, each innermost rolled loop carries that unroll count as a hint (see
    pipeline.py); `checked`: each access tests its index first, each integer division its
    divisor (checks.py)."""
    st = ModuleState(lowered, triple, layout, unroll_count)
    entry_name = f"tirkit_{lowered.name}"
    arg_types = [T.PTR] * len(lowered.buffers) + [T.value_type(v.dtype) for v in lowered.scalars]
    impl = ir.Function(st.module, ir.FunctionType(T.VOID, arg_types + [T.PTR, T.PTR]),
                       name=entry_name + "_impl")
    impl.linkage = "internal"
    for a in impl.args[:len(lowered.buffers)]:
        a.add_attribute("noalias")
    report = impl.args[-1] if checked else None
    em = FuncEmitter(st, impl, impl.args[-2], impl.args[-1], report)
    for i, (b, a) in enumerate(zip(lowered.buffers, impl.args)):
        em.ptrs[id(b.data)] = a
        if checked:
            word = em.entry_builder.gep(report, [T.I64(FIRST_SIZE_WORD + i)],
                                        source_etype=T.I64)
            em.storage_size(b.data, em.entry_builder.load(word, typ=T.I64), _static_bytes(b))
    for v, a in zip(lowered.scalars, impl.args[len(lowered.buffers):]):
        em.vars[id(v)] = a
    bodies = subroutines.declare(st, lowered, checked)
    em.stmt(lowered.body)
    em.b.ret_void()
    for fn, c in bodies:
        sub = FuncEmitter(st, fn, None)
        subroutines.bind_params(sub, fn, c, checked)
        sub.stmt(c.body)
        sub.b.ret_void()
    if checked:
        add_table(st.module, st.checks)
    # entry: unpack arrays of pointers and scalars
    entry = ir.Function(st.module, ir.FunctionType(T.VOID, [T.PTR, T.PTR, T.PTR, T.PTR]),
                        name=entry_name)
    eb = ir.IRBuilder(entry.append_basic_block("entry"))
    args = []
    for i in range(len(lowered.buffers)):
        args.append(eb.load(eb.gep(entry.args[0], [T.I64(i)], source_etype=T.PTR), typ=T.PTR))
    for i, v in enumerate(lowered.scalars):
        slot = eb.gep(entry.args[1], [T.I64(i)], source_etype=T.I64)
        t = T.value_type(v.dtype)
        if T.is_fp(t):
            x = eb.load(slot, typ=T.F64)
            args.append(x if t == T.F64 else eb.fptrunc(x, t))
        else:
            x = eb.load(slot, typ=T.I64)
            args.append(x if t.width == 64 else eb.trunc(x, t))
    eb.call(impl, args + [entry.args[2], entry.args[3]])
    eb.ret_void()
    return st.module, entry_name
