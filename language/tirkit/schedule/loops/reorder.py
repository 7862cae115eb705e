"""reorder: permute loops of one nest.

    sch.reorder(k, i, j)

The given loops must lie on one path of singly nested loops; they take the given order and
the loops between them keep their places. Refused: repeated loops, loops on different
branches or with several statements between them, blocks under them with scan/opaque
iterators bound to the moved loops or with non-affine bindings, extents that depend on
another moved loop, a loop whose iterations run at once (parallel, vectorized, bound to
blockIdx or threadIdx) moved out of a loop so that two of them would touch one element, one
writing (`parallel`'s check)."""
from __future__ import annotations

import dataclasses

from ...ir import stmt as S
from .. import _ir
from ..analysis import check_independent, is_affine, realizes_under, runs_at_once
from ..registry import primitive


@primitive("reorder")
def reorder(sch, *ordered_loops):
    if not ordered_loops:
        raise sch.error("reorder/bad-arguments", "reorder takes at least one loop")
    fors = [sch.loop_info(rv)[0] for rv in ordered_loops]
    seen = set()
    for f in fors:
        if id(f) in seen:
            raise sch.error("reorder/repeated-loop", f"loop '{f.loop_var.name}' is given twice", f)
        seen.add(id(f))
    if len(fors) == 1:
        return None
    func = ordered_loops[0].func
    ix = sch.index(func)
    depth = {id(f): len(ix.loops[id(f.loop_var)][1]) for f in fors}
    top = min(fors, key=lambda f: depth[id(f)])
    bottom = max(fors, key=lambda f: depth[id(f)])
    # walk from the top down to the bottom loop: a path of singly nested loops
    chain = [top]
    cur = top
    while cur is not bottom:
        nxt = cur.body
        if not isinstance(nxt, S.For):
            kids = _ir.child_stmts(cur)
            on_path = [f for f in fors if any(_contains(k, f) for k in kids)]
            if len(kids) > 1 and on_path:
                raise sch.error("reorder/not-single-branch",
                                f"loop '{cur.loop_var.name}' has {len(kids)} statements in its "
                                "body between the loops to reorder", cur)
            raise sch.error("reorder/not-one-nest", "the loops are not on one path of nested "
                            "loops", fors[-1], [(top, "outer loop")])
        chain.append(nxt)
        cur = nxt
    for f in fors:
        if not any(f is c for c in chain):
            raise sch.error("reorder/not-one-nest", f"loop '{f.loop_var.name}' is not nested "
                            f"in loop '{top.loop_var.name}'", f, [(top, "outer loop")])
    moved = {id(f.loop_var) for f in fors}
    for r in realizes_under(bottom.body):
        for iv, v in zip(r.block.iter_vars, r.iter_values):
            uses = [f for f in fors if _ir.uses_var(v, f.loop_var)]
            if not uses:
                continue
            if iv.kind not in ("S", "R"):
                raise sch.error("reorder/scan-iterator",
                                f"block '{r.block.name_hint}' binds its "
                                f"{'scan' if iv.kind == 'C' else 'opaque'} iterator "
                                f"'{iv.var.name}' to loop '{uses[0].loop_var.name}'",
                                r.block, [(uses[0], "loop")])
            if not is_affine(v):
                raise sch.error("reorder/non-affine", f"block '{r.block.name_hint}' binds "
                                f"'{iv.var.name}' by a non-affine expression of the loops",
                                r.block, [(uses[0], "loop")])
    for f in chain:
        for g in chain:
            if g is not f and id(g.loop_var) in moved and id(f.loop_var) in moved and \
                    (_ir.uses_var(f.extent, g.loop_var) or _ir.uses_var(f.min, g.loop_var)):
                raise sch.error("reorder/dependent-extent", f"the extent of loop "
                                f"'{f.loop_var.name}' depends on loop '{g.loop_var.name}'", f)
    it = iter(fors)
    order = [next(it) if id(c.loop_var) in moved else c for c in chain]
    body = bottom.body
    for f in reversed(order):
        body = dataclasses.replace(f, body=body)
    # a loop whose iterations run at once, moved out of a loop that ran them in turn, must
    # not then have two of them meet
    out_of = {}
    for k, c in enumerate(order):
        was_above = chain[:next(n for n, x in enumerate(chain) if x is c)]
        left = [x for x in was_above if not any(x is y for y in order[:k])]
        if left and runs_at_once(c):
            out_of[id(c.loop_var)] = left[0]
    check_independent(sch, sch.func(func), top, body, [c for c in order
                                                          if id(c.loop_var) in out_of],
                      "reorder", lambda x: f"loop '{x.loop_var.name}' moved out of loop "
                      f"'{out_of[id(x.loop_var)].loop_var.name}'")
    sch.replace(func, top, body)
    return None


def _contains(stmt, f):
    return any(s is f for s in _ir.stmts(stmt))
