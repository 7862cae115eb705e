"""What compute_at and reverse_compute_at share: the checks on where the block may go, the
region of the buffer it exchanges with the blocks under the loop, and the new loop nest."""
from __future__ import annotations

import dataclasses

from ..ir import expr as E
from ..ir import stmt as S
from . import _arith as A
from . import _common as C
from . import _inline as I
from . import _ir
from .analysis import (consumers, infer_regions, output_buffers, producers, read_buffers,
                       scope_blocks, write_buffers)


def _regions(block):
    r, w = block.reads, block.writes
    if r is None or w is None:
        r2, w2 = infer_regions(block)
        r = r if r is not None else r2
        w = w if w is not None else w2
    return r, w


def _under(info, loop):
    return any(a is loop for a in info.ancestors)


def move(sch, block, loop, preserve_unit_loops, index, reverse):
    what = "reverse_compute_at" if reverse else "compute_at"
    info = sch.block_info(block)
    blk = info.block
    f, f_anc = sch.loop_info(loop)
    func = sch.func(block.func)
    scope = I.scope_of(sch, block.func, info)
    if any(a is f for a in info.ancestors):
        raise sch.error(f"{what}/loop-is-ancestor", f"loop '{f.loop_var.name}' is an ancestor "
                        f"of block '{blk.name_hint}'", f, [(blk, "block")])
    f_scope = next((a for a in reversed(f_anc) if isinstance(a, S.Block)), None)
    if f_scope is not scope:
        raise sch.error(f"{what}/different-scope", f"loop '{f.loop_var.name}' is not in the "
                        f"scope of block '{blk.name_hint}'", f, [(blk, "block")])
    if not reverse and any(b is o for o in output_buffers(func) for b in write_buffers(blk)):
        raise sch.error("compute_at/output-block", f"block '{blk.name_hint}' writes an output "
                        "of the function", blk)
    # the block must be the only writer of what it writes in its scope (as TVM requires of
    # a complete or reduction block): moving it past another writer reorders the writes
    mine = write_buffers(blk)
    for other in scope_blocks(sch, block.func, info.scope):
        if other.block is not blk and any(b is w for b in mine
                                          for w in write_buffers(other.block)):
            raise sch.error(f"{what}/several-writers", f"block '{other.block.name_hint}' also "
                            f"writes a buffer that block '{blk.name_hint}' writes",
                            other.block, [(blk, "block")])
    deps = producers(sch, block.func, info) if reverse else consumers(sch, block.func, info)
    role = "producer" if reverse else "consumer"
    if not deps:
        raise sch.error(f"{what}/no-{role}s", f"block '{blk.name_hint}' has no {role}s", blk)
    for d in deps:
        if not _under(d, f):
            raise sch.error(f"{what}/{role}s-not-under-loop",
                            f"the {role} '{d.block.name_hint}' of block '{blk.name_hint}' is "
                            f"not under loop '{f.loop_var.name}'", d.block,
                            [(f, "loop"), (blk, "block")])
    # where in the loop body: after the last producer, before the first consumer; by
    # default (index -1) as late as that allows, index -2 as early (as TVM)
    kids = _ir.child_stmts(f)
    others = consumers(sch, block.func, info) if reverse else producers(sch, block.func, info)
    cons, prods = (others, deps) if reverse else (deps, others)
    first_cons = next((k for k, s in enumerate(kids) if any(_contains(s, d.realize)
                                                            for d in cons)), len(kids))
    last_prod = max((k for k, s in enumerate(kids) if any(_contains(s, d.realize)
                                                          for d in prods)), default=-1)
    if last_prod >= first_cons:
        d = next(d for d in (others if reverse else prods)
                 if _contains(kids[last_prod if not reverse else first_cons], d.realize))
        raise sch.error(f"{what}/dependency-order",
                        f"block '{d.block.name_hint}' would run on the wrong side of "
                        f"block '{blk.name_hint}'", d.block, [(blk, "block")])
    if index is None or index == -1:
        pos = first_cons
    elif index == -2:
        pos = last_prod + 1
    elif not 0 <= index <= len(kids):
        raise sch.error(f"{what}/bad-index", f"index {index} is outside the loop body", f)
    elif not last_prod + 1 <= index <= first_cons:
        raise sch.error(f"{what}/bad-index", f"index {index} breaks a dependency", f)
    else:
        pos = index
    _check_passed(sch, block.func, info, kids, pos, f, reverse, what)
    # the region the block must cover, in terms of the loops at and above `f`
    reqs = {}
    outer_loops = [a for a in f_anc if isinstance(a, S.For)] + [f]
    region = _needed_region(sch, blk, deps, f, reverse, what, reqs,
                            C.loop_bounds(outer_loops))
    new_realize, new_loops = _make_nest(sch, info, region, outer_loops, preserve_unit_loops,
                                        what)
    if reverse:
        _check_cover(sch, info, deps, what)
        _check_reads(sch, blk, new_realize, new_loops, reqs, f, what,
                     C.loop_bounds(outer_loops))
    nest = C.nest(new_loops, new_realize)
    new_kids = kids[:pos] + [nest] + kids[pos:]
    new_f = dataclasses.replace(f, body=S.SeqStmt(tuple(new_kids)) if len(new_kids) > 1
                                else new_kids[0])
    mapping = {}
    I.removal(info, mapping)
    mapping[id(f)] = new_f
    I.rewrite_scope(sch, block.func, scope, mapping)
    return None


