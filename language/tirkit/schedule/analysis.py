"""What the primitives need to know about blocks: read/write regions (declared, or inferred
from the body by analysis/regions.py), producers and consumers within a scope, output
buffers, bindings; and whether a loop's iterations that run at once meet (`dependence`)."""
from __future__ import annotations

import dataclasses

from ..ir import expr as E
from ..ir import stmt as S
from ..ir.visit import find_all, walk
from ..arith import writeback as A
# block regions come from the one region analysis (re-exported for the primitives)
from ..analysis.regions import (atom_vars, infer_regions, region_of_indices,  # noqa: F401
                                regions_of)
from ..verify.parallel_race import iteration_conflict
from ..verify.vector_dependence import lane_conflict
from . import _ir

def read_buffers(block: S.Block) -> list:
    if block.reads is not None:
        return _uniq([r.buffer for r in block.reads])
    return _uniq([r.buffer for r in infer_regions(block)[0]])


def write_buffers(block: S.Block) -> list:
    if block.writes is not None:
        return _uniq([r.buffer for r in block.writes])
    return _uniq([r.buffer for r in infer_regions(block)[1]])


def _uniq(bs):
    out = []
    for b in bs:
        if not any(b is x for x in out):
            out.append(b)
    return out


def output_buffers(func: S.PrimFunc) -> list:
    return [b for _, b in func.buffer_map]


def writes_output(func, block) -> bool:
    outs = output_buffers(func)
    return any(any(b is o for o in outs) for b in write_buffers(block))


def scope_blocks(sch, func, scope):
    """BlockInfos whose scope block is `scope`, in program order."""
    return [i for i in sch.index(func).order if i.scope is scope]


def producers(sch, func, info) -> list:
    reads = read_buffers(info.block)
    out = []
    for other in scope_blocks(sch, func, info.scope):
        if other.block is info.block:
            break
        if any(any(w is r for r in reads) for w in write_buffers(other.block)):
            out.append(other)
    return out


def consumers(sch, func, info) -> list:
    writes = write_buffers(info.block)
    out, after = [], False
    for other in scope_blocks(sch, func, info.scope):
        if other.block is info.block:
            after = True
            continue
        if after and any(any(w is r for r in read_buffers(other.block)) for w in writes):
            out.append(other)
    return out


def is_reduction(block: S.Block) -> bool:
    return any(iv.kind == "R" for iv in block.iter_vars)


def binding_uses(realize: S.BlockRealize, var, kinds=("R",)) -> list:
    """Iterators of the given kinds whose binding uses `var`."""
    out = []
    for iv, v in zip(realize.block.iter_vars, realize.iter_values):
        if iv.kind in kinds and _ir.uses_var(v, var):
            out.append(iv)
    return out


def realizes_under(stmt) -> list:
    return find_all(stmt, lambda x: True, S.BlockRealize)


def is_affine(e, bounds=None) -> bool:
    lin = A.to_form(e, bounds or {})

    def ok(l):
        for a in l.terms:
            if A.is_opaque(a):
                return False
            if not A.is_var(a) and not ok(a.args[0]):
                return False
        return True
    return ok(lin)


def refresh_regions(block: S.Block) -> S.Block:
    """Recompute declared reads/writes after a body change (undeclared ones stay None)."""
    import dataclasses
    if block.reads is None and block.writes is None:
        return block
    r, w = infer_regions(block)
    return dataclasses.replace(block, reads=r if block.reads is not None else None,
                               writes=w if block.writes is not None else None)


def opaque_uses(stmt, buf) -> list:
    """Nodes that use `buf` other than through BufferLoad/BufferStore (intrinsic arguments,
    match_buffer sources, pointer access)."""
    out = []

    def v(x):
        if isinstance(x, E.BufferRef) and x.buffer is buf:
            out.append(x)
        elif isinstance(x, S.MatchBufferRegion) and x.source.buffer is buf:
            out.append(x)
        elif isinstance(x, E.Var) and x is buf.data:
            out.append(x)
        elif isinstance(x, E.Call):
            for a in x.args:
                if isinstance(a, E.BufferLoad) and a.buffer is buf and \
                        x.op in ("address_of", "tvm_access_ptr"):
                    out.append(x)
        return True
    walk(stmt, v)
    return out


def runs_at_once(loop) -> bool:
    """Whether the loop's iterations may run at the same time, as parallel threads, thread
    blocks or the threads of one (a loop bound to blockIdx or threadIdx) or vector lanes."""
    return loop.kind in ("parallel", "vectorized") or (
        loop.kind == "thread_binding" and
        (loop.thread_tag or "").startswith(("blockIdx", "threadIdx")))


def dependence(func, loop):
    """The diagnostic of two iterations of `loop` (a For of `func`) that run at once
    (`runs_at_once`) touching one element, one writing, in an order its kind does not keep;
    None.  What `parallel`, `vectorize` and `bind` refuse, and `compute_at`,
    `reverse_compute_at` and `reorder` where they would make such a loop so."""
    if not runs_at_once(loop):
        return None
    return (lane_conflict if loop.kind == "vectorized" else iteration_conflict)(func, loop)


def check_independent(sch, func, old, new, loops, what, doing=None, related=()):
    """Refuse to put statement `new` in place of `old` in `func` where one of `loops` (the
    loops concerned, of the kinds they will have) that runs its iterations at once would
    then have two of them touch one element, one writing, in an order its kind does not
    keep: error `{what}/dependence` on that loop, with the race or lane rule's witness
    (every pair of accesses read: two of one block too, which TVM refuses as a block
    without compact dataflow, and two blocks', which it lets through); `doing(loop)` says
    what the primitive did to it ("block 'mx' computed in each iteration of loop 'j_0'";
    by default the loop's name, "loop 'i'").  A loop whose iterations already met in
    `func` is let through: the primitive did not make that race (the race rule reports
    it)."""
    at_once = {id(f.loop_var): f for f in loops if runs_at_once(f)}
    if not at_once:
        return
    trial = dataclasses.replace(func, body=_ir.replace_nodes(func.body, {id(old): new}))
    for s in _ir.stmts(trial.body):
        if isinstance(s, S.For) and id(s.loop_var) in at_once:
            d = dependence(trial, s)
            loop = at_once[id(s.loop_var)]
            if d is not None and dependence(func, loop) is None:
                said = doing(loop) if doing else f"loop '{loop.loop_var.name}'"
                raise sch.error(f"{what}/dependence", f"{said}: {d.message}", loop,
                                list(related))
