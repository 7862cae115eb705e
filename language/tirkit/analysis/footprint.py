"""The box a buffer is allocated with after region compaction: one definition, used by the
code generator's compaction passes (which allocate it, on the CPU and for GPU shared and local
memory) and by the shared-memory rule (which sizes what will be allocated).

    access_box(accs, ndim, analyzer_of)   per dimension (lo, hi) Aff covering every access
    compacted_extent(lo, hi, size)        the extent a dimension is allocated with, or None
    compact_box(stmt, buffer, ranges)     (lo, extent) per dimension of a buffer allocated
                                          around `stmt` (the code generator's question)
    footprint(fa, buffer, relax_loop)     extents per dimension of a block-allocated buffer
                                          (the shared-memory rule's question)
    per_iteration(writes_first, ...)      whether the allocation goes inside a serial loop
                                          (both users' placement decision), with
                                          written_first(stmt, buf, var) and loop_ranges(stmt)
                                          over statements for the code generator
    keeps_layout(buffer), pointer_passed  buffers that keep their declared shape

Each access is relaxed by the Analyzer over the loops below the allocation (their extents
may depend on outer loops: `range(rh % 2 * 96 + 96)`), under its guards (`T.where`
predicates, `if` statements and `T.if_then_else` branches: lowering runs the access only
where they hold).  A guard of `T.Select` is not used: both operands are evaluated.  The
low corner is an affine form of what stays fixed (outer loops, symbols), the same up to a
constant in every access, so the box is a window of constant size that moves with it.
Structurally equal opaque terms (a load such as `A_indptr[i]`) count as one symbol.

Where the box is taken is the same for both users, as TVM allocates a block's buffer: at
the lowest common ancestor of its accesses.  Loops above it stay fixed (the buffer lives per
iteration), except the threadIdx/vthread loops a shared buffer spans; loops below it are
relaxed.  The GPU lowering (codegen/cuda/scopes.py) enters a serial loop when its iterations
touch separate parts of the buffer or when each iteration writes the buffer before reading
it (the producer-consumer pattern of a cache read); so it allocates what `footprint`
counts (benchmarks/footprint_agreement.py compares the two over the corpus).  A buffer with
an explicit layout (strides, offset) or whose address is passed to a call keeps its shape.
"""
from __future__ import annotations

from ..arith.affine import Aff, Atom
from ..arith.interval import Analyzer
from ..ir import expr as E
from ..arith.linear import separates
from ..ir import stmt as S
from ..ir.hash import structural_key
from ..ir.visit import find_first, substitute, uses_var, vars_in, walk

_UNKNOWN = object()


def access_box(accs, ndim, analyzer_of, seen=None):
    """[(lo, hi) Aff or None] per dimension covering every access of `accs` (analysis.regions
    Access records), each relaxed by `analyzer_of(access)` -> (Analyzer, env); None where a
    bound is unknown or the accesses' bounds differ by more than a constant."""
    from .regions import index_range
    los = [None] * ndim
    his = [None] * ndim
    seen = {} if seen is None else seen
    for n, a in enumerate(accs):
        an, env = analyzer_of(a)
        for d, idx in enumerate(a.indices[:ndim]):
            lo, hi = (canonical(x, seen) for x in index_range(an, idx, env))
            los[d] = _merge(los[d], lo, True, n == 0)
            his[d] = _merge(his[d], hi, False, n == 0)
    return [None if lo in (None, _UNKNOWN) or hi in (None, _UNKNOWN) else (lo, hi)
            for lo, hi in zip(los, his)]


def canonical(x, seen):
    """x with every opaque term (a load, a call) replaced by the first structurally equal one
    in `seen` ({structural key: Atom}), so that `A_indptr[i]` read in two places is one
    symbol."""
    if x is None:
        return None
    terms = {}
    for k, c in x.terms.items():
        if isinstance(k, Atom):
            if k.kind == "opaque":
                k = seen.setdefault(structural_key(k.expr), k)
            elif k.args:
                k = Atom(k.kind, [canonical(y, seen) for y in k.args], k.c, k.expr)
        terms[k] = terms.get(k, 0) + c
    return Aff({k: c for k, c in terms.items() if c}, x.const, x.dtype)


def compacted_extent(lo, hi, size):
    """The extent a dimension of `size` elements (None: not a constant) is allocated with:
    that of [lo, hi] when it is a constant smaller than the size; else None (the dimension
    keeps its size).  An access provably below zero (no fixed part) keeps the size too."""
    ext = hi - lo + 1
    if not ext.is_const() or ext.const <= 0 or size is not None and ext.const >= size:
        return None
    if lo.is_const() and lo.const < 0:
        return None
    return ext.const


