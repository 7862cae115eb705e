"""TensorIR statements, buffers, blocks, functions and modules.

Trivia fields (`span`, `comments`, `trailing`) ride on statements and are ignored by
structural equality.  `comments` are the user's comment lines just before a statement,
`trailing` the comment at the end of its first line.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from ..diagnostics import Span
from .expr import PrimExpr, Range, Var

node = dataclass(frozen=True, eq=False, slots=True)
def SPAN_():
    return field(default=None, repr=False)

def TRIVIA_():
    return field(default=(), repr=False)

def TRAIL_():
    return field(default=None, repr=False)


TRIVIA_FIELDS = frozenset({"span", "comments", "trailing", "spelling", "header_span", "name_span",
                           "stepped", "arg_spans"})


@node
class Buffer:
    name: str
    shape: tuple
    dtype: str
    data: Var
    strides: tuple = ()
    elem_offset: Optional[PrimExpr] = None
    scope: str = "global"
    align: int = -1                  # -1: not given (TVM's default alignment)
    offset_factor: int = 0           # 0: not given
    buffer_type: str = "default"     # "default" | "auto_broadcast"
    axis_separators: tuple = ()
    span: Optional[Span] = SPAN_()
    # how a block allocation was written in the tirx spelling ("sblock_alloc_buffer" or "",
    # i.e. `T.alloc_buffer`); trivia, never compared
    spelling: str = ""

    @property
    def ndim(self) -> int:
        return len(self.shape)


@node
class BufferRegion:
    buffer: Buffer
    region: tuple                    # tuple[Range]
    span: Optional[Span] = SPAN_()


@node
class MatchBufferRegion:
    buffer: Buffer
    source: BufferRegion
    span: Optional[Span] = SPAN_()


ITER_KINDS = {"S": "spatial", "R": "reduce", "C": "scan", "O": "opaque"}


@node
class IterVar:
    var: Var
    dom: Range
    kind: str                        # "S" spatial, "R" reduce, "C" scan (ordered), "O" opaque
    thread_tag: Optional[str] = None
    span: Optional[Span] = SPAN_()


class Stmt:
    __slots__ = ()


@node
class BufferStore(Stmt):
    buffer: Buffer
    value: PrimExpr
    indices: tuple
    span: Optional[Span] = SPAN_()
    comments: tuple = TRIVIA_()
    trailing: Optional[str] = TRAIL_()


@node
class Evaluate(Stmt):
    value: PrimExpr
    span: Optional[Span] = SPAN_()
    comments: tuple = TRIVIA_()
    trailing: Optional[str] = TRAIL_()


@node
class SeqStmt(Stmt):
    seq: tuple
    span: Optional[Span] = SPAN_()
    comments: tuple = TRIVIA_()
    trailing: Optional[str] = TRAIL_()


FOR_KINDS = ("serial", "parallel", "vectorized", "unrolled", "thread_binding")


@node
class For(Stmt):
    loop_var: Var
    min: PrimExpr
    extent: PrimExpr
    kind: str                        # one of FOR_KINDS
    body: Stmt
    thread_tag: Optional[str] = None
    annotations: tuple = ()          # ((key, value), ...)
    span: Optional[Span] = SPAN_()
    comments: tuple = TRIVIA_()
    trailing: Optional[str] = TRAIL_()
    # a loop written with a step (`range(a, b, s)`) is held as TVM's CanonicalizeLoop makes it,
    # `for v in range(ceildiv(b - a, s))` with each use of the name `v * s + a`; this trivia,
    # (a, b, s, that expression, the extent), lets it print back as written
    stepped: tuple = TRIVIA_()


@node
class While(Stmt):
    condition: PrimExpr
    body: Stmt
    span: Optional[Span] = SPAN_()
    comments: tuple = TRIVIA_()
    trailing: Optional[str] = TRAIL_()


@node
class IfThenElse(Stmt):
    condition: PrimExpr
    then_case: Stmt
    else_case: Optional[Stmt] = None
    span: Optional[Span] = SPAN_()
    comments: tuple = TRIVIA_()
    trailing: Optional[str] = TRAIL_()


@node
class LetStmt(Stmt):
    var: Var
    value: PrimExpr
    body: Stmt
    span: Optional[Span] = SPAN_()
    comments: tuple = TRIVIA_()
    trailing: Optional[str] = TRAIL_()
    spelling: str = ""               # "let" when written `x: T.let[T.int32] = ...` (trivia)


@node
class AssertStmt(Stmt):
    condition: PrimExpr
    message: PrimExpr
    body: Stmt
    span: Optional[Span] = SPAN_()
    comments: tuple = TRIVIA_()
    trailing: Optional[str] = TRAIL_()


@node
class Allocate(Stmt):
    buffer_var: Var
    dtype: str
    extents: tuple
    condition: PrimExpr
    body: Stmt
    annotations: tuple = ()
    span: Optional[Span] = SPAN_()
    comments: tuple = TRIVIA_()
    trailing: Optional[str] = TRAIL_()


@node
class AllocateConst(Stmt):
    """A constant tensor; its values live in the module's constant table under `const_name`."""
    buffer_var: Var
    dtype: str
    extents: tuple
    const_name: str
    body: Stmt
    annotations: tuple = ()
    span: Optional[Span] = SPAN_()
    comments: tuple = TRIVIA_()
    trailing: Optional[str] = TRAIL_()


