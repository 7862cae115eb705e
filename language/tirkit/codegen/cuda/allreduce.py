"""GPU pass: `T.tvm_thread_allreduce` as warp shuffles or a reduction tree in shared memory
(TVM's LowerThreadAllreduce).

`T.tvm_thread_allreduce(n, v_0 .. v_n-1, cond, d_0 .. d_n-1, t ...)`, under
`T.attr(T.comm_reducer(combiner, identities), "reduce_scope", 0)`, combines the values of
the threads that differ only in the indices `t` (threadIdx variables; a thread whose `cond`
is false gives the identities) and leaves the result in every such thread's `d_i`.

Where the reducing threads are threadIdx.x alone, a power of two up to 32 of them, in a block
of whole warps, each group is a segment of consecutive lanes of one warp: halving steps
`v = combine(v, shuffle_down(v, s))` in registers, then every lane takes its segment's lane 0
(shuffle.py).  Elsewhere each thread stores its value in a shared buffer with one slot per
thread of the block, `group * n + lane` (lane numbers the reducing threads, group the
others); halving steps `if lane < s: red[slot] = combine(red[slot], red[slot + s])` follow (a
first step folds a count that is not a power of two onto the largest power of two below
it), and every thread reads its group's slot 0; insert_syncs puts a barrier between the
steps, as each reads what another thread wrote.  `thread_allreduce` builds this for the
lowering of cross-thread reduction blocks too (crossthread.py)."""
from __future__ import annotations


from ...analysis.reducers import store_all
from ...ir import expr as E
from ...ir import stmt as S
from ...ir.visit import find_all, rebuild, statement_paths, substitute
from ..errors import UNSUPPORTED, fail
from ..passes.blocks import allocate
from .scopes import is_thread_binding

OP = "tvm_thread_allreduce"
TRUE = E.IntImm("bool", 1)


def _int(v):
    return E.IntImm("int32", v)


def _flat(loops):
    """(index, count) numbering the threads of loops (the last one fastest)."""
    index, count = None, 1
    for lp in reversed(loops):
        v = lp.loop_var if lp.loop_var.dtype == "int32" else E.Cast("int32", lp.loop_var)
        if not E.is_const_int(lp.min, 0):
            v = E.Sub(v, lp.min, "int32")
        term = v if count == 1 else E.Mul(v, _int(count), "int32")
        index = term if index is None else E.Add(index, term, "int32")
        count *= lp.extent.value
    return (index if index is not None else _int(0)), count


def _plus(a, b: int):
    return a if b == 0 else E.Add(a, _int(b), "int32")


def scratch(name, dtype, size, scope) -> S.Buffer:
    """A one-dimensional buffer of `size` elements the lowering adds."""
    data = E.Var(name, "handle", E.PointerType(dtype, scope))
    return S.Buffer(name, (_int(size),), dtype, data, scope=scope)


def _first(bufs, values, identities, cond, index, span) -> list:
    """Each thread's values stored at index (the identities where cond is false)."""
    out = []
    for b, v, ident in zip(bufs, values, identities):
        if not E.is_const_int(cond, 1):
            v = E.Select(cond, v, ident, v.dtype)
        out.append(S.BufferStore(b, v, index, span=span))
    return out


def _allocated(bufs, stmts, span) -> S.Stmt:
    stmt = S.SeqStmt(tuple(stmts))
    for b in reversed(bufs):
        stmt = allocate(b, stmt, span)
    return stmt


