"""split: one loop into several nested loops.

    i0, i1 = sch.split(i, factors=[None, 32])

At most one factor may be None (inferred as ceil(extent / product of the others)). When
the factors do not divide the extent exactly, the blocks under the loop get a predicate
`fused < extent`. Refused: non-positive factors, several None, factors whose product is
smaller than the extent, a loop of non-constant extent with a None factor."""
from __future__ import annotations

import dataclasses

from ...ir import expr as E
from .. import _common as common
from .. import _ir
from ..registry import primitive


@primitive("split")
def split(sch, loop, factors, preserve_unit_iters=True):
    f, ancestors = sch.loop_info(loop)
    if not isinstance(factors, (list, tuple)) or len(factors) < 2:
        raise sch.error("split/bad-factors", "split takes a list of at least two factors", f)
    if f.annotations or f.kind == "thread_binding":
        raise sch.error("split/annotated-loop", f"loop '{f.loop_var.name}' has annotations or "
                        "a thread binding", f)
    nones = [i for i, x in enumerate(factors) if x is None]
    if len(nones) > 1:
        raise sch.error("split/several-none", "at most one factor may be None", f)
    vals = []
    for x in factors:
        if x is None:
            vals.append(None)
            continue
        if isinstance(x, E.IntImm):
            x = x.value
        if not isinstance(x, int) or isinstance(x, bool):
            raise sch.error("split/bad-factors", f"factor {x!r} is not an integer", f)
        if x <= 0:
            raise sch.error("split/non-positive-factor",
                            f"factor {x} of loop '{f.loop_var.name}' is not positive", f)
        vals.append(x)
    if not isinstance(f.extent, E.IntImm):
        raise sch.error("split/symbolic-extent", f"loop '{f.loop_var.name}' has a non-constant "
                        "extent", f)
    extent = f.extent.value
    known = 1
    for x in vals:
        if x is not None:
            known *= x
    if nones:
        vals[nones[0]] = -(-extent // known)
    elif known < extent:
        raise sch.error("split/factors-too-small",
                        f"the factors {list(vals)} multiply to {known}, less than the extent "
                        f"{extent} of loop '{f.loop_var.name}'", f)
    total = 1
    for x in vals:
        total *= x
    dt = f.loop_var.dtype
    new_vars = [E.Var(f"{f.loop_var.name}_{k}", dt, None, f.loop_var.span)
                for k in range(len(vals))]
    # var = min + sum(v_k * stride_k)
    expr = None
    stride = 1
    for v, x in zip(reversed(new_vars), reversed(vals)):
        term = v if stride == 1 else E.Mul(v, common.int32(stride, dt), dt)
        expr = term if expr is None else E.Add(term, expr, dt)
        stride *= x
    full = expr if common.is_zero(f.min) else E.Add(f.min, expr, dt)
    body = _ir.substitute(f.body, {id(f.loop_var): full})
    if total != extent:
        body = _add_predicate(body, E.LT(expr, f.extent, "bool"))
    loops = [common.new_loop(v, x, None, span=f.span) for v, x in zip(new_vars, vals)]
    loops[0] = dataclasses.replace(loops[0], comments=f.comments, trailing=f.trailing)
    new = common.nest(loops, body)
    outer = [a for a in ancestors if isinstance(a, type(f))]
    fold = () if preserve_unit_iters else {id(v) for v in new_vars}
    new = common.simplify_bindings(new, outer, fold, touched={id(v) for v in new_vars})
    sch.replace(loop.func, f, new)
    return [sch.loop_of(loop.func, lp) for lp in loops]


def _add_predicate(body, cond):
    from ...ir import stmt as S

    def fn(y, x):
        if isinstance(y, S.BlockRealize):
            return dataclasses.replace(y, predicate=common.and_(y.predicate, cond))
        if isinstance(y, S.Block):
            return None
        return None
    # only the outermost block realizes under the loop get the predicate
    out = []

    def go(x):
        if isinstance(x, S.BlockRealize):
            out.append(x)
            return
        if isinstance(x, tuple):
            for y in x:
                go(y)
            return
        for fld in _ir._STMT_FIELDS.get(type(x), ()):
            go(getattr(x, fld))
    go(body)
    return _ir.replace_nodes(body, {id(r): dataclasses.replace(
        r, predicate=common.and_(r.predicate, cond)) for r in out})