@node
class DeclBuffer(Stmt):
    buffer: Buffer
    body: Stmt
    span: Optional[Span] = SPAN_()
    comments: tuple = TRIVIA_()
    trailing: Optional[str] = TRAIL_()
    spelling: str = ""   # "alloc_buffer": a tirx statement-level `T.alloc_buffer`; "local_scalar":
    #                      a name assigned again in its scope (`acc = acc + x`) (trivia)
    annotations: tuple = ()          # ((key, value), ...) of a statement-level T.alloc_buffer


@node
class AttrStmt(Stmt):
    node: Any                        # IterVar for thread_extent, a Var, a Buffer, or an expr
    attr_key: str
    value: PrimExpr
    body: Stmt
    span: Optional[Span] = SPAN_()
    comments: tuple = TRIVIA_()
    trailing: Optional[str] = TRAIL_()


@node
class Block(Stmt):
    name_hint: str
    iter_vars: tuple                 # tuple[IterVar]
    reads: Optional[tuple]           # tuple[BufferRegion]; None: not declared (inferred)
    writes: Optional[tuple]
    body: Stmt
    init: Optional[Stmt] = None
    alloc_buffers: tuple = ()
    match_buffers: tuple = ()        # tuple[MatchBufferRegion]
    annotations: tuple = ()
    span: Optional[Span] = SPAN_()
    comments: tuple = TRIVIA_()
    trailing: Optional[str] = TRAIL_()
    name_span: Optional[Span] = SPAN_()


@node
class BlockRealize(Stmt):
    iter_values: tuple
    predicate: PrimExpr
    block: Block
    span: Optional[Span] = SPAN_()
    comments: tuple = TRIVIA_()
    trailing: Optional[str] = TRAIL_()


@dataclass(frozen=True, eq=False, slots=True, weakref_slot=True)
class PrimFunc:
    """A function; one moved in its file may fill its program fields on first use
    (ir/shift.py `moved_function`), after which it is like any other."""
    name: str
    params: tuple                    # tuple[Var]
    buffer_map: tuple                # ((param Var, Buffer), ...)
    body: Stmt
    ret_type: Optional[str] = None
    attrs: tuple = ()                # ((key, value), ...) from T.func_attr
    private: bool = False
    span: Optional[Span] = SPAN_()
    spelling: str = field(default="classic", repr=False)   # "classic" | "tirx"
    comments: tuple = TRIVIA_()
    header_span: Optional[Span] = SPAN_()
    sparse_axes: tuple = ()          # tuple[ir.sparse.Axis] of a sparse kernel, in order

    def buffer_of(self, param: Var):
        for v, b in self.buffer_map:
            if v is param:
                return b
        return None

    def param_name(self, param: Var) -> str:
        """The name a parameter is written with: a `T.Buffer` parameter's is its buffer's."""
        b = self.buffer_of(param)
        return b.name if b is not None else param.name

    def __getattr__(self, name):
        # called only for a field not set yet: a moved function's program, copied on first use
        from .shift import LAZY_FIELDS, materialize
        if name in LAZY_FIELDS and materialize(self):
            return object.__getattribute__(self, name)
        raise AttributeError(f"'PrimFunc' object has no attribute '{name}'")


@node
class ForeignFunc:
    """A function of an IRModule that is not TIR (e.g. Relax): kept as its source text."""
    name: str
    text: str
    span: Optional[Span] = SPAN_()


@node
class IRModule:
    functions: tuple                 # ((name, PrimFunc | ForeignFunc), ...) in source order
    name: Optional[str] = None       # the class name for `@I.ir_module class Name`; None: bare func
    constants: Any = None            # ConstantTable or None
    attrs: tuple = ()
    span: Optional[Span] = SPAN_()
    spelling: str = field(default="classic", repr=False)
    comments: tuple = TRIVIA_()

    def __getitem__(self, name):
        for n, f in self.functions:
            if n == name:
                return f
        raise KeyError(name)

    def prim_funcs(self):
        return [(n, f) for n, f in self.functions if isinstance(f, PrimFunc)]


def seq(stmts, span=None) -> Stmt:
    """A SeqStmt, flattened; a single statement stands for itself."""
    flat = []
    for s in stmts:
        if isinstance(s, SeqStmt) and not s.comments:
            flat.extend(s.seq)
        elif s is not None:
            flat.append(s)
    if len(flat) == 1:
        return flat[0]
    return SeqStmt(tuple(flat), span)
