"""How blockize divides a block between the outer block and the inner one: each binding
written as `outer * inner_extent + inner` (extents ints, or expressions when symbolic), each
condition of the predicate placed with its loops."""
from __future__ import annotations

from ...ir import expr as E
from .. import _arith as A
from .. import _common as common
from .. import _ir
from ..analysis import atom_vars


def divide(iv, v, ob, ib, odoms, idoms, conds, refuse, loop_name):
    """(outer extent, outer binding, inner extent, inner binding) of one binding written as
    `outer * inner_extent + inner`; extents are ints or expressions."""
    dt = iv.var.dtype
    lin = A.to_lin(v, {**ob, **ib})
    inner = A.Lin([], 0, lin.dtype)
    outer = A.Lin([], 0, lin.dtype)
    for atom, coef in lin.terms:
        vs = atom_vars(atom)
        if any(id(x) in idoms for x in vs):
            if any(id(x) in odoms for x in vs):
                raise refuse("blockize/mixed-binding", f"the binding of '{iv.var.name}'"
                             f" mixes loops inside and outside loop '{loop_name}'")
            inner._add_term(atom, coef)
        else:
            outer._add_term(atom, coef)
    if not common.is_zero(iv.dom.min):
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


def as_expr(x, dt):
    return common.int32(x, dt) if isinstance(x, int) else x


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
        if not common.is_zero(lp.min):
            return None
        ext = lp.extent
        if isinstance(ext, E.IntImm):
            scale = scale * ext.value
        elif scale == 1:
            scale = ext
        else:
            scale = E.Mul(ext, common.int32(scale, ext.dtype), ext.dtype)
    return scale


def exact(lin, doms) -> bool:
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


def split_predicate(pred, idoms, odoms, lmap, refuse):
    """(outer, inner) predicates: each condition goes where its loops are; one over loops
    on both sides goes inside, its outer loops written as the outer iterators bound to
    them (`lmap`)."""
    if common.is_true(pred):
        return common.TRUE, common.TRUE
    outer, inner = common.TRUE, common.TRUE
    for cond in common.conjuncts(pred):
        vs = _ir.vars_in(cond)
        if any(id(v) in idoms for v in vs):
            if any(id(v) in odoms and id(v) not in lmap for v in vs):
                raise refuse("blockize/predicate", "the predicate mixes loops inside and "
                             "outside the blockized loop")
            inner = common.and_(inner, _ir.substitute(cond, lmap))
        else:
            outer = common.and_(outer, cond)
    return outer, inner
