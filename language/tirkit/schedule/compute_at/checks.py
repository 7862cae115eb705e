"""The checks of compute_at and reverse_compute_at on the blocks around the move: none of the
blocks the move carries the block past may depend on it the other way; the consumer that
reverse_compute_at moves must read only what its producers write, overall and within the
same iteration of the loop."""
from __future__ import annotations

from ...ir import expr as E
from ...ir import stmt as S
from ...analysis.regions import regions_of
from .. import _common as common
from . import bounds as nest_bounds
from .. import _ir
from ..analysis import read_buffers, scope_blocks, write_buffers


def is_under(info, loop):
    return any(a is loop for a in info.ancestors)


def check_passed(sch, func, info, kids, pos, f, reverse, what):
    """The blocks the move carries the block past must not depend on it the other way:
    moving later, none of them may write what it reads; moving earlier, none may read what
    it writes."""
    order = scope_blocks(sch, func, info.scope)
    ib = next(k for k, o in enumerate(order) if o.block is info.block)
    under = [k for k, o in enumerate(order) if is_under(o, f)]
    after = [k for k, o in enumerate(order) if any(contains(s, o.realize) for s in kids[pos:])]
    j = min(after) if after else (max(under) + 1 if under else ib)
    passed = order[ib + 1:j] if j > ib else order[j:ib]
    mine = write_buffers(info.block) if reverse else read_buffers(info.block)
    for o in passed:
        theirs = read_buffers(o.block) if reverse else write_buffers(o.block)
        if any(a is b for a in mine for b in theirs):
            raise sch.error(f"{what}/dependency-order", f"block '{o.block.name_hint}' would "
                            f"run on the wrong side of block '{info.block.name_hint}'",
                            o.block, [(info.block, "block")])


def contains(s, node):
    return s is node or any(x is node for x in _ir.stmts(s))


def _tight(a, b, pick):
    """The bound of a and b that `pick` prefers (a when b is None or they do not compare)."""
    r = None if b is None else nest_bounds.hull(a, b, pick)
    return a if r is None else r


def _whole(infos, buf, writes):
    """[(lo, hi)] per dimension: the hull of what the blocks `infos` write (or read) of
    `buf` over all their loops in the scope; None when it cannot be described."""
    out = None
    for d in infos:
        r, w = regions_of(d.block)
        ivmap = {id(iv.var): v for iv, v in zip(d.block.iter_vars, d.realize.iter_values)}
        k = max((i for i, a in enumerate(d.ancestors) if isinstance(a, S.Block)), default=-1)
        loops = [a for a in d.ancestors[k + 1:] if isinstance(a, S.For)]
        cb = common.loop_bounds(loops)
        sym = {id(a.loop_var): a for a in loops if id(a.loop_var) not in cb}
        ivb = {}
        own = {id(iv.var) for iv in d.block.iter_vars}
        for iv in d.block.iter_vars:
            if isinstance(iv.dom.min, E.IntImm) and isinstance(iv.dom.extent, E.IntImm):
                ivb[id(iv.var)] = (iv.dom.min.value, iv.dom.min.value + iv.dom.extent.value - 1)
        for reg in (w if writes else r):
            if reg.buffer is not buf:
                continue
            dims = []
            for x in reg.region:
                top = E.Sub(E.Add(x.min, x.extent, x.min.dtype), E.IntImm(x.min.dtype, 1),
                            x.min.dtype)
                a = nest_bounds.relax(_ir.substitute(x.min, ivmap), cb, sym)
                b = nest_bounds.relax(_ir.substitute(top, ivmap), cb, sym)
                # the iterators' domains bound it too (a predicate keeps them inside)
                a2, b2 = nest_bounds.relax(x.min, ivb, {}), nest_bounds.relax(top, ivb, {})
                if a2 is not None and b2 is not None and not any(
                        id(v) in own
                        for v in nest_bounds.lin_vars(a2[0]) + nest_bounds.lin_vars(b2[1])):
                    a = (None, None) if a is None else a
                    b = (None, None) if b is None else b
                    a = (_tight(a2[0], a[0], max), None)
                    b = (None, _tight(b2[1], b[1], min))
                if a is None or b is None or a[0] is None or b[1] is None:
                    return None
                dims.append((a[0], b[1]))
            if out is None:
                out = dims
                continue
            out = nest_bounds.hull_box(out, dims)
            if out is None:
                return None
    return out


def check_cover(sch, info, deps, what):
    """Every instance of the moved consumer must still run: what it reads of each buffer
    must lie inside what its producers write of it (the region cover TVM requires)."""
    blk = info.block
    for buf in read_buffers(blk):
        ws = [d for d in deps if any(b is buf for b in write_buffers(d.block))]
        if not ws:
            continue
        need, have = _whole([info], buf, False), _whole(ws, buf, True)
        ok = need is not None and have is not None
        for (lo, hi), (wlo, whi) in zip(need or (), have or ()):
            a, b = nest_bounds.lower(lo.add(wlo, -1), {}), nest_bounds.lower(whi.add(hi, -1), {})
            ok = ok and a is not None and a >= 0 and b is not None and b >= 0
        if not ok:
            raise sch.error(f"{what}/not-covered", f"block '{blk.name_hint}' reads parts of "
                            f"'{buf.name}' that its producers do not write", blk)


def check_reads(sch, blk, realize, loops, reqs, f, what, outer):
    """The moved consumer may read only what the producers under the loop have written in
    the same iteration: its read regions, over the new bindings and loops, must lie inside
    the region they write."""
    own_r, _ = regions_of(blk)
    ivmap = {id(iv.var): v for iv, v in zip(blk.iter_vars, realize.iter_values)}
    cb = common.loop_bounds(loops)
    sym = {id(a.loop_var): a for a in loops if id(a.loop_var) not in cb}
    for reg in own_r:
        req = reqs.get(id(reg.buffer))
        if req is None:
            continue
        for dim, (x, (lo, hi)) in enumerate(zip(reg.region, req)):
            a = nest_bounds.relax(_ir.substitute(x.min, ivmap), cb, sym)
            top = E.Sub(E.Add(x.min, x.extent, x.min.dtype), E.IntImm(x.min.dtype, 1),
                        x.min.dtype)
            b = nest_bounds.relax(_ir.substitute(top, ivmap), cb, sym)
            ok = a is not None and b is not None
            if ok:
                l1 = nest_bounds.lower(a[0].add(lo, -1), outer)
                h1 = nest_bounds.lower(hi.add(b[1], -1), outer)
                ok = l1 is not None and l1 >= 0 and h1 is not None and h1 >= 0
            if not ok:
                raise sch.error(f"{what}/region", f"block '{blk.name_hint}' would read "
                                f"dimension {dim} of '{reg.buffer.name}' beyond what the "
                                f"blocks under loop '{f.loop_var.name}' have written", blk,
                                [(f, "loop")])
