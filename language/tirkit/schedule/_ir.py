"""IR plumbing for the schedule primitives: rebuild by identity, substitute variables,
walk parents, collect blocks and loops.  Frozen nodes are rebuilt with
`dataclasses.replace`; nodes are located by object identity."""
from __future__ import annotations

import dataclasses

from ..ir import expr as E
from ..ir import stmt as S
from ..ir.visit import REMOVE, child_fields, rebuild, substitute, vars_in  # noqa: F401  (used across schedule/)


def replace_nodes(root, mapping: dict):
    """Swap nodes by identity (id -> new node or REMOVE) and tidy up: a SeqStmt left with one
    statement becomes that statement; loops left empty are removed with their body."""
    return _rebuild_remove(root, mapping)


def _rebuild_remove(root, mapping):
    memo = {}

    def go(x):
        if isinstance(x, tuple):
            items = [go(y) for y in x]
            items = [y for y in items if y is not REMOVE]
            if len(items) == len(x) and all(a is b for a, b in zip(items, x)):
                return x
            return tuple(items)
        if x is None or not dataclasses.is_dataclass(x) or isinstance(x, (type, S.Buffer)):
            return x
        if id(x) in mapping:
            return mapping[id(x)]
        if id(x) in memo:
            return memo[id(x)]
        changes = {}
        for f in child_fields(type(x)):
            v = getattr(x, f)
            nv = go(v)
            if nv is REMOVE:
                if isinstance(x, (S.For, S.LetStmt, S.Allocate, S.DeclBuffer, S.AttrStmt)) \
                        and f == "body":
                    memo[id(x)] = REMOVE
                    return REMOVE
                if isinstance(x, S.IfThenElse) and f == "then_case":
                    memo[id(x)] = REMOVE
                    return REMOVE
                if isinstance(x, S.IfThenElse) and f == "else_case":
                    nv = None
                elif isinstance(x, S.Block) and f == "init":
                    nv = None
                else:
                    nv = S.SeqStmt(())
            if nv is not v:
                changes[f] = nv
        y = dataclasses.replace(x, **changes) if changes else x
        if isinstance(y, S.SeqStmt) and y is not x:
            flat = []
            for s in y.seq:
                flat.extend(s.seq if isinstance(s, S.SeqStmt) and not s.comments else [s])
            if not flat:
                y = REMOVE
            elif len(flat) == 1 and not y.comments:
                y = flat[0]
            else:
                y = dataclasses.replace(y, seq=tuple(flat))
        memo[id(x)] = y
        return y

    return go(root)


def parents(root) -> dict:
    """id(child stmt) -> parent stmt, for statements (For, Block, BlockRealize, SeqStmt...)."""
    out = {}

    def go(x, parent):
        if isinstance(x, tuple):
            for y in x:
                go(y, parent)
            return
        if not isinstance(x, S.Stmt):
            return
        if parent is not None:
            out[id(x)] = parent
        for f in _STMT_FIELDS.get(type(x), ()):
            go(getattr(x, f), x)
    go(root, None)
    return out


_STMT_FIELDS = {
    S.SeqStmt: ("seq",), S.For: ("body",), S.While: ("body",),
    S.IfThenElse: ("then_case", "else_case"), S.LetStmt: ("body",), S.AssertStmt: ("body",),
    S.Allocate: ("body",), S.AllocateConst: ("body",), S.DeclBuffer: ("body",),
    S.AttrStmt: ("body",), S.Block: ("init", "body"), S.BlockRealize: ("block",),
}


def stmts(root):
    """Every statement under root, pre-order."""
    out = []

    def go(x):
        if isinstance(x, tuple):
            for y in x:
                go(y)
            return
        if not isinstance(x, S.Stmt):
            return
        out.append(x)
        for f in _STMT_FIELDS.get(type(x), ()):
            go(getattr(x, f))
    go(root)
    return out


def child_stmts(s) -> list:
    """The statements directly in the body of s (a SeqStmt flattened)."""
    if isinstance(s, S.For):
        b = s.body
    elif isinstance(s, S.Block):
        b = s.body
    elif isinstance(s, S.SeqStmt):
        b = s
    else:
        b = getattr(s, "body", None)
    if isinstance(b, S.SeqStmt):
        return list(b.seq)
    return [] if b is None else [b]


def uses_var(node, var) -> bool:
    found = []
    from ..ir.visit import walk

    def v(x):
        if x is var:
            found.append(1)
            return False
        return not found
    walk(node, v)
    return bool(found)


def buffer_loads(node, include_nested=True) -> list:
    """BufferLoads under node (optionally skipping nested blocks)."""
    out = []
    from ..ir.visit import walk

    def v(x):
        if isinstance(x, E.BufferLoad):
            out.append(x)
        if not include_nested and isinstance(x, S.BlockRealize) and x is not node:
            return False
        return True
    walk(node, v)
    return out


def buffer_stores(node) -> list:
    out = []
    from ..ir.visit import walk

    def v(x):
        if isinstance(x, S.BufferStore):
            out.append(x)
        return True
    walk(node, v)
    return out


def fresh_var(name, dtype="int32") -> E.Var:
    return E.Var(name, dtype)


def int_of(e):
    return e.value if isinstance(e, E.IntImm) else None


def replace_buffer(node, old, new):
    """Every use of buffer `old` (loads, stores, regions, allocations, match sources)
    rebuilt with `new`; also its data variable."""
    import dataclasses as dc

    def fn(y, x):
        if isinstance(y, (E.BufferLoad, S.BufferStore, S.BufferRegion, E.BufferRef)) and \
                y.buffer is old:
            return dc.replace(y, buffer=new)
        if isinstance(y, S.Block) and any(b is old for b in y.alloc_buffers):
            return dc.replace(y, alloc_buffers=tuple(new if b is old else b
                                                     for b in y.alloc_buffers))
        if isinstance(y, S.DeclBuffer) and y.buffer is old:
            return dc.replace(y, buffer=new)
        if isinstance(y, E.Var) and x is old.data:
            return new.data
        return None
    return rebuild(node, fn)