def _check_passed(sch, func, info, kids, pos, f, reverse, what):
    """The blocks the move carries the block past must not depend on it the other way:
    moving later, none of them may write what it reads; moving earlier, none may read what
    it writes."""
    order = scope_blocks(sch, func, info.scope)
    ib = next(k for k, o in enumerate(order) if o.block is info.block)
    under = [k for k, o in enumerate(order) if _under(o, f)]
    after = [k for k, o in enumerate(order) if any(_contains(s, o.realize) for s in kids[pos:])]
    j = min(after) if after else (max(under) + 1 if under else ib)
    passed = order[ib + 1:j] if j > ib else order[j:ib]
    mine = write_buffers(info.block) if reverse else read_buffers(info.block)
    for o in passed:
        theirs = read_buffers(o.block) if reverse else write_buffers(o.block)
        if any(a is b for a in mine for b in theirs):
            raise sch.error(f"{what}/dependency-order", f"block '{o.block.name_hint}' would "
                            f"run on the wrong side of block '{info.block.name_hint}'",
                            o.block, [(info.block, "block")])


def _contains(s, node):
    return s is node or any(x is node for x in _ir.stmts(s))


def _needed_region(sch, blk, deps, f, reverse, what, reqs, outer):
    """{id(iterator) -> (min expr, extent)} for the block's iterators that the region the
    blocks under the loop exchange with it pins down; the extent is an int, or an expression
    over shape symbols. Solved one buffer dimension at a time from how the block itself
    accesses the buffer (an iterator, an iterator times a constant, an iterator divided by a
    constant, a constant); an iterator taken modulo a constant is left free."""
    bufs = read_buffers(blk) if reverse else write_buffers(blk)
    own_r, own_w = _regions(blk)
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
                if not (A.to_lin(x.min, {}).key() == lo.key() == hi.key()):
                    raise sch.error(f"{what}/region", f"block '{blk.name_hint}' provides one "
                                    f"point of dimension {dim} of '{buf.name}', but more is "
                                    "needed", blk)
                continue
            if solved == "free":
                continue
            var, vlo, vhi = solved
            prev = result.get(id(var))
            if prev is not None:
                vlo, vhi = _hull(prev[0], vlo, min), _hull(prev[1], vhi, max)
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
        ext = hi.add(lo, -1)
        ext.const += 1
        mn = A.to_expr(lo)
        if k in wide:
            # widened to the iterator's type (as TVM)
            mn = E.IntImm("int64", mn.value) if isinstance(mn, E.IntImm) else \
                E.Cast("int64", mn)
        out[k] = (mn, ext.const if ext.is_const() else A.to_expr(ext))
    return out


