"""blockize: turn the subtree of a loop into a block of its own.

    outer = sch.blockize(i1)

The block under the loop is split into an outer block `<name>_o` (iterators `v_o`, bound to
the loops above) placed where the loop was, and the original block (iterators `v_i`, bound to
the loops under it) inside. Each binding must split as `outer * inner_extent + inner`, the
inner part starting at zero; extents may be symbolic when a binding is a plain loop
variable (or a fusion of loops whose lower extents are constants). A predicate is split
the same way: the conditions on the loops above go to the outer block, those on the loops
below stay on the inner one. Refused: a subtree with no block or several blocks, a binding
or a condition that mixes outer and inner loops in a way that does not split. A reduction's
init moves to the outer block (as a block `<name>_init` over the inner spatial iterators
it uses).

As in TVM, the substituted expressions of the inner block are simplified knowing the range
of the inner iterators, and the regions of the outer block are those of the inner block
relaxed over the inner iterators."""
from __future__ import annotations

import dataclasses
import math

from ..ir import expr as E
from ..ir import stmt as S
from . import _arith as A
from . import _common as C
from . import _ir
from .analysis import infer_regions, realizes_under
from .registry import primitive


@primitive("blockize")
def blockize(sch, target, preserve_unit_iters=True):
    f, f_anc = sch.loop_info(target)
    realizes = realizes_under(f.body)
    if not realizes:
        raise sch.error("blockize/no-block", f"loop '{f.loop_var.name}' holds no block", f)
    tops = [r for r in realizes if not any(o is not r and _inside(r, o) for o in realizes)]
    if len(tops) != 1:
        raise sch.error("blockize/several-blocks", f"loop '{f.loop_var.name}' holds "
                        f"{len(tops)} blocks", f)
    r = tops[0]
    blk = r.block
    inner_loops = [x for x in _ir.stmts(f) if isinstance(x, S.For) and
                   any(y is r for y in _ir.stmts(x))]
    outer_loops = []
    for a in reversed(f_anc):
        if isinstance(a, (S.Block, S.BlockRealize)):
            break
        if isinstance(a, S.For):
            outer_loops.insert(0, a)
    ib = C.loop_bounds(inner_loops)
    ob = C.loop_bounds(outer_loops)
    idoms = {id(lp.loop_var): lp for lp in inner_loops}
    odoms = {id(lp.loop_var): lp for lp in outer_loops}

    def refuse(kind, msg):
        return sch.error(kind, msg, blk, [(f, "loop")])

    o_ivs, i_ivs, o_vals, i_vals, vmap = [], [], [], [], {}
    alldoms = {**odoms, **idoms}
    # TVM divides bindings that are fusions of loops; when one is not (`l * 16`), each
    # binding over the inner (outer) loops alone keeps its domain as the inner (outer) one
    trivial = not all(_exact(A.to_lin(v, {**ob, **ib}), alldoms) for v in r.iter_values)
    conds = _conjuncts(r.predicate)
    for iv, v in zip(blk.iter_vars, r.iter_values):
        dt = iv.var.dtype
        vs = _ir.vars_in(v)
        has_in = any(id(x) in idoms for x in vs)
        has_out = any(id(x) in odoms for x in vs)
        one_sided = has_in != has_out and _is_zero(iv.dom.min)
        split = None
        if not (trivial and one_sided):
            try:
                split = _divide(iv, v, ob, ib, odoms, idoms, conds, refuse,
                                f.loop_var.name)
            except Exception as e:
                if not one_sided or not hasattr(e, "kind"):
                    raise
        vo = E.Var(iv.var.name + "_o", dt)
        vi = E.Var(iv.var.name + "_i", dt)
        if split is None and has_in and _is_one(iv.dom.extent):
            # an inner part of extent 1 is no iterator of its own (as TVM)
            split = (1, C.int32(0, dt), 1, None)
        if split is None:
            if has_in:
                o_ivs.append(S.IterVar(vo, E.Range(C.int32(0, dt), C.int32(1, dt)), iv.kind))
                o_vals.append(C.int32(0, dt))
                i_ivs.append(dataclasses.replace(iv, var=vi))
                i_vals.append(v)
                vmap[id(iv.var)] = vi
            else:
                o_ivs.append(dataclasses.replace(iv, var=vo))
                o_vals.append(v)
                vmap[id(iv.var)] = vo
            continue
        ext_o, o_val, ext_i, i_val = split
        # (a unit outer iterator stands for zero only when its binding is zero)
        one_o = isinstance(ext_o, int) and ext_o == 1 and (
            _is_zero(o_val) or A.bound_of(o_val, ob) == (0, 0))
        one_i = isinstance(ext_i, int) and ext_i == 1
        o_ivs.append(S.IterVar(vo, E.Range(C.int32(0, dt), _ex(ext_o, dt)), iv.kind))
        o_vals.append(o_val)
        if not one_i:
            i_ivs.append(S.IterVar(vi, E.Range(C.int32(0, dt), _ex(ext_i, dt)), iv.kind))
            i_vals.append(i_val)
        if one_i:
            vmap[id(iv.var)] = C.int32(0, dt) if one_o and not preserve_unit_iters else vo
        elif one_o:
            vmap[id(iv.var)] = vi
        else:
            vmap[id(iv.var)] = E.Add(E.Mul(vo, _ex(ext_i, dt), dt), vi, dt)
    if not preserve_unit_iters:
        keep = [k for k, iv in enumerate(o_ivs) if not _is_one(iv.dom.extent)]
        gone = {id(iv.var): val for k, (iv, val) in enumerate(zip(o_ivs, o_vals))
                if k not in keep}
        vmap = {k: _ir.substitute(e, gone) for k, e in vmap.items()}
        o_ivs = [o_ivs[k] for k in keep]
        o_vals = [o_vals[k] for k in keep]
    # an outer loop bound as it is to an outer iterator is that iterator inside the block
    lmap = {id(val): iv.var for iv, val in zip(o_ivs, o_vals)
            if isinstance(val, E.Var) and id(val) in odoms}
    o_pred, i_pred = _split_predicate(r.predicate, idoms, odoms, lmap, refuse)
    # the inner block: the original one with its regions written out, substituted
    bounds = {id(iv.var): (0, iv.dom.extent.value - 1) for iv in i_ivs
              if isinstance(iv.dom.extent, E.IntImm)}
    reads, writes = blk.reads, blk.writes
    if reads is None or writes is None:
        r2, w2 = infer_regions(blk)
        reads = reads if reads is not None else r2
        writes = writes if writes is not None else w2
    if blk.match_buffers:
        # an access through a matched buffer is one of the region it matches
        src = {id(m.buffer): m.source for m in blk.match_buffers}
        reads = tuple(src.get(id(x.buffer), x) for x in reads)
        writes = tuple(src.get(id(x.buffer), x) for x in writes)
    sub = dataclasses.replace(blk, reads=tuple(reads), writes=tuple(writes))
    sub = _substitute(sub, vmap, bounds)
    outer_reduction = sub.init is not None and any(iv.kind == "R" for iv in o_ivs)
    i_reads = sub.writes + sub.reads if outer_reduction else sub.reads
    new_blk = dataclasses.replace(sub, iter_vars=tuple(i_ivs), init=None, reads=i_reads)
    new_r = dataclasses.replace(r, iter_values=tuple(i_vals), predicate=i_pred, block=new_blk)
    new_f = _ir.replace_nodes(f, {id(r): new_r})
    # the outer block: the regions of the inner one over the inner iterators
    doms = {id(iv.var): iv.dom.extent for iv in i_ivs}
    # (loops inside show in the regions of an opaque block: relaxed too)
    rbounds = {**ib, **bounds}
    doms.update({k: lp.extent for k, lp in idoms.items() if _is_zero(lp.min) or k in ib})
    o_reads = _relax(sub.reads, rbounds, doms)
    o_writes = _relax(sub.writes, rbounds, doms)
    name = sch.fresh_block_name(target.func, blk.name_hint + "_o")
    init = None
    if sub.init is not None:
        if any(iv.kind != "S" and _ir.uses_var(sub.init, iv.var) for iv in i_ivs):
            raise refuse("blockize/init", "the init of the block uses a reduction iterator")
        init = _outer_init(sch, target.func, new_f, new_r, sub.init)
        if init is None:
            raise refuse("blockize/init", "the predicate of the block is over loops that its "
                         "init would not run over")
    outer_blk = S.Block(name, tuple(o_ivs), o_reads, o_writes, new_f, init)
    outer_r = S.BlockRealize(tuple(o_vals), o_pred, outer_blk)
    sch.replace(target.func, f, outer_r)
    return sch.block_of(target.func, name)


