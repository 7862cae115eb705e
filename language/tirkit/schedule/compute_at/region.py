"""The region that compute_at and reverse_compute_at make the moved block cover: the hull of
what the blocks under the loop read (or write) of each buffer the block exchanges with them,
solved into a range of each of the block's iterators that pins down."""
from __future__ import annotations

from ...ir import expr as E
from ...ir import stmt as S
from ...arith import writeback as A
from ...analysis.regions import regions_of
from ...arith.affine import Aff
from .. import _common as common
from . import bounds as nest_bounds
from .. import _ir
from ..analysis import read_buffers, write_buffers


def needed_region(sch, blk, deps, f, reverse, what, reqs, outer):
    """{id(iterator) -> (min expr, extent)} for the block's iterators that the region the
    blocks under the loop exchange with it pins down; the extent is an int, or an expression
    over shape symbols. Solved one buffer dimension at a time from how the block itself
    accesses the buffer (an iterator, an iterator times a constant, an iterator divided by a
    constant, a constant); an iterator taken modulo a constant is left free."""
    bufs = read_buffers(blk) if reverse else write_buffers(blk)
    own_r, own_w = regions_of(blk)
    own = own_r if reverse else own_w
    ivs = {id(iv.var): iv for iv in blk.iter_vars}
    result = {}
    wide = set()        # int64 iterators solved from an int32 range
    for buf in bufs:
        mine = [r for r in own if r.buffer is buf]
        if not mine:
            continue
        req = _required(sch, blk, buf, deps, f, reverse, what, outer)
        if req is None:
            continue
        # loops of extent one around the new nest are their value (as TVM's analyzer sees)
        units = {k: lo for k, (lo, hi) in outer.items() if lo == hi}
        req = [(_fold_units(a, units), _fold_units(b, units)) for a, b in req]
        reqs[id(buf)] = req
        pairs = _solve_split(mine[0].region, req, ivs)
        for dim, (x, (lo, hi)) in enumerate(zip(mine[0].region, req)):
            solved = pairs[dim] if dim in pairs else _solve_dim(x, lo, hi, ivs)
            fused = _solve_fused(x, lo, hi, ivs) if solved is None else None
            if fused is not None:
                for var, vlo, vhi in fused:
                    if id(var) in result:
                        raise sch.error(f"{what}/region", f"block '{blk.name_hint}' would "
                                        f"need two ranges for iterator '{var.name}'", blk)
                    result[id(var)] = (vlo, vhi)
                continue
            if solved is None and lo.is_const() and hi.is_const() and lo.const == 0 and \
                    isinstance(buf.shape[dim], E.IntImm) and hi.const == buf.shape[dim].value - 1:
                solved = "free"         # all of the dimension is needed: no constraint
            if solved is None:
                raise sch.error(f"{what}/not-iterator-indexed", f"block '{blk.name_hint}' "
                                f"accesses dimension {dim} of '{buf.name}' in a way whose "
                                "iterator range cannot be solved", blk)
            if solved == "const":
                if not (A.to_form(x.min, {}).key() == lo.key() == hi.key()):
                    raise sch.error(f"{what}/region", f"block '{blk.name_hint}' provides one "
                                    f"point of dimension {dim} of '{buf.name}', but more is "
                                    "needed", blk)
                continue
            if solved == "free":
                continue
            var, vlo, vhi = solved
            prev = result.get(id(var))
            if prev is not None:
                vlo, vhi = nest_bounds.hull(prev[0], vlo, min), nest_bounds.hull(prev[1], vhi, max)
                if vlo is None or vhi is None:
                    raise sch.error(f"{what}/region", f"block '{blk.name_hint}' would need "
                                    f"two different ranges for iterator '{var.name}'", blk)
            result[id(var)] = (vlo, vhi)
            if var.dtype == "int64" and vlo.dtype == "int32":
                wide.add(id(var))
    if not result and not any(r.buffer is b for b in bufs for r in own):
        raise sch.error(f"{what}/region", f"no buffer links block '{blk.name_hint}' to the "
                        f"blocks under loop '{f.loop_var.name}'", blk)
    out = {}
    for k, (lo, hi) in result.items():
        ext = hi.add(lo, -1) + 1
        mn = A.to_expr(lo)
        if k in wide:
            # widened to the iterator's type (as TVM)
            mn = E.IntImm("int64", mn.value) if isinstance(mn, E.IntImm) else \
                E.Cast("int64", mn)
        out[k] = (mn, ext.const if ext.is_const() else A.to_expr(ext))
    return out


