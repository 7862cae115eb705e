"""The outer block of blockize: its init (the reduction's init over the inner spatial
iterators it uses, in fresh copies of the loops that feed them) and its regions (those of
the inner block relaxed over the inner iterators)."""
from __future__ import annotations

import dataclasses
import math

from ...ir import expr as E
from ...ir import stmt as S
from .. import _arith as A
from .. import _common as common
from .. import _ir
from .simplify import affine, norm, substitute
from ..analysis import atom_vars


def outer_init(sch, func, new_f, inner_r, init_body):
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
    return common.nest(new_loops, init_r)


def relax_regions(regions, bounds, doms):
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
                        E.Range(common.int32(0, _dt(reg.buffer.shape[d])), reg.buffer.shape[d]))
        out.append(S.BufferRegion(reg.buffer, tuple(dims)))
    return tuple(out)


def _dt(e):
    return getattr(e, "dtype", "int32")


def _relax_dim(rg, bounds, doms):
    """The range of one dimension with the inner iterators relaxed: affine terms over them
    widen it; a division or remainder whose inner part cannot carry past a multiple of the
    divisor keeps its outer part (as TVM's interval analysis finds)."""
    if not affine(rg.min) or not isinstance(rg.extent, E.IntImm):
        return None
    lin = A.to_lin(rg.min, bounds)
    width = A.Lin([], 0, lin.dtype)
    sym = None
    for atom, coef in lin.terms:
        vs = atom_vars(atom)
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
            avs = atom_vars(a)
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
    at_zero = substitute(rg.min, {k: common.int32(0, _dt(rg.min)) for k in doms}, {})
    if sym is not None:
        if width.terms:
            return None
        n = doms[id(sym[0])]
        return E.Range(at_zero, n if sym[1] == 1 else
                       E.Mul(n, common.int32(sym[1], n.dtype), n.dtype))
    lo = bd[0] - z[0]
    if lo:
        at_zero = norm(E.Add(at_zero, common.int32(lo, _dt(rg.min)), _dt(rg.min)), {})
    return E.Range(at_zero, common.int32(bd[1] - bd[0] + rg.extent.value, rg.extent.dtype))