def _fold_units(lin, units):
    out = A.Lin([], lin.const, lin.dtype)
    for atom, coef in lin.terms:
        if atom[0] == "var" and id(atom[1]) in units:
            out.const += coef * units[id(atom[1])]
        else:
            out._add_term(atom, coef)
    return out


def _tight(a, b, pick):
    """The bound of a and b that `pick` prefers (a when b is None or they do not compare)."""
    r = None if b is None else _hull(a, b, pick)
    return a if r is None else r


def _hull(a, b, pick):
    d = b.add(a, -1)
    if not d.is_const():
        return None
    return b if pick(0, d.const) == d.const and d.const != 0 else a


def _solve_dim(x, lo, hi, ivs):
    """How one dimension of the block's own access `x` (a Range) pins an iterator, given the
    needed range [lo, hi] (linear forms): (var, lo, hi), "const", "free" or None."""
    m = x.min
    unit = isinstance(x.extent, E.IntImm) and x.extent.value == 1
    if isinstance(m, E.IntImm):
        return "const" if unit else None
    if isinstance(m, E.Var) and id(m) in ivs:
        return m, lo, hi
    lin = A.to_lin(m, {})
    if unit and len(lin.terms) == 1 and lin.terms[0][0][0] == "var" and \
            id(lin.terms[0][0][1]) in ivs and abs(lin.terms[0][1]) == 1:
        # `v + k` or `k - v`: one point per iterator value, inverted
        v, k = lin.terms[0][0][1], A.Lin([], lin.const, lin.dtype)
        if lin.terms[0][1] == 1:
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
        h = hi.scale(c)
        h.const += c - 1
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
    lin = A.to_lin(x.min, {})
    terms = sorted(lin.terms, key=lambda t: -t[1])
    if len(terms) < 2 or any(a[0] != "var" or id(a[1]) not in ivs or c <= 0
                             for a, c in terms):
        return None
    exts = []
    for a, _ in terms:
        dom = ivs[id(a[1])].dom
        if not (isinstance(dom.min, E.IntImm) and dom.min.value == 0 and
                isinstance(dom.extent, E.IntImm)):
            return None
        exts.append(dom.extent.value)
    if terms[-1][1] != 1 or any(terms[k][1] != terms[k + 1][1] * exts[k + 1]
                                for k in range(len(terms) - 1)):
        return None
    point = A.to_expr(lo.add(A.Lin([], lin.const, lin.dtype), -1))
    dt = point.dtype
    out = []
    for k, ((a, c), ext) in enumerate(zip(terms, exts)):
        e = point if c == 1 else E.FloorDiv(point, E.IntImm(dt, c), dt)
        if k > 0:
            e = E.FloorMod(e, E.IntImm(dt, ext), dt)
        v = A.to_lin(e, {})
        out.append((a[1], v, v))
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
    return A.to_lin(E.FloorDiv(A.to_expr(lin), E.IntImm(lin.dtype, c), lin.dtype), {})


def _required(sch, blk, buf, deps, f, reverse, what, outer):
    """[(lo, hi)] per dimension of `buf`: the hull of what the blocks under `f` read (or, in
    reverse, write) of it, their loops under `f` relaxed over their ranges (a loop of symbolic
    extent too), as linear forms over the loops at and above `f` and shape symbols."""
    out = None
    for d in deps:
        r, w = _regions(d.block)
        ivmap = {id(iv.var): v for iv, v in zip(d.block.iter_vars, d.realize.iter_values)}
        inner = [a for a in d.ancestors if isinstance(a, S.For)]
        k = next(i for i, a in enumerate(inner) if a is f)
        loops = inner[k + 1:]
        cb = C.loop_bounds(loops)
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
                ra, rb = _relax(a, cb, sym, outer), _relax(b, cb, sym, outer)
                if ra is None or rb is None:
                    raise sch.error(f"{what}/region", f"the region of '{buf.name}' that block "
                                    f"'{blk.name_hint}' must cover is not a box",
                                    blk, [(f, "loop")])
                dims.append((ra[0], rb[1]))
            if out is None:
                out = dims
                continue
            merged = []
            for (a0, b0), (a1, b1) in zip(out, dims):
                a, b = _hull(a0, a1, min), _hull(b0, b1, max)
                if a is None or b is None:
                    raise sch.error(f"{what}/region", f"the region of '{buf.name}' that block "
                                    f"'{blk.name_hint}' must cover is not a box of known "
                                    "size", blk, [(f, "loop")])
                merged.append((a, b))
            out = merged
    return out


