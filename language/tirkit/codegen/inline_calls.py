"""Calls that pass a pointer, inlined: a statement `Module.f(T.address_of(C[tx]), A[tx])` run
as f's body in the caller, and a call in a value (`C[tx] = Module.g(T.address_of(A[tx])) + 1`)
as g's body followed by the statement, g's final `return v` binding the call's value.

- The thread interpreter inlines every such call from a thread (`inline_pointer_calls`), so
  that what f reads and writes through the pointer is the caller's buffer, which the race
  detector watches.  A call in a branch of `T.if_then_else` or `T.Select`, which may not
  run, is not inlined, and the thread interpreter refuses it.  (The reference interpreter
  and the CPU back end run f as a function of its own over the storage the pointer
  addresses: module_calls.py.)
- Every engine inlines a call that passes on a pointer its caller only hands on (`g(dst)`
  calling `Module.f(dst, v)`, no buffer of g viewing `dst`: `inline_forwarded`), so that g
  reads its parameter through f's view and takes it as that buffer (handles.py).

f's buffer viewing a pointer parameter becomes a view of the caller's buffer from the
addressed element on (its data, an `elem_offset` of the element's flat index); each scalar
parameter is bound to its argument, converted to the parameter's dtype, by a `let`, so it is
evaluated once, before the body, as a call's argument is.  f's own calls are inlined first,
so a pointer f passes on is read through the views of the functions it calls.
Refused at the call (`codegen/unsupported`): a function that returns with `return` / `T.ret`
from a statement call, or before its end from a call in a value (the return would leave the
caller); one reached again (a recursion); a pointer f reads through no single buffer; and a
pointer that is not a buffer's data or `T.address_of` an element of a buffer of f's element
type."""
from __future__ import annotations

import dataclasses

from ..ir import expr as E
from ..ir import stmt as S
from ..ir.visit import child_fields, contains, rebuild
from .errors import ARGUMENT, UNSUPPORTED, fail
from .handles import with_param_buffers
from .module_calls import callee
from .passes.control import RET
from .passes.flatten import add_index, flat_index
from .passes.rewrite import map_buffers


def passes_pointer(s) -> bool:
    """Whether statement s is a call of a module function with a pointer argument."""
    return type(s) is S.Evaluate and _is_pointer_call(s.value)


def _is_pointer_call(e) -> bool:
    return isinstance(e, E.Call) and e.callee is not None and \
        any(a.dtype == "handle" for a in e.args)


def value_call(e):
    """The first call of a module function with a pointer argument that evaluating e always
    makes (not one in a branch of `T.if_then_else` or `T.Select`), its own arguments' first;
    None where there is none."""
    if isinstance(e, E.Call):
        parts = e.args[:1] if e.op == "if_then_else" else e.args
    elif isinstance(e, E.Select):
        parts = (e.condition,)
    else:
        parts = [x for f in child_fields(type(e)) for x in
                 (getattr(e, f) if isinstance(getattr(e, f), tuple) else (getattr(e, f),))]
    inner = next((c for c in (value_call(x) for x in parts if isinstance(x, E.PrimExpr))
                  if c is not None), None)
    return inner or (e if _is_pointer_call(e) else None)


def _calls_in_value(s) -> bool:
    # (the walk first: it is iterative, and most values hold no such call)
    return type(s) in (S.BufferStore, S.LetStmt, S.Evaluate) and \
        contains(s.value, _is_pointer_call, E.Call) and value_call(s.value) is not None


def inline_pointer_calls(func: S.PrimFunc, module, path=()) -> S.PrimFunc:
    """func with each call of a module function with a pointer argument replaced by the
    function's body (module doc); func itself where there is none."""
    if not contains(func.body, _calls_in_value, S.Stmt):
        return func
    body = rebuild(func.body, lambda new, old: _inline_in(new, module, path + (func.name,))
                   if _calls_in_value(new) else None)
    return dataclasses.replace(func, body=body)


def _inline_in(s, module, path) -> S.Stmt:
    """Statement s, whose value makes a call that passes a pointer, as that call's body with
    s, the call's value bound by its `return`, after it (s's further calls inlined too)."""
    if passes_pointer(s):
        return _inlined(s.value, module, path)
    call = value_call(s.value)
    result = E.Var(f"{call.callee}_result", call.dtype, None, call.span)
    value = rebuild(s.value, lambda new, old: result if old is call else None)
    rest = dataclasses.replace(s, value=value)
    if _calls_in_value(rest):
        rest = _inline_in(rest, module, path)
    return _inlined(call, module, path, (result, rest))


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


def _inlined(call, module, path, then=None) -> S.Stmt:
    """The call's body in the caller; `then`, (a variable, a statement): the body's final
    `return v` becomes `let variable = v` around that statement."""
    g = callee(module, call)
    if g.name in path:
        fail(UNSUPPORTED, f"'{g.name}' calls itself again, passing a pointer: such a call "
             "runs as its body in the caller, and a recursion there has no end", call)
    if then is not None:
        var, rest = then
        done = _final_return(g.body, lambda v: S.LetStmt(
            var, v if v.dtype == var.dtype else E.Cast(var.dtype, v), rest, call.span))
        if done is None:
            fail(UNSUPPORTED, f"'{g.name}' returns elsewhere than at its end: a call that "
                 "passes it a pointer runs as its body in the caller, where a return "
                 "before the end would leave the caller", call)
        g = dataclasses.replace(g, body=done)
    elif contains(g.body, lambda c: c.op == RET, E.Call):
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


def _final_return(body, make):
    """body with its one `return v`, its last statement, replaced by make(v); None where it
    returns anywhere else or does not end with a return."""
    def returns(x):
        return contains(x, lambda c: c.op == RET, E.Call)
    if isinstance(body, S.SeqStmt):
        last = _final_return(body.seq[-1], make)
        if last is None or any(returns(x) for x in body.seq[:-1]):
            return None
        return dataclasses.replace(body, seq=tuple(body.seq[:-1]) + (last,))
    if isinstance(body, S.Evaluate) and isinstance(body.value, E.Call) and \
            body.value.op == RET and len(body.value.args) == 1:
        return make(body.value.args[0])
    if isinstance(body, (S.DeclBuffer, S.LetStmt, S.Allocate, S.AttrStmt)) and \
            isinstance(body.body, S.Stmt):
        inner = _final_return(body.body, make)
        return None if inner is None else dataclasses.replace(body, body=inner)
    return None


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