def _fold_units(lin, units):
    out = A.const_form(lin.const, lin.dtype)
    for atom, coef in lin.terms.items():
        if A.is_var(atom) and id(atom) in units:
            out = out + coef * units[id(atom)]
        else:
            out = out + Aff.of(atom, coef)
    return out


def _solve_dim(x, lo, hi, ivs):
    """How one dimension of the block's own access `x` (a Range) pins an iterator, given the
    needed range [lo, hi] (linear forms): (var, lo, hi), "const", "free" or None."""
    m = x.min
    unit = isinstance(x.extent, E.IntImm) and x.extent.value == 1
    if isinstance(m, E.IntImm):
        return "const" if unit else None
    if isinstance(m, E.Var) and id(m) in ivs:
        return m, lo, hi
    lin = A.to_form(m, {})
    first = next(iter(lin.terms.items()), (None, 0))
    if unit and len(lin.terms) == 1 and A.is_var(first[0]) and \
            id(first[0]) in ivs and abs(first[1]) == 1:
        # `v + k` or `k - v`: one point per iterator value, inverted
        v, k = first[0], A.const_form(lin.const, lin.dtype)
        if first[1] == 1:
            return v, lo.add(k, -1), hi.add(k, -1)
        return v, k.add(hi, -1), k.add(lo, -1)
    if isinstance(m, E.Mul):
        v, c = (m.a, m.b) if isinstance(m.b, E.IntImm) else (m.b, m.a)
        if isinstance(v, E.Var) and id(v) in ivs and isinstance(c, E.IntImm) and c.value > 0:
            return v, _div_lin(lo, c.value), _div_lin(hi, c.value)
        return None
    if unit and isinstance(m, E.FloorDiv) and isinstance(m.a, E.Var) and id(m.a) in ivs \
            and isinstance(m.b, E.IntImm) and m.b.value > 0:
        c = m.b.value
        h = hi.scale(c) + (c - 1)
        return m.a, lo.scale(c), h
    if unit and isinstance(m, E.FloorMod) and isinstance(m.a, E.Var) and id(m.a) in ivs:
        return "free"
    return None


def _solve_fused(x, lo, hi, ivs):
    """A dimension indexed by iterators fused in mixed radix (`vi * 16 + vj` with vj over
    16), where one point is needed: each iterator is pinned to its digit of that point.
    [(var, lo, hi)] or None."""
    if not (isinstance(x.extent, E.IntImm) and x.extent.value == 1) or lo.key() != hi.key():
        return None
    lin = A.to_form(x.min, {})
    terms = sorted(lin.terms.items(), key=lambda t: -t[1])
    if len(terms) < 2 or any(not A.is_var(a) or id(a) not in ivs or c <= 0
                             for a, c in terms):
        return None
    exts = []
    for a, _ in terms:
        dom = ivs[id(a)].dom
        if not (isinstance(dom.min, E.IntImm) and dom.min.value == 0 and
                isinstance(dom.extent, E.IntImm)):
            return None
        exts.append(dom.extent.value)
    if terms[-1][1] != 1 or any(terms[k][1] != terms[k + 1][1] * exts[k + 1]
                                for k in range(len(terms) - 1)):
        return None
    point = A.to_expr(lo - lin.const)
    dt = point.dtype
    out = []
    for k, ((a, c), ext) in enumerate(zip(terms, exts)):
        e = point if c == 1 else E.FloorDiv(point, E.IntImm(dt, c), dt)
        if k > 0:
            e = E.FloorMod(e, E.IntImm(dt, ext), dt)
        v = A.to_form(e, {})
        out.append((a, v, v))
    return out


