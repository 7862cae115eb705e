"""Calls that pass a pointer, inlined: a statement `Module.f(T.address_of(C[tx]), A[tx])` run
as f's body in the caller.

- The thread interpreter inlines every such call from a thread (`inline_pointer_calls`), so
  that what f reads and writes through the pointer is the caller's buffer, which the race
  detector watches.  (The reference interpreter and the CPU back end run f as a function of
  its own over the storage the pointer addresses: module_calls.py.)
- Every engine inlines a call that passes on a pointer its caller only hands on (`g(dst)`
  calling `Module.f(dst, v)`, no buffer of g viewing `dst`: `inline_forwarded`), so that g
  reads its parameter through f's view and takes it as that buffer (handles.py).

f's buffer viewing a pointer parameter becomes a view of the caller's buffer from the
addressed element on (its data, an `elem_offset` of the element's flat index); each scalar
parameter is bound to its argument, converted to the parameter's dtype, by a `let`, so it is
evaluated once, before the body, as a call's argument is.  f's own calls are inlined first,
so a pointer f passes on is read through the views of the functions it calls.
Refused at the call (`codegen/unsupported`): a function that returns with `return` / `T.ret`
(its return would leave the caller), one reached again (a recursion), a pointer f reads
through no single buffer, and a pointer that is not a buffer's data or `T.address_of` an
element of a buffer of f's element type."""
from __future__ import annotations

import dataclasses

from ..ir import expr as E
from ..ir import stmt as S
from ..ir.visit import contains, rebuild
from .errors import ARGUMENT, UNSUPPORTED, fail
from .handles import with_param_buffers
from .module_calls import callee
from .passes.control import RET
from .passes.flatten import add_index, flat_index
from .passes.rewrite import map_buffers


def passes_pointer(s) -> bool:
    """Whether statement s is a call of a module function with a pointer argument."""
    v = s.value if type(s) is S.Evaluate else None
    return isinstance(v, E.Call) and v.callee is not None and \
        any(a.dtype == "handle" for a in v.args)


def inline_pointer_calls(func: S.PrimFunc, module, path=()) -> S.PrimFunc:
    """func with each statement that calls a module function with a pointer argument
    replaced by the function's body (module doc); func itself where there is none."""
    if not contains(func.body, passes_pointer, S.Evaluate):
        return func
    body = rebuild(func.body, lambda new, old: _inlined(new.value, module, path + (func.name,))
                   if passes_pointer(new) else None)
    return dataclasses.replace(func, body=body)


def inline_forwarded(func: S.PrimFunc, module) -> S.PrimFunc:
    """func with each statement that passes on one of func's own handle parameters (one no
    buffer of func views) to a module function replaced by that function's body (module
    doc); func itself where there is none."""
    loose = {id(p) for p in func.params if p.dtype == "handle" and func.buffer_of(p) is None}
    if module is None or not loose:
        return func

    def forwards(s):
        return passes_pointer(s) and any(isinstance(a, E.Var) and id(a) in loose
                                         for a in s.value.args)
    if not contains(func.body, forwards, S.Evaluate):
        return func
    body = rebuild(func.body, lambda new, old: _inlined(new.value, module, (func.name,))
                   if forwards(new) else None)
    return dataclasses.replace(func, body=body)


def _inlined(call, module, path) -> S.Stmt:
    g = callee(module, call)
    if g.name in path:
        fail(UNSUPPORTED, f"'{g.name}' calls itself again, passing a pointer: such a call "
             "runs as its body in the caller, and a recursion there has no end", call)
    if contains(g.body, lambda c: c.op == RET, E.Call):
        fail(UNSUPPORTED, f"'{g.name}' returns with `return`: a call that passes it a "
             "pointer runs as its body in the caller, where the return would leave the "
             "caller", call)
    if len(call.args) != len(g.params):
        fail(ARGUMENT, f"'{g.name}' takes {len(g.params)} arguments, got {len(call.args)}",
             call)
    # (its own calls first: a pointer it passes on is then read through their views)
    g = with_param_buffers(inline_pointer_calls(g, module, path))
    views, lets = {}, []
    for p, a in zip(g.params, call.args):
        buf = g.buffer_of(p)
        if buf is not None:
            views[id(buf)] = _view(buf, a, g, call)
        elif p.dtype == "handle":
            fail(UNSUPPORTED, f"'{g.name}' reads its pointer '{p.name}' through no single "
                 "buffer, so what it addresses is not known", call)
        else:
            lets.append((p, a if a.dtype == p.dtype else E.Cast(p.dtype, a, a.span)))
    body = map_buffers(g.body, lambda b: views.get(id(b)))
    for p, v in reversed(lets):
        body = S.LetStmt(p, v, body, call.span)
    return body


def _view(buf, arg, g, call) -> S.Buffer:
    """f's buffer `buf` as a view of what the pointer argument addresses."""
    if isinstance(arg, E.Call) and arg.op == "address_of" and arg.args and \
            isinstance(arg.args[0], E.BufferLoad):
        load = arg.args[0]
        data, offset, dtype = load.buffer.data, flat_index(load.buffer, load.indices), \
            load.buffer.dtype
    elif isinstance(arg, E.Var):
        data, offset = arg, None
        dtype = getattr(getattr(arg, "type_annotation", None), "element", None) or buf.dtype
    else:
        fail(UNSUPPORTED, f"'{g.name}' is passed a pointer that is not a buffer's data "
             "(`A.data`) or `T.address_of(A[i])`, so what it addresses is not known", arg)
    if dtype != buf.dtype:
        fail(ARGUMENT, f"'{g.name}' reads its buffer '{buf.name}' as {buf.dtype}, and is "
             f"passed a pointer to {dtype} elements", arg)
    if buf.elem_offset is not None and offset is not None:
        own = buf.elem_offset
        offset = add_index(offset, own if own.dtype == offset.dtype else
                           E.Cast(offset.dtype, own))
    return dataclasses.replace(buf, data=data, elem_offset=offset if offset is not None
                               else buf.elem_offset)