def compact_box(stmt, buffer, ranges=None, seen=None):
    """[(lo Aff, extent int) or None] per dimension of `buffer` allocated around `stmt`:
    every loop inside `stmt` relaxed, and the variables of `ranges` ({id(var): (lo, hi)},
    e.g. thread indices bound outside it) too; None where a dimension keeps its size.
    `seen` (a dict, filled) maps the opaque terms of the corners to their representatives
    (see `canonical`)."""
    from .regions import stmt_accesses
    fa = stmt_accesses(stmt)
    acc = [a for a in fa.accesses if a.buffer is buffer]
    if not acc or any(a.opaque for a in acc):
        return [None] * buffer.ndim
    outer = _outer_vars(acc, ranges or {})

    def analyzer_of(a):
        an = Analyzer()
        for v, (lo, hi) in outer.items():
            an.bind(v, lo, hi)
        for lp in a.loops:
            an.bind_extent(lp.var, lp.min, lp.extent, fa.lets)
        if not a.speculative:
            for cond, _ in a.conds:
                an.assume(cond, fa.lets)
        return an, fa.lets
    out = []
    for b, size in zip(access_box(acc, buffer.ndim, analyzer_of, seen), buffer.shape):
        ext = None
        if b is not None:
            ext = compacted_extent(b[0], b[1], size.value if isinstance(size, E.IntImm)
                                   else None)
        out.append(None if ext is None else (b[0], ext))
    return out


def keeps_layout(buffer) -> bool:
    """A buffer with an explicit layout (strides, an element offset, axis separators) is
    allocated as declared: compaction would change what the layout means."""
    return bool(buffer.strides) or buffer.elem_offset is not None or \
        bool(buffer.axis_separators)


def pointer_passed(call, data) -> bool:
    """Is the buffer whose data Var is `data` an argument of `call` by its address (a PTX or
    WMMA intrinsic, `T.tvm_access_ptr`)?  The call's offsets index the buffer as declared,
    so it keeps its shape.  A `T.match_buffer` view passed by address does not: the view's
    offset is bound to its region of the compacted buffer, as TVM binds it."""
    return any(a is data for a in call.args)


def _outer_vars(acc, ranges):
    """{Var: (lo, hi)} of the variables the accesses use whose ids `ranges` relaxes."""
    from ..ir.visit import vars_in
    if not ranges:
        return {}
    out = {}
    for a in acc:
        for v in vars_in(a.indices) + [v for c, _ in a.conds for v in vars_in(c)]:
            if id(v) in ranges:
                out[v] = ranges[id(v)]
    return out


def footprint(fa, buffer, relax_loop):
    """Extents per dimension of `buffer` after compaction in a function's accesses `fa`
    (analysis.regions): accesses relaxed over every loop below their common ancestor and
    over the loops `relax_loop(Loop)` says, under their guards; the allocated shape where an
    extent is not a constant."""
    from .regions import analyzer_for, single_trip
    acc = [a for a in fa.accesses + fa.matched if a.buffer is buffer]
    shape = [s.value if isinstance(s, E.IntImm) else None for s in buffer.shape]
    if not acc or any(a.opaque for a in acc) or keeps_layout(buffer) or \
            any(pointer_passed(c, buffer.data) for c, _, _ in fa.calls):
        return shape
    common = 0
    first = acc[0].loops
    while common < len(first) and all(len(a.loops) > common and a.loops[common] is
                                      first[common] for a in acc):
        common += 1
    env = dict(fa.env)
    env.update(fa.lets)
    owner = [r for b, r in fa.allocs if b is buffer]
    start = len(fa.loops_of[id(owner[0])]) if owner else 0
    for n in range(start, common):          # where lowering places the allocation
        lp = first[n]
        if lp.kind == "thread_binding" or single_trip(lp):
            continue
        if lp.kind not in ("serial", "unrolled") or \
                not _per_iteration_of(fa, [a for a in fa.accesses if a.buffer is buffer],
                                      first, n, relax_loop):
            common = n
            break
    keep = frozenset(lp.var for lp in first[:common]
                     if not relax_loop(lp) and not single_trip(lp))

    def analyzer_of(a):
        return analyzer_for(fa, a, keep, env=env, guards=not a.speculative), env
    out = []
    for b, s in zip(access_box(acc, len(shape), analyzer_of), shape):
        ext = None if b is None else b[1] - b[0] + 1
        if ext is not None and ext.is_const() and ext.const > 0:
            out.append(ext.const if s is None else min(ext.const, s))
        else:
            out.append(s)
    return out


def _merge(cur, new, lower, first):
    if first:
        return new if new is not None else _UNKNOWN
    if cur is _UNKNOWN or new is None or cur is None:
        return _UNKNOWN
    d = new - cur
    if not d.is_const():
        return _UNKNOWN
    if lower:
        return new if d.const < 0 else cur
    return new if d.const > 0 else cur


