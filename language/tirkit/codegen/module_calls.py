"""Calls between the functions of a module: `Module.f(x, A.data)` inside a kernel is a Call
whose op is "@f" (TVM's call of a GlobalVar), of the type f returns (script/lower/calls.py).

The engines run the callee as a function of its own: scalars by value, a buffer by its data
pointer (the callee declares its view over it: codegen/handles.py), and the value it returns
with `return` / `T.ret` is the call's.  Only prim_funcs are called; the interpreter and the
CPU back end share what this module finds (`callee`, `called`), and the compiled kernel's
cache key holds every function it reaches."""
from __future__ import annotations

from ..ir import stmt as S
from ..ir.visit import function_calls
from .errors import UNSUPPORTED, fail

MAX_DEPTH = 64          # calls nested deeper than this are refused (recursion runs out)


def callee(module, call) -> S.PrimFunc:
    """The prim_func `call` calls; a codegen/unsupported error at the call where the module
    holds none of that name (a Python function of the class, or no module)."""
    name = call.callee
    funcs = dict(module.prim_funcs()) if module is not None else {}
    if name not in funcs:
        fail(UNSUPPORTED, f"'{name}' is not a prim_func of the module: only prim_funcs are "
             "called from a kernel", call)
    return funcs[name]


def callers(module, name) -> list:
    """The names of the module's prim_funcs that call its function `name`, in order."""
    if module is None:
        return []
    return [n for n, f in module.prim_funcs()
            if n != name and any(c.callee == name for c in function_calls(f.body))]


def called(func, module) -> list:
    """[(name, PrimFunc)] of every function `func` reaches through calls, each once, in the
    order first reached (func itself only when a call reaches it again)."""
    out, seen, todo = [], set(), [func]
    while todo:
        f = todo.pop(0)
        for c in function_calls(f.body):
            name = c.callee
            if name in seen:
                continue
            seen.add(name)
            g = callee(module, c)
            out.append((name, g))
            todo.append(g)
    return out


def lowered_callees(func, module, lower_one) -> tuple:
    """The lowered form, `lower_one(g)`, of every function `func` reaches (`called`), for a
    back end to emit beside it.  One whose buffers have symbolic shapes is refused: a call
    passes a pointer, not a shape, so a called function's buffers have constant shapes."""
    out = []
    for _, g in called(func, module):
        c = lower_one(g)
        if any(src is not None for src in c.scalar_sources):
            fail(UNSUPPORTED, f"'{c.name}' takes a buffer of symbolic shape: a called "
                 "function's buffers have constant shapes", c.buffers[0])
        out.append(c)
    return tuple(out)