def _relax(e, cb, sym, outer=None):
    """(lo, hi) linear forms of `e` with the loop variables of cb (constant bounds) and of
    sym (loops of symbolic extent) ranging over their loops; None when not affine in them."""
    return _relax_lin(A._merge(A.to_lin(e, cb)), cb, sym, outer or {})


def _relax_lin(lin, cb, sym, outer):
    lo = A.Lin([], lin.const, lin.dtype)
    hi = A.Lin([], lin.const, lin.dtype)
    for atom, coef in lin.terms:
        vs = _atom_vars(atom)
        if atom[0] == "var" and id(atom[1]) in sym:
            loop = sym[id(atom[1])]
            m = A.to_lin(loop.min, {})
            top = A.to_lin(loop.extent, {}).add(m)
            top.const -= 1
            if any(id(v) in cb or id(v) in sym for v in _lin_vars(m) + _lin_vars(top)):
                return None
            a, b = (m, top) if coef > 0 else (top, m)
            lo = lo.add(a, coef)
            hi = hi.add(b, coef)
        elif any(id(v) in cb for v in vs) and not any(id(v) in sym for v in vs):
            if not all(id(v) in cb for v in vs):
                # `(outer + inner) // c`: the division of each end of the inner range
                if atom[0] != "div":
                    return None
                r = _relax_lin(atom[1], cb, sym, outer)
                if r is None:
                    return None
                a, b = _floordiv(r[0], atom[2], outer), _floordiv(r[1], atom[2], outer)
                a, b = (a, b) if coef > 0 else (b, a)
                lo = lo.add(a, coef)
                hi = hi.add(b, coef)
                continue
            bd = A.bound_atom(atom, cb)
            if bd is None:
                return None
            x, y = bd[0] * coef, bd[1] * coef
            lo.const += min(x, y)
            hi.const += max(x, y)
        elif any(id(v) in sym for v in vs):
            return None
        else:
            lo._add_term(atom, coef)
            hi._add_term(atom, coef)
    return lo, hi


