"""The module functions a kernel calls (codegen/module_calls.py), as internal functions of
its LLVM module:

    void tirkit_call_<name>(ptr A, ..., [i64 bytes of A, ...,] i32 n, ..., ptr launch,
                            ptr result, [ptr report, i32 depth])

The buffers' data pointers come first, then (in checked code) the bytes of each one's
storage as the caller knows it, the scalars, the runtime's thread pool, a 16-byte slot of the
caller's where `T.ret` leaves the value and its flag (as the kernel's result area), and in
checked code the caller's report area, so an access the callee refuses ends the run as the
caller's own would, and the callee's depth in calls: a call that would nest past
module_calls.MAX_DEPTH is not made and ends the run at that call, as the interpreter ends it
(unchecked, a recursion without end overflows the native stack).  The caller reads the value
from the slot after the call."""
from __future__ import annotations

import llvmlite.ir as ir

from ...ir import expr as E
from ...ir.dtype import bytes_of, lanes_of, parse_dtype
from ..errors import UNSUPPORTED, fail
from ..module_calls import MAX_DEPTH
from . import types as T
from .address import element_ptr

UNKNOWN_BYTES = (1 << 63) - 1       # a pointer whose storage the caller does not know


def declare(st, lowered, checked) -> list:
    """Declare every function `lowered` calls in st.module (st.callees: name -> (ir.Function,
    its LoweredFunc)); [(ir.Function, LoweredFunc)] whose bodies are to be emitted."""
    out = []
    for c in lowered.callees:           # (constant shapes: module_calls.lowered_callees)
        n = len(c.buffers)
        types = [T.PTR] * n + ([T.I64] * n if checked else []) + \
            [T.value_type(v.dtype) for v in c.scalars] + [T.PTR, T.PTR] + \
            ([T.PTR, T.I32] if checked else [])
        fn = ir.Function(st.module, ir.FunctionType(T.VOID, types), name=f"tirkit_call_{c.name}")
        fn.linkage = "internal"
        st.callees[c.name] = (fn, c)
        out.append((fn, c))
    return out


def bind_params(em, fn, c, checked):
    """Bind a callee's parameters, its thread pool, result slot and report area in its
    emitter."""
    n = len(c.buffers)
    args = list(fn.args)
    first = 2 * n if checked else n
    rest = args[first + len(c.scalars):]
    em.launch, em.result, em.report = rest[0], rest[1], (rest[2] if checked else None)
    if checked:
        em.call_depth = rest[3]
    em.ret_dtype = c.ret_dtype
    for i, b in enumerate(c.buffers):
        em.ptrs[id(b.data)] = args[i]
        if checked:
            em.storage_size(b.data, args[n + i])
    for v, a in zip(c.scalars, args[first:]):
        em.vars[id(v)] = a


def _pointer(em, a, c):
    """(the pointer an argument passes, the bytes from it to its storage's end where checked
    code knows them, else None): a buffer's data, or `T.address_of(A[i])`."""
    if isinstance(a, E.Var) and id(a) in em.ptrs:
        return em.ptrs[id(a)], em.sizes.get(id(a))
    load = a.args[0] if isinstance(a, E.Call) and a.op == "address_of" and a.args else None
    if isinstance(load, E.BufferLoad) and len(load.indices) == 1 and \
            id(load.buffer.data) in em.ptrs and lanes_of(load.indices[0].dtype) == 1:
        buf, (ix,) = load.buffer, load.indices
        p = element_ptr(em, em.ptrs[id(buf.data)], ix, T.memory_type(buf.dtype))
        size = em.sizes.get(id(buf.data))
        if size is not None:
            size = em.b.sub(size, em.b.mul(em.index(ix), T.I64(max(1, bytes_of(buf.dtype)))))
        return p, size
    fail(UNSUPPORTED, f"'{c.name}' takes a buffer: pass one's data (`A.data`) or an "
         "element's address (`T.address_of(A[i])`)", a)


def call(em, e):
    """Emit `Module.f(args)`: the call, then the value f left in the caller's slot."""
    fn, c = em.shared.callees[e.callee]
    if len(e.args) != len(c.param_buffers):
        fail(UNSUPPORTED, f"'{c.name}' takes {len(c.param_buffers)} arguments, got "
             f"{len(e.args)}", e)
    ptrs, sizes, scalars = [], [], []
    for a, is_buffer in zip(e.args, c.param_buffers):
        if is_buffer:
            p, size = _pointer(em, a, c)
            ptrs.append(p)
            sizes.append(size if size is not None else T.I64(UNKNOWN_BYTES))
        else:
            scalars.append(a)
    values = [em.cast(em.expr(a), a.dtype, v.dtype) for a, v in zip(scalars, c.scalars)]
    slot = em.entry_builder.alloca(ir.ArrayType(T.I64, 2))
    slot.type = T.PTR
    em.b.store(T.I64(0), slot)
    em.b.store(T.I8(0), em.b.gep(slot, [T.I64(8)], source_etype=T.I8))
    launch = em.launch if em.launch is not None else ir.Constant(T.PTR, None)
    if em.report is None:
        em.b.call(fn, ptrs + values + [launch, slot])
    else:
        depth = em.b.add(em.call_depth, T.I32(1))
        too_deep = em.b.icmp_signed(">", depth, T.I32(MAX_DEPTH))
        with em.b.if_else(too_deep) as (refuse, make):
            with refuse:
                em.record_check("calls", c.name, e)
            with make:
                em.b.call(fn, ptrs + sizes + values + [launch, slot, em.report, depth])
    if c.ret_dtype is None or parse_dtype(e.dtype).kind == "void":
        return T.const(T.value_type(e.dtype), 0) if parse_dtype(e.dtype).kind != "void" \
            else T.I32(0)
    memory = T.with_lanes(T.I8, 1) if parse_dtype(c.ret_dtype).kind == "bool" \
        else T.value_type(c.ret_dtype)
    v = em.from_memory(em.b.load(slot, typ=memory, align=8), c.ret_dtype)
    return em.cast(v, c.ret_dtype, e.dtype)
