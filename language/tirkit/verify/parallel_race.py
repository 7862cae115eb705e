"""loop-nest/parallel-race: two iterations of a parallel loop (`T.parallel`, or a loop bound
to `blockIdx.*`) touch one element, at least one of them writing.  The iterations run at the
same time, so the value read, or the one left, depends on their timing: `B[0] = B[0] + A[i]`
under `T.parallel`, or `A[i + 1] = A[i] * 2`.  TVM compiles both without a word.

Only what is certain is reported: a witness, two values of the loop's variable and the
element they share, found by evaluating the accesses' indices and guards at every point of
the loops inside the parallel one (arith/enumerate.py: constant loops, and loops whose
bounds are expressions of the loops around them, `range(i)` inside parallel `i`, read
within those bounds at each point; at most 65,536
points for all the accesses under one parallel loop, an access whose points do not fit
read in part, a prefix of each loop; the loops outside it at their first values).
Iterations that store one value to an element by one store leave that value whatever
their order, and are not reported, even where iterations read it after writing it
themselves (in execution order: the loops both are in, then the statements): a value with
no call but of a pure function, no load of storage the loop writes, and no variable of the
loops inside but those the store's own indices fix or inside a load at those indices
(`T_add[ax0] = x[ax0] + 1`,
as compute_at recomputes a producer's overlapping elements in each tile; a call only of a
pure function, `T.if_then_else` of a padding, `T.exp`); where a nest is
read in part, such elements are not judged.  Two accesses of one block with iterators
inside the loop (the outermost such block) are left to the block rules
(`signature/iter-type`, `loop-nest/reduction-on-parallel`): a block's iterators declare its
instances independent.  Accesses of two blocks are read: block `Y` of iteration 1 reading
the `A[1]` that block `X` of iteration 0 writes is a race, and TVM's `parallel` accepts the
loop (each block alone has compact dataflow).  Storage allocated inside the loop is each
iteration's own.  Under `blockIdx`, only the function's parameters are read (shared and
local memory belong to one thread block).  Not read: vector accesses, accesses through an
address (intrinsics), and loops whose bounds depend on anything but constants and the
loops around them (a size passed as a parameter).  Reported on the write,
with the loop and the other access related; its quick fix under `T.parallel` makes the
loop serial (verify/fixes.py)."""
from __future__ import annotations

from ..diagnostics import error
from . import register
from ._common import const_int, full_env, func_accesses, vars_through
from ._iterations import (block_owner, element_text, first_conflict, invariant_store,
                          loop_at, loop_vars, points_by_storage, written_under)

CODE = "loop-nest/parallel-race"


def _why(lp, threads=False):
    """How a message says the loop runs its iterations at the same time (what the loop is,
    and the loop), or None; `threads`: a loop bound to threadIdx too."""
    if lp.kind == "parallel":
        return "parallel", "the parallel loop"
    tag = lp.thread_tag or ""
    if lp.kind == "thread_binding" and tag.startswith(
            ("blockIdx", "threadIdx") if threads else "blockIdx"):
        return f"bound to {tag}", f"the loop bound to {tag}"
    return None


@register(CODE, fast=True)
def check_parallel_race(func, ctx):
    if ctx.incomplete(func):
        return []
    fa = func_accesses(func, ctx)
    env = full_env(fa)
    out = []
    for lp in fa.loops:
        why = _why(lp)
        n = const_int(lp.extent)
        if why is not None and n is not None and n >= 2:
            found = _race(func, fa, lp, why, env)
            if found is not None:
                out.append(found)
    return out


def iteration_conflict(func, node):
    """The error of two iterations of loop `node` (a For of `func`, parallel or bound to
    blockIdx or threadIdx) that touch one element, one writing, two accesses of one block
    with iterators included: what the `parallel` and `bind` schedule primitives refuse;
    None.  Only global storage is read: a GPU kernel's shared, local or warp buffers
    (made CPU threads' by a parallel loop around their thread bindings; between the threads
    of one block TVM puts barriers), are not judged.  Under threadIdx, blocks the threads
    share out among themselves are not read (`_shared_out`)."""
    fa, lp = loop_at(func, node)
    n = const_int(lp.extent) if lp is not None else None
    why = _why(lp, threads=True) if lp is not None else None
    if n is None or n < 2 or why is None:
        return None
    return _race(func, fa, lp, why, full_env(fa), within=True)


def _shared_out(a, lp, env) -> bool:
    """Whether access `a` is in a block the threads of loop `lp` (bound to threadIdx) share
    out among themselves: one with a reduction iterator the loop feeds (a cross-thread
    reduction, whose threads combine their values), or one marked `auto_copy` (TVM's
    LowerAutoCopy spreads the copy over the threads)."""
    return any(any(iv.kind == "R" and id(lp.var) in vars_through(v, env)
                   for iv, v in zip(r.block.iter_vars, r.iter_values)) or
               any(k == "auto_copy" and const_int(v) != 0 for k, v in r.block.annotations)
               for r in a.blocks)


def _race(func, fa, lp, why, env, within=False):
    """The first race between two iterations of loop `lp` (`_why`'s words for it), or None;
    `within` (the primitive's check): two accesses of one block with iterators count too,
    and only global storage is read."""
    params = {id(b.data) for _, b in func.buffer_map}
    inner = loop_vars(fa, lp)
    threads = (lp.thread_tag or "").startswith("threadIdx")

    def keep(a, pos):
        if within:
            return a.buffer.scope == "global" and not (threads and _shared_out(a, lp, env))
        return why[0] == "parallel" or id(a.buffer.data) in params
    by_data = points_by_storage(fa, lp, env, keep, blocks=True, within=within)
    written = written_under(fa, lp)
    for entries in by_data.values():
        found = first_conflict(
            [(a, pts, a.is_write and invariant_store(a, inner, env, written))
             for a, pts in entries],
            owners=None if within else [block_owner(a, a.loops.index(lp)) for a, _ in entries],
            inner=[a.loops[a.loops.index(lp) + 1:] for a, _ in entries],
            cut=any(pts[5] for _, pts in entries))
        if found is not None:
            return _report(lp, why, entries, *found)
    return None


def _report(lp, why, entries, w, o):
    what, loop = why
    (wa, wp), (oa, op) = [(entries[k][0], entries[k][1]) for k, _, _ in (w, o)]
    name = element_text(wa, wp, w[1])
    v = lp.var.name
    if oa.is_write:
        msg = (f"iterations `{v}` = {w[2]} and `{v}` = {o[2]} of {loop} both write {name}: "
               "they may run at the same time, so the value left depends on their timing")
        other = f"iteration `{v}` = {o[2]} writes {name} here"
    else:
        msg = (f"iteration `{v}` = {o[2]} reads {name}, which iteration `{v}` = {w[2]} "
               f"writes: {loop} may run them at the same time, so the value read depends "
               "on their timing")
        other = f"iteration `{v}` = {o[2]} reads {name} here"
    related = [(lp.span, f"loop `{v}` is {what} here")] if lp.span else []
    if oa.span is not None and oa.span != wa.span:
        related.append((oa.span, other))
    return error(CODE, msg, wa.span or lp.span, related)