# ---- where an allocation lives: per iteration of a serial loop, or around it ---------------
def per_iteration(writes_first, indices, var, ranges, domain=None) -> bool:
    """May a buffer live per iteration of a serial loop over `var` (the allocation inside the
    loop, its box taken with `var` fixed)?  Yes when each iteration writes the buffer before
    it reads it (`writes_first`: the producer-consumer pattern of a cache read, whose
    coverage the cooperative-coverage and region rules check), or when distinct iterations
    touch distinct elements (`indices`: the index tuples in loop variables, None when
    unknown; `ranges`: {id(var): (lo, hi)} of the variables that vary within an iteration).
    TVM allocates at the lowest common ancestor of the accesses without the check; an
    iteration that reads what an earlier one wrote (an accumulator whose window moves)
    needs the buffer around the loop.  `domain`, the loop's (lo, hi) when constant, lets
    a fused loop's parts (`f // 16`, `f % 16`) separate its iterations.  Shared by the GPU
    lowering (codegen/cuda/scopes.py, over statements) and `footprint` (over a function's
    access records)."""
    if writes_first:
        return True
    if not indices:
        return False
    if any(isinstance(i, E.Ramp) for ix in indices for i in ix):
        indices, ranges = lanes_as_ranges(indices, ranges)
    return separates(indices, var, ranges, domain)


def lanes_as_ranges(indices, ranges):
    """(index tuples, ranges) with each vector index `Ramp(base, stride, n)` written as
    `base + stride * t` over a variable `t` of its own, ranging over [0, n - 1]: the
    elements the vector touches, for `separates`."""
    ranges = dict(ranges or {})
    out = []
    for ix in indices:
        row = []
        for i in ix:
            if isinstance(i, E.Ramp):
                dt = i.base.dtype
                lane = E.Var("lane", dt)
                ranges[id(lane)] = (0, i.lanes - 1)
                i = E.Add(i.base, E.Mul(i.stride, lane, dt), dt)
            row.append(i)
        out.append(tuple(row))
    return out, ranges


def loop_domain(loop: S.For):
    """(first, last) value of `loop`'s variable when its range is constant, else None."""
    if isinstance(loop.min, E.IntImm) and isinstance(loop.extent, E.IntImm):
        return loop.min.value, loop.min.value + loop.extent.value - 1
    return None


def loop_ranges(stmt, out=None):
    """{id(var): (lo, hi)} of every loop under `stmt` with a constant range (added to
    `out` when given): the variables that vary within one iteration of a loop around it."""
    out = {} if out is None else out

    def fn(x):
        if isinstance(x, S.For):
            dom = loop_domain(x)
            if dom is not None:
                out[id(x.loop_var)] = dom
    walk(stmt, fn)
    return out


def written_first(stmt, buf, var) -> bool:
    """Is the first access of `buf` under `stmt`, in program order, a store whose value and
    indices do not read it, under no condition on `var` (a reduction's init runs in the
    first iteration only)?"""
    first = []

    def reads(x):
        return find_first(x, lambda y: isinstance(y, E.BufferLoad) and
                          y.buffer.data is buf.data or y is buf.data) is not None

    def fn(x):
        if first:
            return False
        if isinstance(x, S.IfThenElse) and uses_var(x.condition, var):
            if reads(x) or find_first(x, lambda y: isinstance(y, S.BufferStore) and
                                      y.buffer.data is buf.data) is not None:
                first.append("conditional")
            return False
        if isinstance(x, S.BufferStore):
            if reads((x.value, x.indices)):
                first.append("read")
            elif x.buffer.data is buf.data:
                first.append("write")
            return False
        if isinstance(x, E.BufferLoad) and x.buffer.data is buf.data or x is buf.data:
            first.append("read")
            return False
        return not isinstance(x, S.Buffer)
    walk(stmt, fn)
    return first == ["write"]


def _per_iteration_of(fa, acc, loops, n, relax_loop) -> bool:
    """`per_iteration` for the loop `loops[n]` above every access of `acc` (a function's
    access records of one buffer, in program order)."""
    var = loops[n].var
    resolve = _resolver(fa)
    a0 = acc[0] if acc else None
    writes_first = a0 is not None and a0.is_write and not a0.opaque and \
        not any(uses_var(resolve(c), var) for c, _ in a0.conds)
    if writes_first and a0.in_init and a0.blocks:
        r = a0.blocks[-1]
        writes_first = not any(iv.kind == "R" and uses_var(resolve(v), var)
                               for iv, v in zip(r.block.iter_vars, r.iter_values))
    ranges = {}
    fixed = {id(lp) for lp in loops[:n + 1]}
    for a in acc:
        for lp in a.loops:
            if (id(lp) not in fixed or relax_loop(lp)) and \
                    isinstance(lp.min, E.IntImm) and isinstance(lp.extent, E.IntImm):
                ranges[id(lp.var)] = (lp.min.value, lp.min.value + lp.extent.value - 1)
    indices = None if any(a.opaque for a in acc) else \
        [tuple(resolve(i) for i in a.indices) for a in acc]
    return per_iteration(writes_first, indices, var, ranges)


def _resolver(fa):
    """expr -> expr with block iterators (and lets) replaced by what they are bound to."""
    vmap = {id(v): x for v, x in list(fa.env.items()) + list(fa.lets.items())}

    def resolve(x):
        for _ in range(8):
            if not any(id(v) in vmap for v in vars_in(x)):
                return x
            x = substitute(x, vmap)
        return x
    return resolve