def kernel_threads(path, at) -> list:
    """The threadIdx loops among path (the statements around a reduction, outermost first),
    checked to be the only thread dimensions of the kernel: a thread of another dimension
    would run the reduction too, and the threads of two of its indices would share slots.
    `at` is the node a refusal names."""
    threads = [x for x in path if is_thread_binding(x, "threadIdx")]
    tags = [t.thread_tag for t in threads]
    if len(set(tags)) != len(tags):
        fail(UNSUPPORTED, f"a cross-thread reduction inside two bindings of "
             f"{next(t for t in tags if tags.count(t) > 1)} is not generated", at)
    for t in threads:
        if not isinstance(t.extent, E.IntImm):
            fail(UNSUPPORTED, f"a cross-thread reduction over {t.thread_tag} needs a constant "
                 f"thread count, not '{t.extent}'", at,
                 [(t.span, "bound here")] if t.span else ())
    ids = {id(t.loop_var) for t in threads}
    for x in path:
        cond = x.condition if isinstance(x, S.IfThenElse) else \
            x.predicate if isinstance(x, S.BlockRealize) else None
        if cond is not None and find_all(cond, lambda v: id(v) in ids, E.Var):
            fail(UNSUPPORTED, "a cross-thread reduction under a condition on the thread "
                 "index is not generated: every thread of the block must reach its barriers",
                 at, [(x.span, "the condition")] if x.span else ())
    root = next((x for x in path if isinstance(x, S.For) and x.kind == "thread_binding"), None)
    if root is not None:
        for other in find_all(root, lambda x: is_thread_binding(x, "threadIdx"), S.For):
            if other.thread_tag not in tags:
                fail(UNSUPPORTED, f"the kernel binds {other.thread_tag} elsewhere, so those "
                     "threads run this cross-thread reduction too: a reduction outside "
                     f"the {other.thread_tag} binding is not generated", at,
                     [(other.span, f"{other.thread_tag} bound here")] if other.span else ())
    return threads


def thread_allreduce(combine, identities, values, cond, dsts, reduce_vars, threads, at):
    """The statement computing `tvm_thread_allreduce`: combine(xs, ys) -> [expr] combines two
    partial results (one expr per value); dsts are the BufferLoads the result goes to;
    threads are the threadIdx loops around (kernel_threads), reduce_vars the variables of
    those reduced over; the statements made take `at`'s span."""
    span = at.span
    by_var = {id(t.loop_var): t for t in threads}
    reducing = []
    for v in reduce_vars:
        t = by_var.get(id(v))
        if t is None:
            fail(UNSUPPORTED, f"a cross-thread reduction over '{v}', which is not a "
                 "threadIdx binding around it, is not generated", at)
        reducing.append(t)
    lane, n = _flat(reducing)
    group, _ = _flat([t for t in threads if all(t is not r for r in reducing)])
    size = 1
    for t in threads:
        size *= t.extent.value
    if _warp_fits(reducing, n, size, values):
        return _warp_allreduce(combine, identities, values, cond, dsts, n, span)
    base = group if n == 1 else E.Mul(group, _int(n), "int32")
    slot = E.Add(base, lane, "int32")
    bufs = [scratch(f"red_buf{i}", v.dtype, size, "shared") for i, v in enumerate(values)]
    out = _first(bufs, values, identities, cond, (slot,), span)

    def step(active, offset):
        xs = [E.BufferLoad(b, (slot,), b.dtype) for b in bufs]
        ys = [E.BufferLoad(b, (_plus(slot, offset),), b.dtype) for b in bufs]
        return S.IfThenElse(E.LT(lane, _int(active), "bool"),
                            store_all(bufs, combine(xs, ys), (slot,), span), None, span=span)

    p = 1 << (n.bit_length() - 1)
    if p < n:
        out.append(step(n - p, p))
    s = p // 2
    while s >= 1:
        out.append(step(s, s))
        s //= 2
    for b, d in zip(bufs, dsts):
        out.append(S.BufferStore(d.buffer, E.BufferLoad(b, (base,), b.dtype), d.indices,
                                 span=span))
    return _allocated(bufs, out, span)

WARP = 32
SHUFFLE_DOWN, SHUFFLE = "tvm_warp_shuffle_down", "tvm_warp_shuffle"
_SHUFFLED = {"float16", "float32", "float64", "int32", "uint32", "int64", "uint64"}


def _warp_fits(reducing, n, size, values) -> bool:
    """Whether the reducing threads are whole segments of warps: threadIdx.x alone, a power
    of two up to 32 of them (so each group is n consecutive lanes of one warp), whole warps
    in the block (every lane of the mask runs), and values __shfl_sync moves."""
    return len(reducing) == 1 and reducing[0].thread_tag == "threadIdx.x" and \
        E.is_const_int(reducing[0].min, 0) and n <= WARP and n & (n - 1) == 0 and \
        size % WARP == 0 and all(v.dtype in _SHUFFLED for v in values)


