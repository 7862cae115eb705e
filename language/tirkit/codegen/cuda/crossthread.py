"""GPU pass: a reduction block whose reduction iterators are fed by threadIdx loops becomes a
cross-thread reduction (TVM's LowerCrossThreadReduction).

    for tx in T.thread_binding(32, thread="threadIdx.x"):
        for ko in range(4):
            with T.block("B"):
                vi = T.axis.spatial(128, i)
                vk = T.axis.reduce(128, ko * 32 + tx)
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]

runs, in each thread: an in-thread reduction into a local accumulator that starts at the
reducer's identity (the block's serial reduction loops, its predicate, its update); the
reduction of the threads' accumulators across the reducing threads (allreduce.py); and a
write-back of the result, by the first reducing thread unless the buffer is local (then by
each, as every thread holds the result).  With an init the write-back stores the result
(combined with the init value when that is not the identity); without one it combines the
result with what the buffer holds.

As in TVM, the loops the block reduces over must be the innermost statements around it
(sequences aside), with the block the last one under them; its update must be the
combination of a commutative reducer (analysis/reducers.py): `B[i] = B[i] op value`, or the
let-bound update of several buffers at one index (argmax and argmin of an index and a value,
a pair of sums), each buffer with one accumulator and one write-back.  An argmax whose
values tie may keep another of the tied indices than a serial run, as in TVM.  Consumers
outside the reducing threads are not rewritten (TVM's thread broadcast): each thread runs
them."""
from __future__ import annotations

import dataclasses

from ...analysis import reducers
from ...ir import expr as E
from ...ir import stmt as S
from ...ir.visit import find_all, rebuild, statement_paths, substitute, vars_in
from ..errors import UNSUPPORTED, fail
from ..passes.blocks import allocate
from .allreduce import OP as ALLREDUCE, kernel_threads, scratch, thread_allreduce

TRUE = E.IntImm("bool", 1)


def _thread_tag(lp) -> str:
    return (lp.thread_tag or "") if lp.kind == "thread_binding" else ""


def _conjuncts(e):
    return _conjuncts(e.a) + _conjuncts(e.b) if isinstance(e, E.And) else [e]


def _and(conds):
    out = TRUE
    for c in conds:
        out = c if E.is_const_int(out, 1) else E.And(out, c, "bool")
    return out


def _reduction_loops(realize, path):
    """The loops around realize whose variables feed its reduction iterators, outermost
    first, when one of them is a threadIdx binding; else None."""
    b = realize.block
    red = {id(v) for iv, x in zip(b.iter_vars, realize.iter_values) if iv.kind == "R"
           for v in vars_in(x)}
    loops = [x for x in path if isinstance(x, S.For) and id(x.loop_var) in red]
    if not any(_thread_tag(lp).startswith("threadIdx") for lp in loops):
        return None
    return loops


def _check(realize, path, loops):
    b = realize.block
    names = ", ".join(f"'{lp.loop_var.name}'" for lp in loops)
    for lp in loops:
        tag = _thread_tag(lp)
        if tag and not tag.startswith("threadIdx"):
            what = "thread blocks" if tag.startswith("blockIdx") else "virtual threads"
            fail(UNSUPPORTED, f"block '{b.name_hint}' reduces over {tag} (loop "
                 f"'{lp.loop_var.name}'): a reduction across {what} is not generated",
                 b, [(lp.span, f"{tag} bound here")] if lp.span else ())
    inner = [x for x in reversed(path) if not isinstance(x, S.SeqStmt)][:len(loops)]
    if {id(x) for x in inner} != {id(lp) for lp in loops}:
        fail(UNSUPPORTED, f"block '{b.name_hint}' reduces across threads over the loops "
             f"{names}, which must be the innermost statements around it for a "
             "cross-thread reduction", b)
    if find_all(loops[0], lambda x: True, S.BlockRealize, nested=False)[-1] is not realize:
        fail(UNSUPPORTED, f"block '{b.name_hint}' reduces across threads but is not the "
             f"last block under loop '{loops[0].loop_var.name}'", b)
    ids = {id(lp.loop_var) for lp in loops}
    for iv, x in zip(b.iter_vars, realize.iter_values):
        if iv.kind != "R" and any(id(v) in ids for v in vars_in(x)):
            fail(UNSUPPORTED, f"block '{b.name_hint}': spatial iterator '{iv.var.name}' is "
                 f"fed by a loop it reduces over ({names})", b)
    m = reducers.match_updates(b.body)
    if m is None or b.match_buffers or b.alloc_buffers:
        fail(UNSUPPORTED, f"block '{b.name_hint}' reduces across threads, and only an "
             "update that combines with a commutative reducer is generated: "
             "`B[i] = B[i] op value` with op one of +, *, min, max, or the let-bound update "
             "of several buffers at one index as argmax, argmin or a pair of sums", b)
    return m


