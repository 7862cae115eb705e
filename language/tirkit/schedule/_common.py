"""Helpers shared by the primitives: constants and conjunctions, bounds from enclosing loops,
binding simplification, building loop nests."""
from __future__ import annotations

import dataclasses

from ..ir import expr as E
from ..ir import stmt as S
from ..arith import writeback as A
from . import _ir

TRUE = E.IntImm("bool", 1)


def int32(v, dtype="int32"):
    return E.IntImm(dtype, v)


def is_true(e) -> bool:
    return isinstance(e, E.IntImm) and e.value == 1


def is_zero(e) -> bool:
    return isinstance(e, E.IntImm) and e.value == 0


def conjuncts(e) -> list:
    """The operands of a chain of `and`s (e itself when it is not one)."""
    if isinstance(e, E.And):
        return conjuncts(e.a) + conjuncts(e.b)
    return [e]


loop_bounds = A.loop_bounds        # id(loop var) -> (lo, hi) of the constant-extent loops


def simplify_bindings(stmt, outer_loops, fold=(), touched=None):
    """Simplify the iterator bindings of every block realize under `stmt`, using the bounds
    of the loops around it. Only the variables in `fold` (ids) are replaced by a constant
    when their loop has extent 1; predicates are left as they are (as TVM does)."""
    import dataclasses as dc
    fold = set(fold)

    def go(x, bounds):
        if isinstance(x, tuple):
            items = tuple(go(y, bounds) for y in x)
            return x if all(a is b for a, b in zip(items, x)) else items
        if isinstance(x, S.For):
            b = dict(bounds)
            if isinstance(x.min, E.IntImm) and isinstance(x.extent, E.IntImm):
                lo, hi = x.min.value, x.min.value + x.extent.value - 1
                b[id(x.loop_var)] = (lo, hi)
            body = go(x.body, b)
            return x if body is x.body else dc.replace(x, body=body)
        if isinstance(x, S.SeqStmt):
            seq = go(x.seq, bounds)
            return x if seq is x.seq else dc.replace(x, seq=seq)
        if isinstance(x, S.BlockRealize):
            folding = A.Bounds(bounds, fold)
            # only the bindings the primitive changed (TVM leaves the others as written)
            vals = tuple(A.simplify(v, folding, binding=True) if touched is None or
                         any(id(u) in touched for u in _ir.vars_in(v)) else v
                         for v in x.iter_values)
            return dc.replace(x, iter_values=vals)
        if isinstance(x, (S.LetStmt, S.IfThenElse, S.AttrStmt, S.Allocate, S.DeclBuffer)):
            f = "then_case" if isinstance(x, S.IfThenElse) else "body"
            inner = go(getattr(x, f), bounds)
            return x if inner is getattr(x, f) else dc.replace(x, **{f: inner})
        return x
    return go(stmt, loop_bounds(outer_loops))


def nest(loops_spec, body):
    """Build For loops around body: loops_spec outermost first, each a For template whose
    body is replaced."""
    for f in reversed(loops_spec):
        body = dataclasses.replace(f, body=body)
    return body


def new_loop(var, extent, body=None, kind="serial", thread_tag=None, annotations=(), span=None,
             min_=None):
    return S.For(var, min_ if min_ is not None else int32(0, var.dtype),
                 extent if isinstance(extent, E.PrimExpr) else int32(extent, var.dtype),
                 kind, body, thread_tag, annotations, span)


def and_(a, b):
    if is_true(a):
        return b
    if is_true(b):
        return a
    return E.And(a, b, "bool")


def shared_by_threads(f, storage):
    """Is `f` a thread loop whose threads all see one buffer of `storage` scope (so a block
    that fills such a buffer under `f` fills it for all of them)?"""
    if f.kind != "thread_binding" or not f.thread_tag:
        return False
    # TVM's storage and thread ranks: global 0, shared 1; blockIdx 0, threadIdx and vthread
    # 1; a buffer is shared by the threads of its rank and below, warp memory by threadIdx.x
    rank = storage.split(".")[0]
    tag = f.thread_tag
    if rank == "warp":
        return tag == "threadIdx.x"
    if rank == "global":
        return tag.startswith(("blockIdx", "threadIdx", "vthread", "cthread"))
    if rank == "shared":
        return tag.startswith(("threadIdx", "vthread", "cthread"))
    return False