def _warp_allreduce(combine, identities, values, cond, dsts, n, span):
    """The reduction in registers: halving steps `v = combine(v, shuffle_down(v, s))` within
    each segment of n lanes, then every lane takes its segment's lane 0 (TVM's warp path)."""
    mask = E.IntImm("uint32", 0xFFFFFFFF)
    zero = (_int(0),)
    bufs = [scratch(f"red_val{i}", v.dtype, 1, "local") for i, v in enumerate(values)]
    out = _first(bufs, values, identities, cond, zero, span)

    def shuffle(op, b, at):
        return E.Call(b.dtype, op, (mask, E.BufferLoad(b, zero, b.dtype), _int(at), _int(n),
                                    _int(WARP)))
    s = n // 2
    while s >= 1:
        xs = [E.BufferLoad(b, zero, b.dtype) for b in bufs]
        others = [E.Var(f"{b.name}_other", b.dtype) for b in bufs]
        body = store_all(bufs, combine(xs, others), zero, span)
        for t, b in reversed(list(zip(others, bufs))):
            body = S.LetStmt(t, shuffle(SHUFFLE_DOWN, b, s), body)
        out.append(body)
        s //= 2
    for b, d in zip(bufs, dsts):
        out.append(S.BufferStore(d.buffer, shuffle(SHUFFLE, b, 0), d.indices, span=span))
    return _allocated(bufs, out, span)

def _reducer(node, at):
    """(combine, identities) of a `T.comm_reducer(lambda x..., y...: ..., [identities])`."""
    if not (isinstance(node, E.Call) and node.op == "comm_reducer" and len(node.args) == 2
            and isinstance(node.args[0], E.Lambda) and
            isinstance(node.args[1], E.ArrayExpr)):
        fail(UNSUPPORTED, "a reduce_scope whose node is not a T.comm_reducer(lambda ..., "
             "[identities]) is not generated", at)
    fn, ids = node.args
    ids = list(ids.elements)
    k = len(ids)
    body = fn.body if isinstance(fn.body, tuple) else (fn.body,)
    if len(fn.params) != 2 * k or len(body) != k:
        fail(UNSUPPORTED, f"a T.comm_reducer of {len(fn.params)} parameters, {len(body)} "
             f"results and {k} identities is not one reducer", at)

    def combine(xs, ys):
        vmap = {id(p): e for p, e in zip(fn.params, list(xs) + list(ys))}
        return [substitute(b, vmap) for b in body]
    return combine, ids


def _lower_one(attr, path):
    calls = find_all(attr.body, lambda x: isinstance(x.value, E.Call) and x.value.op == OP,
                     S.Evaluate)
    if not calls:          # TVM's lowered form keeps the attribute over what it made
        return attr.body
    if len(calls) != 1:
        fail(UNSUPPORTED, f"a reduce_scope holding {len(calls)} T.tvm_thread_allreduce calls "
             "is not generated", attr)
    ev = calls[0]
    args = ev.value.args
    combine, ids = _reducer(attr.node, ev)
    k = len(ids)
    if len(args) < 2 + 2 * k or not E.is_const_int(args[0], k):
        fail(UNSUPPORTED, f"T.tvm_thread_allreduce of {len(args)} arguments does not fit a "
             f"reducer of {k} value(s)", ev)
    values, cond, dsts = args[1:1 + k], args[1 + k], args[2 + k:2 + 2 * k]
    for d in dsts:
        if not isinstance(d, E.BufferLoad):
            fail(UNSUPPORTED, "T.tvm_thread_allreduce writing through a pointer (not "
                 "`buf[0]`) is not generated", ev)
    reduce_vars = args[2 + 2 * k:]
    if not all(isinstance(v, E.Var) for v in reduce_vars):
        fail(UNSUPPORTED, "T.tvm_thread_allreduce reduces over thread variables", ev)
    threads = kernel_threads(path + (attr,), ev)
    lowered = thread_allreduce(combine, ids, values, cond, dsts, reduce_vars, threads, ev)
    return rebuild(attr.body, lambda new, old: lowered if old is ev else None)


def lower_thread_allreduce(body):
    """Each `reduce_scope` attribute with its `T.tvm_thread_allreduce`, lowered (module doc);
    one holding none is TVM's output (the shuffles or tree it made), kept as it is."""
    found = statement_paths(body, lambda x: isinstance(x, S.AttrStmt) and
                            x.attr_key == "reduce_scope")
    done = {id(attr): _lower_one(attr, path) for attr, path in found}
    if done:
        body = rebuild(body, lambda new, old: done.get(id(old)))
    left = find_all(body, lambda x: x.op == OP, E.Call)
    if left:
        fail(UNSUPPORTED, "T.tvm_thread_allreduce outside a `T.attr(T.comm_reducer(...), "
             "\"reduce_scope\", ...)` is not generated", left[0])
    return body
