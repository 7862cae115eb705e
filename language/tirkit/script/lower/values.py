"""The values a lowered name or expression can stand for besides an IR expression: module
aliases, starred and subscripted forms, slices, buffer methods, lambdas, params-file
references, functions of the enclosing module, Python builtins and expression methods."""
from __future__ import annotations


def _is_literal(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


class LaterConstant:
    """A top-level constant a kernel at column 0 uses but that the file assigns only below
    it: Python has not run that line when the kernel's decorator runs."""
    __slots__ = ("line",)

    def __init__(self, line):
        self.line = line

    def __eq__(self, other):
        return isinstance(other, LaterConstant) and other.line == self.line

    def __hash__(self):
        return hash(("LaterConstant", self.line))


class _Namespace:
    """A module alias (`T`, `I`) or a dotted part of it used as a value."""
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name


class _Starred:
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


class _Subscripted:
    __slots__ = ("base", "items")

    def __init__(self, base, items):
        self.base, self.items = base, items


class _SliceVal:
    __slots__ = ("lo", "hi", "step", "node")

    def __init__(self, lo, hi, step, node):
        self.lo, self.hi, self.step, self.node = lo, hi, step, node


class _BufferMethod:
    __slots__ = ("buffer", "name")

    def __init__(self, buffer, name):
        self.buffer, self.name = buffer, name


class _BufferTy:
    """`A.ty`: a buffer's type, as TVM's main branch spells its fields (`A.ty.shape`)."""
    __slots__ = ("buffer",)

    def __init__(self, buffer):
        self.buffer = buffer


class _Lambda:
    __slots__ = ("node",)

    def __init__(self, node):
        self.node = node


class ParamTable:
    """`P = params.load("x.params")`: indexing gives a reference into the file."""

    def __init__(self, path, span):
        self.path, self.span = path, span

    def get(self, ctx, n):
        if len(n.indices) != 1:
            ctx.fail("type/mismatch", "a params table takes one name", n)
        key = ctx.value(n.indices[0])
        if not isinstance(key, str):
            ctx.fail("type/mismatch", "a params table is indexed by a constant's name", n)
        return ParamRef(self, key, ctx.span(n))


class ParamRef:
    __slots__ = ("table", "name", "span")

    def __init__(self, table, name, span):
        self.table, self.name, self.span = table, name, span


class _ModuleRef:
    """The class name of the enclosing `@I.ir_module`, used to call its functions."""
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name


class _GlobalFunc:
    """`Module.func`: a function of the enclosing module (called as `Module.func(...)`)."""
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name


class _PyBuiltin:
    """A Python builtin of `syntax.pyconst.BUILTINS` (`max`, `len`, ...), applied to plain
    values as TVM's parser applies it."""
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name


class _ExprMethod:
    """A method of an expression, `x.astype`."""
    __slots__ = ("expr", "name")

    def __init__(self, expr, name):
        self.expr, self.name = expr, name