def _divide(iv, v, ob, ib, odoms, idoms, conds, refuse, loop_name):
    """(outer extent, outer binding, inner extent, inner binding) of one binding written as
    `outer * inner_extent + inner`; extents are ints or expressions."""
    dt = iv.var.dtype
    lin = A.to_lin(v, {**ob, **ib})
    inner = A.Lin([], 0, lin.dtype)
    outer = A.Lin([], 0, lin.dtype)
    for atom, coef in lin.terms:
        vs = _vars(atom)
        if any(id(x) in idoms for x in vs):
            if any(id(x) in odoms for x in vs):
                raise refuse("blockize/mixed-binding", f"the binding of '{iv.var.name}'"
                             f" mixes loops inside and outside loop '{loop_name}'")
            inner._add_term(atom, coef)
        else:
            outer._add_term(atom, coef)
    if not _is_zero(iv.dom.min):
        raise refuse("blockize/not-divisible", f"the domain of '{iv.var.name}' does not "
                     "start at zero")
    ext_i = _extent(inner, ib, idoms)
    if ext_i is None:
        raise refuse("blockize/not-divisible", f"the inner part of '{iv.var.name}' does "
                     "not start at zero")
    const = lin.const
    if isinstance(ext_i, int):
        if any(c % ext_i for _, c in outer.terms) or const % ext_i:
            raise refuse("blockize/not-divisible", f"the binding of '{iv.var.name}' "
                         f"does not split into tiles of {ext_i}")
        o_lin = A.Lin([[a, c // ext_i] for a, c in outer.terms], const // ext_i, dt)
    else:
        if outer.terms or const:
            raise refuse("blockize/not-divisible", f"the binding of '{iv.var.name}' "
                         "does not split into tiles of a symbolic extent")
        o_lin = A.Lin([], 0, dt)
    if not o_lin.terms:
        if o_lin.const == 0:
            ext_o = 1
        elif isinstance(iv.dom.extent, E.IntImm) and isinstance(ext_i, int):
            ext_o = max(iv.dom.extent.value // ext_i, o_lin.const + 1)
        else:
            raise refuse("blockize/not-divisible", f"the binding of '{iv.var.name}' "
                         "has no extent")
    else:
        bd = A.bound_lin(o_lin, ob)
        if bd is not None and bd[0] >= 0:
            ext_o = bd[1] + 1
        else:
            ext_o = _extent(o_lin, ob, odoms) if o_lin.const == 0 else None
            dom = iv.dom.extent
            if ext_o is None and isinstance(dom, E.IntImm) and isinstance(ext_i, int) \
                    and dom.value % ext_i == 0:
                # over symbols of an enclosing block: the tiles of the domain
                ext_o = dom.value // ext_i
            elif ext_o is None and ext_i == 1:
                ext_o = dom         # the binding itself, within its domain
            if ext_o is None:
                raise refuse("blockize/not-divisible", f"the outer part of "
                             f"'{iv.var.name}' has no extent")
    if isinstance(ext_o, int):
        # a predicate `binding < c` bounds the outer iterator (as TVM's division finds)
        for cond in conds:
            if isinstance(cond, E.LT) and isinstance(cond.b, E.IntImm) and \
                    cond.b.value < ext_o and \
                    A.to_lin(cond.a, {}).key() == A.Lin(o_lin.terms, 0, dt).key() and \
                    o_lin.const == 0:
                ext_o = cond.b.value
    o_val = A.to_expr(A._merge(o_lin), neg_add=True)
    return ext_o, o_val, ext_i, A.to_expr(inner, neg_add=True)


def _ex(x, dt):
    return C.int32(x, dt) if isinstance(x, int) else x


def _extent(lin, bounds, doms):
    """The extent of a linear form that starts at zero over loops of `doms` (int, or an
    expression for a fusion of loops whose only symbolic extent is the outermost one);
    None when it does not start at zero."""
    if not lin.terms:
        return 1 if lin.const == 0 else None
    bd = A.bound_lin(lin, bounds)
    if bd is not None:
        return bd[1] + 1 if bd[0] == 0 else None
    if lin.const:
        return None
    scale = 1
    for atom, coef in sorted(lin.terms, key=lambda t: t[1]):
        if atom[0] != "var" or id(atom[1]) not in doms or not isinstance(scale, int) or \
                coef != scale:
            return None
        lp = doms[id(atom[1])]
        if not _is_zero(lp.min):
            return None
        ext = lp.extent
        if isinstance(ext, E.IntImm):
            scale = scale * ext.value
        elif scale == 1:
            scale = ext
        else:
            scale = E.Mul(ext, C.int32(scale, ext.dtype), ext.dtype)
    return scale


def _exact(lin, doms) -> bool:
    """Whether the loop-variable terms of a binding fuse its loops exactly (scales 1,
    e1, e1*e2...); other symbols count as a base."""
    vts = sorted(((a, c) for a, c in lin.terms if a[0] == "var" and id(a[1]) in doms),
                 key=lambda t: abs(t[1]))
    scale = 1
    for a, c in vts:
        if not isinstance(scale, int) or c != scale:
            return False
        ext = doms[id(a[1])].extent
        scale = scale * ext.value if isinstance(ext, E.IntImm) else None
    return True


def _split_predicate(pred, idoms, odoms, lmap, refuse):
    """(outer, inner) predicates: each condition goes where its loops are; one over loops
    on both sides goes inside, its outer loops written as the outer iterators bound to
    them (`lmap`)."""
    if C.is_true(pred):
        return C.TRUE, C.TRUE
    outer, inner = C.TRUE, C.TRUE
    for cond in _conjuncts(pred):
        vs = _ir.vars_in(cond)
        if any(id(v) in idoms for v in vs):
            if any(id(v) in odoms and id(v) not in lmap for v in vs):
                raise refuse("blockize/predicate", "the predicate mixes loops inside and "
                             "outside the blockized loop")
            inner = C.and_(inner, _ir.substitute(cond, lmap))
        else:
            outer = C.and_(outer, cond)
    return outer, inner


def _conjuncts(e):
    if isinstance(e, E.And):
        return _conjuncts(e.a) + _conjuncts(e.b)
    return [e]


# -- substitution with simplification (what changes is simplified, as TVM does) ------------

_ARITH = (E.Add, E.Sub, E.Mul, E.FloorDiv, E.FloorMod)


def _substitute(node, vmap, bounds):
    def fn(new, old):
        if isinstance(old, E.Var):
            return vmap.get(id(old))
        if new is old or not isinstance(new, E.PrimExpr):
            return None
        return _simp(new, bounds)
    return _ir.rebuild(node, fn)


def _simp(e, bounds):
    t = type(e)
    if t is E.GE or t is E.GT:
        flip = (E.LE if t is E.GE else E.LT)(e.b, e.a, e.dtype)
        out = _simp(flip, bounds)
        return flip if out is None else out
    if t in (E.LE, E.LT) and A._is_int(e.a) and A._is_int(e.b):
        a, b = _fold_casts(e.a), _fold_casts(e.b)
        if _affine(a) and _affine(b):
            d = A.to_lin(a, bounds).add(A.to_lin(b, bounds), -1)
            bd = A.bound_lin(d, bounds)
            if bd is not None:
                lo, hi = bd
                if t is E.LE and (hi <= 0 or lo > 0):
                    return E.IntImm("bool", int(hi <= 0))
                if t is E.LT and (hi < 0 or lo >= 0):
                    return E.IntImm("bool", int(hi < 0))
        return None
    if t is E.And:
        if C.is_true(e.a):
            return e.b
        if C.is_true(e.b):
            return e.a
        return None
    if t is E.Cast:
        return _cast(e)
    if t in _ARITH and A._is_int(e):
        e = _fold_casts(e)
        if _affine(e):
            return _index(e, bounds)
        return e
    return None


def _cast(e):
    v = e.value
    if v.dtype == e.dtype:
        return v
    if A._is_int(e) and isinstance(v, (E.IntImm, E.FloatImm)) and math.isfinite(v.value):
        return E.IntImm(e.dtype, int(v.value))
    return None


def _fold_casts(e):
    """Casts of constants folded (TVM's simplifier folds them under what it rewrites)."""
    def fn(new, old):
        return _cast(new) if isinstance(new, E.Cast) else None
    return _ir.rebuild(e, fn)


def _bounded(atom, bounds):
    return all(id(v) in bounds for v in _vars(atom))


def _index(e, bounds):
    """An index expression simplified the way TVM's simplifier writes it, knowing the bounds
    of the inner iterators: multiples of the divisor leave a division, `(x * g + y) // c`
    with a single unbounded term x and 0 <= y < g divides x alone, `x // a % b` is
    `x % (a * b) // a`."""
    t = type(e)
    if t in (E.FloorDiv, E.FloorMod) and isinstance(e.b, E.IntImm) and e.b.value > 0:
        c = e.b.value
        lin = A.to_lin(e.a, bounds)
        dt = lin.dtype
        q = A.Lin([], 0, dt)
        r = A.Lin([], lin.const, dt)
        for a, k in lin.terms:
            if k % c == 0 and not _bounded(a, bounds):
                q._add_term(a, k // c)
            else:
                r._add_term(a, k)
        if q.terms:
            if t is E.FloorMod:
                return _index(E.FloorMod(A.to_expr(A._merge(r)), e.b, dt), bounds)
            rest = _index(E.FloorDiv(A.to_expr(A._merge(r)), e.b, dt), bounds)
            qe = A.to_expr(A._merge(q))
            if isinstance(rest, E.IntImm) and rest.value == 0:
                return qe
            return _norm(E.Add(qe, rest, dt), bounds)
        d = _divmod_scaled(lin, t is E.FloorDiv, c, bounds)
        if d is not None:
            return d
        if t is E.FloorMod and isinstance(e.a, E.FloorDiv) and isinstance(e.a.b, E.IntImm) \
                and len(lin.terms) == 1 and lin.terms[0][0][0] == "div" and not lin.const:
            x, k = e.a.a, e.a.b.value
            bd = A.bound_of(x, bounds)
            if bd is None or bd[0] < 0 or bd[1] >= k * c:
                return E.FloorDiv(E.FloorMod(x, C.int32(k * c, dt), dt), e.a.b, dt)
    return _norm(e, bounds)


def _norm(e, bounds):
    """A sum in TVM's order: larger scale first, then a division by more first."""
    return A.to_expr(A._order(A._merge(A.to_lin(e, bounds)), {}))


def _affine(e) -> bool:
    """Integer arithmetic over variables and constants only (no loads, calls...)."""
    t = type(e)
    if t in (E.IntImm, E.Var, E.SizeVar):
        return True
    if t in _ARITH:
        return _affine(e.a) and _affine(e.b)
    return False


def _divmod_scaled(lin, is_div, c, bounds):
    """`(x * g + y) // c` with g dividing c and 0 <= y < g is `x // (c / g)`; the remainder
    `(x * g + y) % c` is `x % (c / g) * g + y` (x the only unbounded term)."""
    free = [(a, k) for a, k in lin.terms if not _bounded(a, bounds)]
    if len(free) != 1:
        return None
    g = math.gcd(c, free[0][1])
    if g <= 1:
        return None
    dt = lin.dtype
    q = A.Lin([], lin.const // g, dt)
    rest = A.Lin([], lin.const % g, dt)
    for a, k in lin.terms:
        if k % g == 0 and not _bounded(a, bounds):
            q._add_term(a, k // g)
        else:
            rest._add_term(a, k)
    bd = A.bound_lin(rest, bounds)
    if bd is None or bd[0] < 0 or bd[1] >= g:
        return None
    n = c // g
    qe = A.to_expr(A._merge(q))
    if is_div:
        return qe if n == 1 else E.FloorDiv(qe, C.int32(n, dt), dt)
    head = None if n == 1 else E.Mul(E.FloorMod(qe, C.int32(n, dt), dt), C.int32(g, dt), dt)
    re = A.to_expr(rest) if rest.terms or rest.const else None
    if head is None:
        return re if re is not None else C.int32(0, dt)
    return head if re is None else E.Add(head, re, dt)


# -- the outer block's init and regions ------------------------------------------------------

def _outer_init(sch, func, new_f, inner_r, init_body):
    """The init of the outer block: the original init over the inner spatial iterators it
    uses, in fresh copies of the loops under the target that feed them."""
    blk = inner_r.block
    ivmap, new_ivs, vals = {}, [], []
    for iv, v in zip(blk.iter_vars, inner_r.iter_values):
        if iv.kind == "S" and _ir.uses_var(init_body, iv.var):
            nv = E.Var(iv.var.name + "_init", iv.var.dtype)
            ivmap[id(iv.var)] = nv
            new_ivs.append(dataclasses.replace(iv, var=nv))
            vals.append(v)
    loops = [x for x in _ir.stmts(new_f) if isinstance(x, S.For) and
             any(x2 is inner_r for x2 in _ir.stmts(x))]
    lmap, new_loops = {}, []
    for lp in loops:
        if any(_ir.uses_var(v, lp.loop_var) for v in vals):
            nv = E.Var(lp.loop_var.name, lp.loop_var.dtype)
            lmap[id(lp.loop_var)] = nv
            new_loops.append(dataclasses.replace(lp, loop_var=nv, body=None, comments=(),
                                                 trailing=None))
    if any(id(v) in {id(lp.loop_var) for lp in loops} and id(v) not in lmap
           for v in _ir.vars_in(inner_r.predicate)):
        return None     # the predicate holds loops the init does not run over
    name = sch.fresh_block_name(func, blk.name_hint + "_init")
    init_blk = S.Block(name, tuple(new_ivs), (), _ir.substitute(blk.writes, ivmap),
                       _ir.substitute(init_body, ivmap))
    pred = _ir.substitute(inner_r.predicate, lmap)
    init_r = S.BlockRealize(tuple(_ir.substitute(v, lmap) for v in vals), pred, init_blk)
    return C.nest(new_loops, init_r)


def _relax(regions, bounds, doms):
    """Each region with the inner iterators (`doms`: id -> extent; `bounds`: the constant
    ones) ranging over their domains; a dimension whose range cannot be described covers
    the whole buffer dimension."""
    out = []
    for reg in regions:
        dims = []
        for d, rg in enumerate(reg.region):
            vs = _ir.vars_in(rg.min) + _ir.vars_in(rg.extent)
            if not any(id(v) in doms for v in vs):
                dims.append(rg)
                continue
            dims.append(_relax_dim(rg, bounds, doms) or
                        E.Range(C.int32(0, _dt(reg.buffer.shape[d])), reg.buffer.shape[d]))
        out.append(S.BufferRegion(reg.buffer, tuple(dims)))
    return tuple(out)


def _dt(e):
    return getattr(e, "dtype", "int32")


def _relax_dim(rg, bounds, doms):
    """The range of one dimension with the inner iterators relaxed: affine terms over them
    widen it; a division or remainder whose inner part cannot carry past a multiple of the
    divisor keeps its outer part (as TVM's interval analysis finds)."""
    if not _affine(rg.min) or not isinstance(rg.extent, E.IntImm):
        return None
    lin = A.to_lin(rg.min, bounds)
    width = A.Lin([], 0, lin.dtype)
    sym = None
    for atom, coef in lin.terms:
        vs = _vars(atom)
        if not any(id(v) in doms for v in vs):
            continue
        if any(id(v) in doms and id(v) not in bounds for v in vs):
            # an iterator of symbolic extent n stepping over tiles of its step k: k * n
            if atom[0] != "var" or coef != rg.extent.value or sym is not None:
                return None
            sym = (atom[1], coef)
            continue
        if all(id(v) in bounds for v in vs):
            width._add_term(atom, coef)
            continue
        if atom[0] not in ("div", "mod"):
            return None
        c = atom[2]
        g = math.gcd(c, atom[1].const)
        inner = A.Lin([], 0, lin.dtype)
        for a, k in atom[1].terms:
            avs = _vars(a)
            if all(id(v) in bounds for v in avs):
                inner._add_term(a, k)
            elif any(id(v) in doms for v in avs):
                return None
            else:
                g = math.gcd(g, k)
        bd = A.bound_lin(inner, bounds)
        if bd is None or bd[0] < 0 or bd[1] >= g:
            return None
        if atom[0] == "mod":
            width = width.add(inner, coef)
    bd = A.bound_lin(width, bounds)
    zero = {k: (0, 0) for k in bounds}
    z = A.bound_lin(width, zero)
    if bd is None or z is None:
        return None
    at_zero = _substitute(rg.min, {k: C.int32(0, _dt(rg.min)) for k in doms}, {})
    if sym is not None:
        if width.terms:
            return None
        n = doms[id(sym[0])]
        return E.Range(at_zero, n if sym[1] == 1 else
                       E.Mul(n, C.int32(sym[1], n.dtype), n.dtype))
    lo = bd[0] - z[0]
    if lo:
        at_zero = _norm(E.Add(at_zero, C.int32(lo, _dt(rg.min)), _dt(rg.min)), {})
    return E.Range(at_zero, C.int32(bd[1] - bd[0] + rg.extent.value, rg.extent.dtype))


def _is_zero(e):
    return isinstance(e, E.IntImm) and e.value == 0


def _is_one(e):
    return isinstance(e, E.IntImm) and e.value == 1


def _vars(atom):
    if atom[0] == "var":
        return [atom[1]]
    if atom[0] in ("div", "mod"):
        return [v for a, _ in atom[1].terms for v in _vars(a)]
    return _ir.vars_in(atom[1])


def _inside(r, o):
    """Whether realize r is under block realize o (its body or its init)."""
    return any(x is r for part in (o.block.body, o.block.init) if part is not None
               for x in _ir.stmts(part))
