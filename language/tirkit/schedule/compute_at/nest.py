"""The new loop nest of the block that compute_at and reverse_compute_at move: a loop for each
iterator over the range solved for it (its domain for the others), predicates that keep the
iterators inside their domains, and the block's own predicate carried over to the new
bindings."""
from __future__ import annotations

import dataclasses

from ...ir import expr as E
from ...ir import stmt as S
from .. import _arith as A
from .. import _common as common
from . import bounds as nest_bounds
from .. import _ir


def make_nest(sch, info, region, outer_loops, preserve_unit_loops, what):
    values, loops, preds = [], [], []
    bounds = common.loop_bounds(outer_loops)
    # unit loops around the new nest are folded to their value (as TVM's analyzer does)
    fold = {k: True for k, (lo, hi) in bounds.items() if lo == hi}
    A.FOLD.update(fold)
    try:
        realize, loops = _nest_values(sch, info, region, bounds, preserve_unit_loops, what,
                                      values, loops, preds)
        kept = _carry_predicate(sch, info, outer_loops, realize.iter_values, bounds, what)
        if kept is not None:
            realize = dataclasses.replace(realize, predicate=common.and_(realize.predicate, kept))
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
                    mn, ext = common.int32(lo, dt), max(hi - lo, 1)
                else:
                    # a range that provably covers the whole domain becomes the domain;
                    # otherwise it stays, and predicates keep it inside (as TVM)
                    b = A.bound_of(mn, bounds)
                    if b is not None and b[1] <= dom_lo and b[0] + ext >= dom_hi:
                        mn, ext = common.int32(dom_lo, dt), dom_hi - dom_lo
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
                loops.append(common.new_loop(v, ext))
                bounds[id(v)] = (0, ext - 1)
            else:
                loops.append(common.new_loop(v, ext if ext.dtype == dt else E.Cast(dt, ext)))
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
                preds.append(A.simplify(E.LE(common.int32(dom_lo - k, vdt), var_part, "bool"),
                                        bounds))
            if b is None or b[1] >= dom_hi:
                preds.append(A.simplify(E.LT(var_part, common.int32(dom_hi - k, vdt), "bool"),
                                        bounds))
    pred = common.TRUE
    for p in preds:
        pred = common.and_(pred, p)
    realize = dataclasses.replace(info.realize, iter_values=tuple(values), predicate=pred)
    return realize, loops


def _carry_predicate(sch, info, outer_loops, values, bounds, what):
    """The block's own predicate, written over its iterators and then over their new values;
    the conjuncts that the iterators' domains or the new loop nest already guarantee are
    dropped, the others kept (None when nothing is left). Refused when a conjunct cannot be
    written over the iterators."""
    pred = info.realize.predicate
    if common.is_true(pred):
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
    for conj in common.conjuncts(pred):
        c = _ir.substitute(conj, {k: v for k, v in direct.items()})
        if any(id(v) in gone for v in _ir.vars_in(c)):
            c = _over_iterators(c, ivs, old, gone)
            if c is None:
                raise sch.error(f"{what}/predicate", f"the predicate of block "
                                f"'{blk.name_hint}' cannot be written over its iterators",
                                blk)
        if common.is_true(A.simplify(c, dom)):
            continue
        c = A.simplify(_ir.substitute(c, newmap), bounds)
        if common.is_true(c):
            continue
        out = c if out is None else common.and_(out, c)
    return out


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
    if any(id(x) in gone for x in nest_bounds.lin_vars(d)):
        return None
    rest = A.Lin([], d.const, d.dtype)
    lhs = A.Lin([t for t in d.terms], 0, d.dtype)
    return type(c)(A.to_expr(lhs), E.IntImm(d.dtype, -rest.const), "bool")


def _inside(mn, ext, dom, bounds):
    """mn >= dom.min and mn + ext <= dom.min + dom.extent, for the loops' bounds."""
    m = A.to_lin(mn, bounds)
    d0 = A.to_lin(dom.min, bounds)
    top = A.to_lin(dom.extent, bounds).add(d0).add(m, -1).add(A.to_lin(ext, bounds), -1)
    low, high = nest_bounds.lower(m.add(d0, -1), bounds), nest_bounds.lower(top, bounds)
    return low is not None and low >= 0 and high is not None and high >= 0