def _floordiv(lin, c, outer):
    """`lin // c` as a linear form: the whole multiples of c taken out when the rest stays in
    [0, c) for the outer loops' bounds; else, with g the common factor of the terms (dividing
    c) and lin = g * m + r, 0 <= r < g, it is `m // (c / g)`."""
    import math
    if lin.is_const():
        return A.Lin([], lin.const // c, lin.dtype)
    q = A.Lin([], lin.const // c, lin.dtype)
    rest = A.Lin([], lin.const % c, lin.dtype)
    for a, k in lin.terms:
        q._add_term(a, k // c)
        rest._add_term(a, k % c)
    b = A.bound_lin(rest, outer)
    if b is not None and b[0] >= 0 and b[1] < c:
        return q
    g = c
    for _, k in lin.terms:
        g = math.gcd(g, k)
    m = A.Lin([[a, k // g] for a, k in lin.terms], lin.const // g, lin.dtype)
    c2 = c // g
    if c2 == 1:
        return m
    return A.to_lin(E.FloorDiv(A.to_expr(m), E.IntImm(lin.dtype, c2), lin.dtype), {})


def _atom_vars(atom):
    if atom[0] == "var":
        return [atom[1]]
    if atom[0] in ("div", "mod"):
        return _lin_vars(atom[1])
    return _ir.vars_in(atom[1])


def _lin_vars(lin):
    return [v for a, _ in lin.terms for v in _atom_vars(a)]


def _make_nest(sch, info, region, outer_loops, preserve_unit_loops, what):
    values, loops, preds = [], [], []
    bounds = C.loop_bounds(outer_loops)
    # unit loops around the new nest are folded to their value (as TVM's analyzer does)
    fold = {k: True for k, (lo, hi) in bounds.items() if lo == hi}
    A.FOLD.update(fold)
    try:
        realize, loops = _nest_values(sch, info, region, bounds, preserve_unit_loops, what,
                                      values, loops, preds)
        kept = _carry_predicate(sch, info, outer_loops, realize.iter_values, bounds, what)
        if kept is not None:
            realize = dataclasses.replace(realize, predicate=C.and_(realize.predicate, kept))
        return realize, loops
    finally:
        A.FOLD.clear()


def _nest_values(sch, info, region, bounds, preserve_unit_loops, what, values, loops, preds):
    blk = info.block
    n = 0
    for iv in blk.iter_vars:
        dt = iv.var.dtype
        dom_lo = iv.dom.min.value if isinstance(iv.dom.min, E.IntImm) else None
        dom_hi = dom_lo + iv.dom.extent.value if dom_lo is not None and \
            isinstance(iv.dom.extent, E.IntImm) else None
        if id(iv.var) in region:
            mn, ext = region[id(iv.var)]
            dt = mn.dtype           # the new loop and binding take the region's type (as TVM)
            if not isinstance(ext, int):
                # a symbolic extent: only when it provably stays inside the domain
                if not _inside(mn, ext, iv.dom, bounds):
                    raise sch.error(f"{what}/symbolic-extent", f"the range of iterator "
                                    f"'{iv.var.name}' of block '{blk.name_hint}' is not "
                                    "provably inside its domain", blk)
            elif dom_hi is not None:
                # the producer computes no more than its domain
                if isinstance(mn, E.IntImm):
                    lo, hi = max(mn.value, dom_lo), min(mn.value + ext, dom_hi)
                    mn, ext = C.int32(lo, dt), max(hi - lo, 1)
                else:
                    # a range that provably covers the whole domain becomes the domain;
                    # otherwise it stays, and predicates keep it inside (as TVM)
                    b = A.bound_of(mn, bounds)
                    if b is not None and b[1] <= dom_lo and b[0] + ext >= dom_hi:
                        mn, ext = C.int32(dom_lo, dt), dom_hi - dom_lo
        elif isinstance(iv.dom.extent, E.IntImm):
            mn, ext = iv.dom.min, iv.dom.extent.value
        else:
            mn, ext = iv.dom.min, iv.dom.extent
        # as TVM: the simplified start, plus the new loop variable when there is one
        start = A.simplify(mn, bounds)
        if isinstance(ext, int) and ext == 1 and not preserve_unit_loops:
            val = start
        else:
            v = E.Var(f"ax{n}", dt)
            n += 1
            if isinstance(ext, int):
                loops.append(C.new_loop(v, ext))
                bounds[id(v)] = (0, ext - 1)
            else:
                loops.append(C.new_loop(v, ext if ext.dtype == dt else E.Cast(dt, ext)))
            val = v if isinstance(start, E.IntImm) and start.value == 0 else \
                E.Add(start, v, dt)
        values.append(val)
        if dom_hi is not None and not isinstance(val, E.IntImm):
            b = A.bound_of(val.value if isinstance(val, E.Cast) else val, bounds)
            # the constant moves to the bound's side (as TVM writes them)
            lin = A.to_lin(val, bounds)
            k, vdt = lin.const, val.dtype
            var_part = A.to_expr(A.Lin(lin.terms, 0, lin.dtype))
            if b is None or b[0] < dom_lo:
                preds.append(A.simplify(E.LE(C.int32(dom_lo - k, vdt), var_part, "bool"),
                                        bounds))
            if b is None or b[1] >= dom_hi:
                preds.append(A.simplify(E.LT(var_part, C.int32(dom_hi - k, vdt), "bool"),
                                        bounds))
    pred = C.TRUE
    for p in preds:
        pred = C.and_(pred, p)
    realize = dataclasses.replace(info.realize, iter_values=tuple(values), predicate=pred)
    return realize, loops


def _whole(infos, buf, writes):
    """[(lo, hi)] per dimension: the hull of what the blocks `infos` write (or read) of
    `buf` over all their loops in the scope; None when it cannot be described."""
    out = None
    for d in infos:
        r, w = _regions(d.block)
        ivmap = {id(iv.var): v for iv, v in zip(d.block.iter_vars, d.realize.iter_values)}
        k = max((i for i, a in enumerate(d.ancestors) if isinstance(a, S.Block)), default=-1)
        loops = [a for a in d.ancestors[k + 1:] if isinstance(a, S.For)]
        cb = C.loop_bounds(loops)
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
                a = _relax(_ir.substitute(x.min, ivmap), cb, sym)
                b = _relax(_ir.substitute(top, ivmap), cb, sym)
                # the iterators' domains bound it too (a predicate keeps them inside)
                a2, b2 = _relax(x.min, ivb, {}), _relax(top, ivb, {})
                if a2 is not None and b2 is not None and not any(
                        id(v) in own for v in _lin_vars(a2[0]) + _lin_vars(b2[1])):
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
            merged = []
            for (a0, b0), (a1, b1) in zip(out, dims):
                a, b = _hull(a0, a1, min), _hull(b0, b1, max)
                if a is None or b is None:
                    return None
                merged.append((a, b))
            out = merged
    return out


def _check_cover(sch, info, deps, what):
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
            a, b = _lower(lo.add(wlo, -1), {}), _lower(whi.add(hi, -1), {})
            ok = ok and a is not None and a >= 0 and b is not None and b >= 0
        if not ok:
            raise sch.error(f"{what}/not-covered", f"block '{blk.name_hint}' reads parts of "
                            f"'{buf.name}' that its producers do not write", blk)


def _check_reads(sch, blk, realize, loops, reqs, f, what, outer):
    """The moved consumer may read only what the producers under the loop have written in
    the same iteration: its read regions, over the new bindings and loops, must lie inside
    the region they write."""
    own_r, _ = _regions(blk)
    ivmap = {id(iv.var): v for iv, v in zip(blk.iter_vars, realize.iter_values)}
    cb = C.loop_bounds(loops)
    sym = {id(a.loop_var): a for a in loops if id(a.loop_var) not in cb}
    for reg in own_r:
        req = reqs.get(id(reg.buffer))
        if req is None:
            continue
        for dim, (x, (lo, hi)) in enumerate(zip(reg.region, req)):
            a = _relax(_ir.substitute(x.min, ivmap), cb, sym)
            top = E.Sub(E.Add(x.min, x.extent, x.min.dtype), E.IntImm(x.min.dtype, 1),
                        x.min.dtype)
            b = _relax(_ir.substitute(top, ivmap), cb, sym)
            ok = a is not None and b is not None
            if ok:
                l1, h1 = _lower(a[0].add(lo, -1), outer), _lower(hi.add(b[1], -1), outer)
                ok = l1 is not None and l1 >= 0 and h1 is not None and h1 >= 0
            if not ok:
                raise sch.error(f"{what}/region", f"block '{blk.name_hint}' would read "
                                f"dimension {dim} of '{reg.buffer.name}' beyond what the "
                                f"blocks under loop '{f.loop_var.name}' have written", blk,
                                [(f, "loop")])


def _carry_predicate(sch, info, outer_loops, values, bounds, what):
    """The block's own predicate, written over its iterators and then over their new values;
    the conjuncts that the iterators' domains or the new loop nest already guarantee are
    dropped, the others kept (None when nothing is left). Refused when a conjunct cannot be
    written over the iterators."""
    pred = info.realize.predicate
    if C.is_true(pred):
        return None
    blk = info.block
    kept_ids = {id(f.loop_var) for f in outer_loops}
    gone = {id(a.loop_var) for a in info.ancestors if isinstance(a, S.For)} - kept_ids
    ivs = [iv.var for iv in blk.iter_vars]
    old = list(info.realize.iter_values)
    direct = {id(v): iv for iv, v in zip(ivs, old) if isinstance(v, E.Var) and id(v) in gone}
    dom = {}
    for iv in blk.iter_vars:
        if isinstance(iv.dom.min, E.IntImm) and isinstance(iv.dom.extent, E.IntImm):
            dom[id(iv.var)] = (iv.dom.min.value, iv.dom.min.value + iv.dom.extent.value - 1)
    newmap = {id(v): x for v, x in zip(ivs, values)}
    out = None
    for conj in _conjuncts(pred):
        c = _ir.substitute(conj, {k: v for k, v in direct.items()})
        if any(id(v) in gone for v in _ir.vars_in(c)):
            c = _over_iterators(c, ivs, old, gone)
            if c is None:
                raise sch.error(f"{what}/predicate", f"the predicate of block "
                                f"'{blk.name_hint}' cannot be written over its iterators",
                                blk)
        if C.is_true(A.simplify(c, dom)):
            continue
        c = A.simplify(_ir.substitute(c, newmap), bounds)
        if C.is_true(c):
            continue
        out = c if out is None else C.and_(out, c)
    return out


def _conjuncts(e):
    if isinstance(e, E.And):
        return _conjuncts(e.a) + _conjuncts(e.b)
    return [e]


_FLIP = {E.LT: E.GT, E.LE: E.GE, E.GT: E.LT, E.GE: E.LE, E.EQ: E.EQ, E.NE: E.NE}


def _over_iterators(c, ivs, old, gone):
    """A comparison `a < b` over loop variables rewritten as `d < 0` (d over the iterators)
    by subtracting multiples of the bindings; None when loop variables remain."""
    if type(c) not in _FLIP or not A._is_int(c.a):
        return None
    d = A.to_lin(c.a, {}).add(A.to_lin(c.b, {}), -1)
    for v, b in zip(ivs, old):
        lb = A.to_lin(b, {})
        if not lb.terms:
            continue
        atom, coef = lb.terms[0]
        k = next((t[1] for t in d.terms if A._akey(t[0]) == A._akey(atom)), 0)
        if k == 0 or k % coef:
            continue
        t = k // coef
        d = d.add(lb, -t)
        d._add_term(("var", v), t)
    if any(id(x) in gone for x in _lin_vars(d)):
        return None
    rest = A.Lin([], d.const, d.dtype)
    lhs = A.Lin([t for t in d.terms], 0, d.dtype)
    return type(c)(A.to_expr(lhs), E.IntImm(d.dtype, -rest.const), "bool")


def _inside(mn, ext, dom, bounds):
    """mn >= dom.min and mn + ext <= dom.min + dom.extent, for the loops' bounds."""
    m = A.to_lin(mn, bounds)
    d0 = A.to_lin(dom.min, bounds)
    top = A.to_lin(dom.extent, bounds).add(d0).add(m, -1).add(A.to_lin(ext, bounds), -1)
    low, high = _lower(m.add(d0, -1), bounds), _lower(top, bounds)
    return low is not None and low >= 0 and high is not None and high >= 0


def _lower(lin, bounds):
    """A lower bound of a linear form: `k*c * (x // c)` is at least `k * (x - c + 1)` and
    `-k*c * (x // c)` at least `-k * x`, which may cancel symbols; None when unbounded."""
    out = A.Lin([], lin.const, lin.dtype)
    for atom, coef in lin.terms:
        if atom[0] == "div" and coef % atom[2] == 0:
            k = coef // atom[2]
            out = out.add(atom[1], k)
            if k > 0:
                out.const -= k * (atom[2] - 1)
        else:
            out._add_term(atom, coef)
    b = A.bound_lin(out, bounds)
    return None if b is None else b[0]