def _inits(b, m) -> list | None:
    """The init's value of each buffer of the update m (in m's order); None without an
    init."""
    if b.init is None:
        return None
    values = reducers.init_values(b.init, m)
    if values is None:
        fail(UNSUPPORTED, f"block '{b.name_hint}' reduces across threads, and its init is "
             "not one store to each element its update writes", b)
    return values


def _lower_one(realize, path, loops):
    m = _check(realize, path, loops)
    b = realize.block
    span = m.stores[0].span
    bufs = m.buffers()
    local = {(x.scope or "global") == "local" for x in bufs}
    if len(local) > 1:
        fail(UNSUPPORTED, f"block '{b.name_hint}' reduces across threads into local and "
             "non-local buffers at once, which is not generated: every thread writes a "
             "local result back, the first thread a shared or global one", b)
    dts = [x.dtype for x in bufs]
    zero = (E.IntImm("int32", 0),)
    accs = [scratch(f"{x.name}_in_thread", x.dtype, 1, "local") for x in bufs]
    ress = [scratch(f"{x.name}_cross_thread", x.dtype, 1, "local") for x in bufs]
    acc_loads = [E.BufferLoad(a, zero, a.dtype) for a in accs]
    threads_red = [lp for lp in loops if _thread_tag(lp)]
    identities = m.reducer.identities(dts)

    # 1-2: the in-thread reduction, the reducing thread loops taken out of the nest
    in_block = dataclasses.replace(
        b, name_hint=b.name_hint + "_in_thread", reads=None, writes=None, init=None,
        body=reducers.store_all(accs, m.reducer.combine(acc_loads, list(m.values)), zero, span))
    in_realize = dataclasses.replace(realize, block=in_block)
    dropped = {id(lp) for lp in threads_red}

    def fn(new, old):
        if old is realize:
            return in_realize
        if id(old) in dropped:
            return new.body
        return None
    in_thread = rebuild(loops[0], fn)
    init = [S.BufferStore(a, v, zero, span=span) for a, v in zip(accs, identities)]

    # 3: across the threads
    threads = kernel_threads(path, b)
    across = thread_allreduce(m.reducer.combine, identities, acc_loads, TRUE,
                              [E.BufferLoad(r, zero, r.dtype) for r in ress],
                              [lp.loop_var for lp in threads_red], threads, b)

    # 4: the write-back, a block over the spatial iterators
    red_ids = {id(lp.loop_var) for lp in loops}
    vmap, ivs, iter_values = {}, [], []
    for iv, x in zip(b.iter_vars, realize.iter_values):
        if iv.kind != "R":
            nv = E.Var(iv.var.name, iv.var.dtype)
            vmap[id(iv.var)] = nv
            ivs.append(dataclasses.replace(iv, var=nv))
            iter_values.append(x)
    idx = tuple(substitute(i, vmap) for i in m.stores[0].indices)
    results = [E.BufferLoad(r, zero, r.dtype) for r in ress]
    inits = _inits(b, m)
    if inits is None:
        values = m.reducer.combine([E.BufferLoad(x, idx, x.dtype) for x in bufs], results)
    elif reducers.starts_at_identity(inits, identities):
        values = results
    else:
        values = m.reducer.combine([substitute(v, vmap) for v in inits], results)
    keep = [c for c in _conjuncts(realize.predicate)
            if not E.is_const_int(c, 1) and not any(id(v) in red_ids for v in vars_in(c))]
    if local == {False}:
        keep += [E.EQ(lp.loop_var, lp.min, "bool") for lp in threads_red]
    wb = S.BlockRealize(tuple(iter_values), _and(keep), S.Block(
        b.name_hint + "_write_back", tuple(ivs), None, None,
        reducers.store_all(bufs, values, idx, span), span=b.span))

    body = S.SeqStmt((*init, in_thread, across, wb))
    for x in reversed(accs + ress):
        body = allocate(x, body, b.span)
    for lp in reversed(threads_red):
        body = dataclasses.replace(lp, body=body)
    return body


def lower_cross_thread_reductions(body):
    """Each reduction block reduced across threadIdx loops, lowered (module doc).  A body
    that already calls `T.tvm_thread_allreduce` is TVM's lowering of it (its in-thread
    blocks keep the reduction iterators the threads feed, into a local accumulator of each
    thread) and is left as it is."""
    if find_all(body, lambda x: x.op == ALLREDUCE, E.Call):
        return body
    found = statement_paths(body, lambda x: isinstance(x, S.BlockRealize), nested=True)
    done = {}
    for realize, path in found:
        loops = _reduction_loops(realize, path)
        if loops is None:
            continue
        if any(id(x) in done for x in path):
            fail(UNSUPPORTED, f"block '{realize.block.name_hint}' is a cross-thread reduction "
                 "nested in another", realize.block)
        done[id(loops[0])] = _lower_one(realize, path, loops)
    if not done:
        return body
    return rebuild(body, lambda new, old: done.get(id(old)))
