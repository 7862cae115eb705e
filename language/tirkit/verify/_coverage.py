"""Shared by dataflow/uncovered-read and thread/cooperative-coverage: for each read of an
allocated buffer, the writes before it and whether their bounding box covers the read."""
from __future__ import annotations

from ..analysis.regions import analyzer_for, index_range, single_trip
from ..arith import Analyzer
from ..arith.affine import Atom
from ..ir import expr as E
from ..ir.visit import walk
from ._common import func_accesses, is_thread, loose_vars, relax_thread

_SKIP_SCOPES = ("wmma.", "m16n8k8", "local.fragment", "warp")


def _box(fa, a, keep):
    env = dict(fa.env)
    env.update(fa.lets)
    an = analyzer_for(fa, a, keep, env=env)
    return [index_range(an, i, env) for i in a.indices]


def _merge(boxes):
    if not boxes:
        return None
    lo = [b[0] for b in boxes[0]]
    hi = [b[1] for b in boxes[0]]
    for box in boxes[1:]:
        for d, (l, h) in enumerate(box):
            for arr, new, lower in ((lo, l, True), (hi, h, False)):
                cur = arr[d]
                if cur is None or new is None:
                    arr[d] = None
                    continue
                diff = new - cur
                if not diff.is_const():
                    arr[d] = None
                elif (diff.const < 0) == lower and diff.const != 0:
                    arr[d] = new
    return list(zip(lo, hi))


def _understood(cond):
    if isinstance(cond, E.And):
        return _understood(cond.a) and _understood(cond.b)
    if isinstance(cond, E.Not):
        return type(cond.a) in (E.LT, E.LE, E.GT, E.GE)
    return type(cond) in (E.LT, E.LE, E.GT, E.GE, E.EQ)


def _exact(fa, a):
    """The access's box is exact: affine indices (floor division allowed; a modulo whose
    dividend steps by one over at least the modulus, so every residue is reached) and
    guards the analysis reads."""
    if not all(_understood(c) for c, _ in a.conds):
        return False
    an = Analyzer()
    loose = loose_vars(a.loops)
    for i in a.indices:
        x = an.to_aff(i.base if isinstance(i, E.Ramp) else i, fa.env)
        if loose & set(x.all_vars()):
            return False
        for k in x.terms:
            if not isinstance(k, Atom) or k.kind == "fdiv":
                continue
            if k.kind != "fmod" or a.conds or not _all_residues(a, k):
                return False
    return True


def _all_residues(a, k):
    """`x % c` takes every value in [0, c): x has a loop with coefficient +-1 and at least c
    iterations (the other terms held fixed)."""
    for lp in a.loops:
        if abs(k.args[0].terms.get(lp.var, 0)) == 1 and isinstance(lp.extent, E.IntImm) \
                and lp.extent.value >= k.c:
            return True
    return False




def _opaque_buffers(fa):
    used = set()
    for call, _, _ in fa.calls:
        def f(x):
            if isinstance(x, E.Var):
                used.add(x)
            return True
        walk(call.args, f)
    # a buffer matched into a block (`T.match_buffer(X[...])`) is accessed through the alias:
    # its accesses are the alias's, which the analysis does not map back onto X
    for r in fa.realizes:
        for m in r.block.match_buffers:
            used.add(m.source.buffer.data)
    return used


def once_key(a):
    """Uncovered reads of one buffer on one line are one finding."""
    return (a.buffer.name, a.span.line if a.span is not None else None)


def uncovered(func, ctx):
    """[(read Access, [producer Access], shared: bool, message)] of reads whose region the
    earlier writes do not certainly cover (cached per function)."""
    key = ("uncovered", id(func))
    if key in ctx.cache:
        return ctx.cache[key]
    if ctx.incomplete(func):
        return []
    fa = func_accesses(func, ctx)
    out = []
    opaque = _opaque_buffers(fa)
    for buf, owner in fa.allocs:
        if buf.scope.startswith(_SKIP_SCOPES) or buf.data in opaque:
            continue
        acc = [(i, a) for i, a in enumerate(fa.accesses) if a.buffer is buf]
        if not acc or any(a.opaque for _, a in acc):
            continue
        shared = buf.scope.startswith("shared")
        for i, a in acc:
            if a.is_write:
                continue
            blk = a.blocks[-1] if a.blocks else None
            prods = [p for j, p in acc if p.is_write and j < i]
            later = [p for j, p in acc if p.is_write and j > i]
            if any(p.blocks and p.blocks[-1] is blk for _, p in acc if p.is_write) \
                    and blk is not None and blk.block.iter_vars:
                # the block fills what it reads itself (reductions); without a T.init() and
                # with nothing written before it, its first instance reads garbage
                if not prods and blk.block.init is None and not a.conds and \
                        not a.speculative and not a.in_init:
                    out.append((a, [p for _, p in acc if p.is_write and p.blocks and
                                    p.blocks[-1] is blk][:1], shared,
                                f"reads `{buf.name}` before anything writes it: its first "
                                f"instance reads uninitialized memory (it updates "
                                f"`{buf.name}` without a T.init())"))
                continue
            if not prods:
                if not later:
                    out.append((a, [], shared, f"reads `{buf.name}`, which nothing "
                                f"writes"))
                continue
            if later or not _exact(fa, a):
                continue      # loop-carried, or regions the analysis cannot pin down
            keep = frozenset()
            in_kernel = shared and any(is_thread(lp) for lp in a.loops)
            if in_kernel:
                common = 0
                first = a.loops
                while common < len(first) and all(len(p.loops) > common and p.loops[common]
                                                  is first[common] for p in prods):
                    common += 1
                keep = frozenset(lp.var for lp in first[:common] if not relax_thread(lp)
                                 and not single_trip(lp))
            rbox = _box(fa, a, keep)
            wbox = _merge([_box(fa, p, keep) for p in prods])
            if wbox is None or len(wbox) != len(rbox):
                continue
            an = Analyzer()
            for lp in a.loops:
                if lp.var in keep:
                    an.bind_extent(lp.var, lp.min, lp.extent)
            for d, ((rlo, rhi), (wlo, whi)) in enumerate(zip(rbox, wbox)):
                if None in (rlo, rhi, wlo, whi):
                    continue
                if an.can_be_neg(rlo - wlo) or an.can_be_pos(rhi - whi):
                    out.append((a, prods, shared and in_kernel,
                                f"reads `{buf.name}` over [{rlo!r}, {rhi!r}] in dimension {d}"
                                f", but the writes before it cover only [{wlo!r}, {whi!r}]"))
                    break
    ctx.cache[key] = out
    return out
