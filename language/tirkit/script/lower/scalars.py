"""Local scalars: a name a kernel assigns again while its first value is still in scope.

TVM 0.27 reads `x = value` inside a kernel as a one-element buffer of `local` scope (its
`T.local_scalar`) that each later `x = ...` stores to and each use of `x` loads from:

    acc = T.float32(0)                  # acc = T.alloc_buffer((1,), "float32", scope="local")
    for k in range(8):                  # acc[0] = T.float32(0)
        acc = acc + A[i, k]             #     acc[0] = acc[0] + A[i, k]
    B[i] = acc                          # B[i] = acc[0]

tirkit does the same for a name assigned again in the statements its first assignment
scopes over (the rest of its statement list, nested bodies included), the case where a
`LetStmt` would compute something else: a loop that accumulates, a `while` whose condition
reads a counter the body advances. A name assigned once stays a `LetStmt` binding (or, for a
plain Python value, the value itself), which reads the same.
"""
from __future__ import annotations

from ...ir import expr as E
from ...ir import stmt as S
from ...syntax import cst as C
from .stmts import Wrap

_NESTED = ("body", "orelse")
_AT_ZERO = (E.IntImm("int32", 0),)       # the one element of a local scalar


class LocalScalar:
    """What a local scalar's name stands for while lowering: its one-element buffer."""
    __slots__ = ("buffer",)

    def __init__(self, buffer):
        self.buffer = buffer

    def load(self, span=None):
        return E.BufferLoad(self.buffer, _AT_ZERO, self.buffer.dtype, span)


def assigned_name(s) -> str | None:
    """The name a plain assignment statement (re)binds: `x = v`, `x += v`, `x: T.int32 = v`
    (not `x: T.let[...] = v`, an immutable binding)."""
    if isinstance(s, C.Assign) and len(s.targets) == 1:
        t = C.unparen(s.targets[0])
    elif isinstance(s, C.AugAssign):
        t = C.unparen(s.target)
    elif isinstance(s, C.AnnAssign) and s.value is not None and not _is_let(s.annotation):
        t = C.unparen(s.target)
    else:
        return None
    return t.id if isinstance(t, C.Name) else None


def _is_let(annotation) -> bool:
    a = C.unparen(annotation)
    return isinstance(a, C.Subscript) and isinstance(a.value, C.Attribute) and \
        a.value.attr == "let"


def reassigned(body) -> set:
    """The ids of the assignment statements under `body` (a statement list) whose name is
    assigned again in the statements that follow them in their list, at any depth."""
    out: set = set()
    _names(body, out)
    return out


def _names(stmts, out) -> set:
    """Names assigned anywhere in `stmts`; adds to `out` the assignments reassigned later."""
    later: set = set()
    for s in reversed(stmts):
        name = assigned_name(s)
        if name is not None and name in later and not isinstance(s, C.AugAssign):
            out.add(id(s))
        inner: set = set()
        for field in _NESTED:
            children = getattr(s, field, None)
            if isinstance(children, list):
                inner |= _names(children, out)
        later |= inner
        if name is not None:
            later.add(name)
    return later


class ScalarMixin:
    """Lowering of the assignments that make and update local scalars."""

    def scalar_assign(self, target, raw, value_node, s, dtype=None):
        """`x = v` (or `x: dtype = v`), `raw` the lowered `v`, when `x` is a local scalar or
        becomes one here; None when the assignment is an ordinary binding."""
        if not isinstance(target, C.Name):
            return None
        current = self.lookup(target.id)
        if isinstance(current, LocalScalar):
            value = self.store_value(current.buffer, raw, value_node)
            return S.BufferStore(current.buffer, value, _AT_ZERO, self.span(s))
        if id(s) not in self.rebound:
            return None
        if dtype is None:
            dtype = _dtype_of(raw)
            if dtype is None:       # not a scalar value (a buffer, a string...): a plain name
                return None
        buf = self.make_buffer(target.id, [(1,)], {"dtype": dtype, "scope": "local"}, s, target)
        value = self.store_value(buf, raw, value_node)
        self.define(target.id, LocalScalar(buf), target, check=False)
        span = self.span(s)
        first = S.BufferStore(buf, value, _AT_ZERO, span)

        def make(rest):
            body = first if _is_nothing(rest) else S.SeqStmt(
                (first,) + (rest.seq if type(rest) is S.SeqStmt else (rest,)))
            return S.DeclBuffer(buf, body, span, spelling="local_scalar")
        return Wrap(make, s)

    def scalar_update(self, s):
        """`x += v` on a local scalar `x`."""
        target = C.unparen(s.target)
        if not isinstance(self.lookup(target.id), LocalScalar):
            self.fail("syntax", f"'{target.id}' is not a value assigned before in this kernel "
                      "(`x += v` updates a name that `x = ...` has set)", s)
        value = C.BinOp(s.op, target, s.value)
        value.set_pos(s.line, s.col, s.end_line, s.end_col)
        return self.scalar_assign(target, self.value(value), value, s)


def _dtype_of(v):
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int32"
    if isinstance(v, float):
        return "float32"
    if isinstance(v, E.PrimExpr) and v.dtype != "handle":
        return v.dtype
    return None


def _is_nothing(stmt) -> bool:
    """The placeholder body of a statement list that ended (no statement of its own)."""
    return type(stmt) is S.Evaluate and stmt.span is None and E.is_const_int(stmt.value, 0)
