"""Calls between a module's functions whose arguments do not fit the callee's parameters
(`type/mismatch`): `Module.f(...)` is TVM's call of a GlobalVar, which its parser takes as
it comes; its code generator emits the call with the arguments' own types, so a missing
argument or a value where f takes a pointer fails when the module is built, and a pointer to
elements of another type compiles and reads their bits as f's type.  Reported at the
argument as written (at the call for a wrong count), with f's `def` as the related location:
- another count of arguments than f has parameters (error);
- a value where f takes a buffer's data (a `T.Buffer` parameter, or `T.handle` that a buffer
  declares itself over), or a pointer where f takes a scalar (error);
- a pointer to elements of another type than the buffer f reads through it (error);
- a scalar of another dtype than the parameter's (error: TVM 0.27 passes it unconverted,
  a literal too, and LLVM refuses the call, "Call parameter type does not match function
  signature"; tirkit's engines would convert it, as a store does).
A call of a function the module does not hold is the lowering's `name/undefined`."""
from __future__ import annotations

from ..diagnostics import error
from ..ir import expr as E
from ..ir.visit import function_calls
from . import register
from ._common import func_accesses

TYPE = "type/mismatch"


def _pointee(a):
    """The element type a pointer argument points to (`A.data`, `T.address_of(A[i])`), or
    None where it is not known."""
    if isinstance(a, E.Var):
        return getattr(getattr(a, "type_annotation", None), "element", None)
    if isinstance(a, E.Call) and a.op == "address_of" and a.args and \
            isinstance(a.args[0], E.BufferLoad):
        return a.args[0].buffer.dtype
    return None


def _takes(g, p):
    """(whether parameter p of g takes a pointer, the element type it reads or None, its
    name as written: a `T.Buffer` parameter's is the buffer's)."""
    buf = g.buffer_of(p)
    if buf is not None:
        return True, buf.dtype, g.param_name(p)
    if p.dtype == "handle":
        return True, getattr(getattr(p, "type_annotation", None), "element", None), p.name
    return False, None, p.name


class _Call:
    def __init__(self, call, g, ctx, out):
        self.call, self.g, self.out = call, g, out
        self.lines = ctx.text.split("\n") if ctx.text else []
        self.related = [(g.header_span, f"'{g.name}' is defined here")] \
            if g.header_span is not None else []

    def span(self, i):
        spans = self.call.arg_spans
        return spans[i] if len(spans) == len(self.call.args) and spans[i] is not None \
            else self.call.span

    def text(self, i) -> str:
        s = self.span(i)
        if s is self.call.span or s.line != s.end_line or s.line > len(self.lines):
            return "the argument"
        return self.lines[s.line - 1][s.column - 1:s.end_column - 1]

    def report(self, make, i, message):
        self.out.append(make(TYPE, f"'{self.g.name}' {message}",
                             self.span(i) if i is not None else self.call.span, self.related))


def _converted(a, g, p) -> bool:
    """Whether argument a passes a scalar of another dtype than g's scalar parameter p."""
    return not _takes(g, p)[0] and a.dtype not in ("handle", p.dtype)


def _check(c: _Call):
    g, args = c.g, c.call.args
    if len(args) != len(g.params):
        names = ", ".join(_takes(g, p)[2] for p in g.params)
        c.report(error, None, f"takes {len(g.params)} arguments ({names}), got {len(args)}")
        return
    for i, (a, p) in enumerate(zip(args, g.params)):
        pointer, element, name = _takes(g, p)
        given = a.dtype == "handle"
        if pointer and not given:
            c.report(error, i, f"takes the data of a buffer as '{name}' (`A.data` or "
                     f"`T.address_of(A[i])`), not a {a.dtype} value")
        elif given and not pointer:
            c.report(error, i, f"takes '{p.name}' as a value of {p.dtype}, not a pointer")
        elif pointer:
            held = _pointee(a)
            if element is not None and held is not None and held != element:
                c.report(error, i, f"reads '{name}' as {element} elements, but the pointer "
                         f"is to {held} elements: their bits would be read as {element}")
        elif _converted(a, g, p):
            c.report(error, i, f"takes '{p.name}' as {p.dtype}, and {c.text(i)} is "
                     f"{a.dtype}: TVM passes the value unconverted and its build fails "
                     f"(write T.Cast(\"{p.dtype}\", ...))")


def call_arguments(module, funcs=None):
    """(callee, argument, its parameter, the argument's span as written or None) for each
    argument of each call of a module function in `funcs` (the module's PrimFuncs by
    default) whose callee the module holds with one parameter per argument, and whose
    arguments' spans are known: what the quick fix and the editor's parameter hints read."""
    by_name = dict(module.prim_funcs())
    for f in by_name.values() if funcs is None else funcs:
        for call in function_calls(f.body):
            g = by_name.get(call.callee)
            spans = call.arg_spans
            if g is None or not (len(spans) == len(call.args) == len(g.params)):
                continue
            yield from ((g, a, p, s) for a, p, s in zip(call.args, g.params, spans))


def converted_argument(module, line: int, column: int):
    """(the span of the argument, the dtype its parameter takes) where a call of a module
    function passes, as its argument written at (line, column) on one line, a scalar of
    another dtype than the parameter's; else None.  The quick fix wraps it in T.Cast."""
    if module is None:
        return None
    for g, a, p, s in call_arguments(module):
        if s is not None and (s.line, s.column) == (line, column) and s.end_line == line and \
                _converted(a, g, p):
            return s, p.dtype
    return None


@register("module-calls", codes=(TYPE,), fast=True)
def check_module_calls(func, ctx):
    calls = [c for c, _, _ in func_accesses(func, ctx).calls if c.callee is not None]
    if not calls or ctx.module is None:
        return []
    funcs = dict(ctx.module.prim_funcs())
    out = []
    for call in calls:
        g = funcs.get(call.callee)
        if g is not None and call.span is not None:
            _check(_Call(call, g, ctx, out))
    return out