def _solve_split(region, req, ivs):
    """Dimensions indexed `v // c` and `v % c` (v an iterator whose domain c divides) pin v
    together: from the needed corners (a, b) and (a', b'), v runs over [a*c + b, a'*c + b'].
    {dim: (var, lo, hi) or "free"}."""
    div, mod = {}, {}
    for dim, x in enumerate(region):
        m = x.min
        if not (isinstance(x.extent, E.IntImm) and x.extent.value == 1):
            return {}
        if isinstance(m, (E.FloorDiv, E.FloorMod)) and isinstance(m.a, E.Var) and \
                id(m.a) in ivs and isinstance(m.b, E.IntImm) and m.b.value > 0:
            (div if isinstance(m, E.FloorDiv) else mod).setdefault(
                (id(m.a), m.b.value), []).append(dim)
    out = {}
    for key, dd in div.items():
        md = mod.get(key)
        if len(dd) != 1 or not md or len(md) != 1:
            continue
        (d,), (r,), c = dd, md, key[1]
        iv = ivs[key[0]]
        if not (isinstance(iv.dom.extent, E.IntImm) and iv.dom.extent.value % c == 0):
            continue
        (qa, qb), (ra, rb) = req[d], req[r]
        out[d] = (iv.var, qa.scale(c).add(ra), qb.scale(c).add(rb))
        out[r] = "free"
    return out


def _div_lin(lin, c):
    return A.to_form(E.FloorDiv(A.to_expr(lin), E.IntImm(lin.dtype, c), lin.dtype), {})


def _required(sch, blk, buf, deps, f, reverse, what, outer):
    """[(lo, hi)] per dimension of `buf`: the hull of what the blocks under `f` read (or, in
    reverse, write) of it, their loops under `f` relaxed over their ranges (a loop of symbolic
    extent too), as linear forms over the loops at and above `f` and shape symbols."""
    out = None
    for d in deps:
        r, w = regions_of(d.block)
        ivmap = {id(iv.var): v for iv, v in zip(d.block.iter_vars, d.realize.iter_values)}
        inner = [a for a in d.ancestors if isinstance(a, S.For)]
        k = next(i for i, a in enumerate(inner) if a is f)
        # the loops under `f`, and (as TVM) the thread loops at and above it whose threads
        # share the buffer's storage, unless it is global: a shared tile is filled for all
        # the threads of a block
        loops = inner[k + 1:]
        if buf.scope.split(".")[0] != "global":
            loops = loops + [a for a in inner[:k + 1] if common.shared_by_threads(a, buf.scope)]
        cb = common.loop_bounds(loops)
        sym = {id(a.loop_var): a for a in loops if id(a.loop_var) not in cb}
        for reg in (w if reverse else r):
            if reg.buffer is not buf:
                continue
            lo = [_ir.substitute(x.min, ivmap) for x in reg.region]
            hi = [_ir.substitute(E.Sub(E.Add(x.min, x.extent, x.min.dtype),
                                       E.IntImm(x.min.dtype, 1), x.min.dtype), ivmap)
                  for x in reg.region]
            dims = []
            for a, b in zip(lo, hi):
                ra, rb = nest_bounds.relax(a, cb, sym, outer), nest_bounds.relax(b, cb, sym, outer)
                if ra is None or rb is None:
                    raise sch.error(f"{what}/region", f"the region of '{buf.name}' that block "
                                    f"'{blk.name_hint}' must cover is not a box",
                                    blk, [(f, "loop")])
                dims.append((ra[0], rb[1]))
            if out is None:
                out = dims
                continue
            merged = nest_bounds.hull_box(out, dims)
            if merged is None:
                raise sch.error(f"{what}/region", f"the region of '{buf.name}' that block "
                                f"'{blk.name_hint}' must cover is not a box of known size",
                                blk, [(f, "loop")])
            out = merged
    return out
