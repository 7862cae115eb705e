"""Handle parameters viewed by one buffer: TVM's lowered functions take a pointer and declare
the buffer over it in the body,

    def kernel(A_data: T.handle("float32"), n: T.int32):
        A = T.decl_buffer(16, dtype="float32", data=A_data)
        ...

(or, in the classic spelling, `A_1 = T.Buffer((16,), data=A)` used in place).  To run such a
function, `with_param_buffers` reads the parameter as the buffer: the buffer becomes the
parameter's (as a `T.Buffer` annotation would make it) and its declaration, a view that
allocates nothing, goes.  Every entry that compiles or runs a function reads it so: `build`,
`lower`, `lower_gpu` (so `emit_cuda`), both interpreters, `make_inputs`, and the commands.
Only where the parameter is used as that buffer's data and nowhere else, and no other buffer
views it: two views of other shapes or dtypes, or a pointer used as a value, leave the
parameter as it is (codegen.passes.signature refuses it).  A pointer only passed on to
another function of the module is read through that function's view, its call inlined
(inline_calls.inline_forwarded), where the module is given and the call can be inlined."""
from __future__ import annotations

import dataclasses

from ..ir import expr as E
from ..ir import stmt as S
from ..ir.visit import find_all, rebuild, walk


def _views(body) -> dict:
    """id(data var) -> {id(buffer): buffer} of every buffer declared or accessed in body."""
    out: dict = {}

    def fn(x):
        b = x.buffer if isinstance(x, (S.DeclBuffer, S.BufferStore, E.BufferLoad,
                                       S.BufferRegion, E.BufferRef)) else None
        if b is not None:
            out.setdefault(id(b.data), {})[id(b)] = b
    walk(body, fn)
    return out


def with_param_buffers(func: S.PrimFunc, module=None) -> S.PrimFunc:
    """func with each handle parameter that one buffer views read as that buffer's parameter
    (module doc); func itself when there is none.  With its `module`, a handle func only
    passes on to the module's functions is read through their views first (their calls
    inlined: inline_calls.inline_forwarded)."""
    loose = [p for p in func.params if p.dtype == "handle" and func.buffer_of(p) is None]
    if not loose:
        return func
    if module is not None:
        from ..diagnostics import TirkitError
        from .inline_calls import inline_forwarded     # (which reads handles itself)
        try:
            func = inline_forwarded(func, module)
        except TirkitError:
            pass        # (no inlining: the handle stays loose, as signature() then says)
    views = _views(func.body)
    bound = {}
    for p in loose:
        bufs = list(views.get(id(p), {}).values())
        if len(bufs) == 1 and not find_all(func.body, lambda v, p=p: v is p, E.Var):
            bound[id(p)] = bufs[0]
    if not bound:
        return func
    declared = {id(b) for b in bound.values()}
    body = rebuild(func.body, lambda new, old: new.body if isinstance(old, S.DeclBuffer)
                   and id(old.buffer) in declared else None)
    extra = tuple((p, bound[id(p)]) for p in func.params if id(p) in bound)
    return dataclasses.replace(func, buffer_map=func.buffer_map + extra, body=body)
