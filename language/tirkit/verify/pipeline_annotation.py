"""annotation/software-pipeline: a loop's `software_pipeline_stage` and
`software_pipeline_order` annotations that TVM's `InjectSoftwarePipeline` rejects when the
kernel is compiled:

- one of the two without the other, or lists of different lengths;
- lists whose length is not the number of statements of the loop body (the statements of
  the body's sequence, inside the opaque block that usually wraps it; not checked when the
  body holds another pipelined loop, which is expanded into more statements first);
- an order that is not a permutation of 0..n-1 (an order repeated or out of range);
- an order that puts a statement before one of the same stage that it depends on (it reads
  a buffer the earlier statement writes).

Reported on the loop; the statement involved is a related location."""
from __future__ import annotations

from ..diagnostics import error
from ..ir import expr as E
from ..ir import stmt as S
from ..ir.visit import walk
from . import register
from ._common import func_accesses

STAGE = "software_pipeline_stage"
ORDER = "software_pipeline_order"


def _ints(v):
    """A list of Python ints from an annotation value, or None."""
    if isinstance(v, E.ArrayExpr):
        v = list(v.elements)
    if not isinstance(v, (list, tuple)):
        return None
    out = []
    for x in v:
        x = getattr(x, "value", x)
        if not isinstance(x, int) or isinstance(x, bool):
            return None
        out.append(x)
    return out


def _statements(body):
    """The statements the pipeline annotations count, or None when the body has no
    sequence."""
    while isinstance(body, S.BlockRealize) and not body.block.iter_vars:
        body = body.block.body
    while isinstance(body, (S.DeclBuffer, S.LetStmt)):
        body = body.body
    if isinstance(body, S.SeqStmt):
        return list(body.seq)
    return None


def _nested(body):
    """The body holds another pipelined loop."""
    found = []

    def f(x):
        if isinstance(x, S.For) and any(k == STAGE for k, _ in x.annotations):
            found.append(x)
        return not found
    walk(body, f)
    return bool(found)


def _buffers(stmt):
    """(buffers read, buffers written) by a statement, as data Vars."""
    reads, writes = set(), set()

    def f(x):
        if isinstance(x, E.BufferLoad):
            reads.add(x.buffer.data)
        elif isinstance(x, S.BufferStore):
            writes.add(x.buffer.data)
        elif isinstance(x, S.Block):
            reads.update(r.buffer.data for r in x.reads or ())
            writes.update(r.buffer.data for r in x.writes or ())
        return True
    walk(stmt, f)
    return reads, writes


def _check_loop(lp):
    ann = dict(lp.annotations)
    if STAGE not in ann and ORDER not in ann:
        return None
    if STAGE not in ann or ORDER not in ann:
        have, miss = (STAGE, ORDER) if STAGE in ann else (ORDER, STAGE)
        return f"the loop has `{have}` but no `{miss}`: a software pipeline needs both", None
    stage, order = _ints(ann[STAGE]), _ints(ann[ORDER])
    if stage is None or order is None:
        return None
    if len(stage) != len(order):
        return (f"`{STAGE}` has {len(stage)} entries but `{ORDER}` has {len(order)}", None)
    stmts = _statements(lp.body)
    if _nested(lp.body):
        stmts = None      # an inner pipeline is expanded first (prologue, body, epilogue)
    if stmts is not None and len(stmts) != len(stage):
        return (f"the pipeline annotations have {len(stage)} entries but the loop body has "
                f"{len(stmts)} statements", None)
    n = len(order)
    if sorted(order) != list(range(n)):
        dup = sorted({x for x in order if order.count(x) > 1 or not 0 <= x < n})
        return (f"`{ORDER}` {order} is not a permutation of 0..{n - 1} "
                f"({', '.join(map(str, dup))} repeated or out of range)", None)
    if stmts is None:
        return None
    acc = [_buffers(s) for s in stmts]
    for j in range(n):
        for i in range(j):
            if stage[i] == stage[j] and order[j] < order[i] and acc[j][0] & acc[i][1]:
                return (f"`{ORDER}` runs statement {j} (order {order[j]}) before statement "
                        f"{i} (order {order[i]}), which it depends on, in the same stage "
                        f"{stage[i]}", getattr(stmts[j], "span", None))
    return None


@register("annotation/software-pipeline", fast=True)
def check_pipeline_annotation(func, ctx):
    if ctx.incomplete(func):
        return []         # a statement may be missing from the IR
    out = []
    for lp in func_accesses(func, ctx).loops:
        x = lp.node
        if isinstance(x, S.For) and x.annotations and x.span is not None:
            found = _check_loop(x)
            if found is not None:
                msg, rel = found
                related = [(rel, "this statement")] if rel is not None else []
                out.append(error("annotation/software-pipeline", msg, x.span, related))
    return out
