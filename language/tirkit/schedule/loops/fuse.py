"""fuse: directly nested loops into one.

    ij = sch.fuse(i, j)

Refused: loops that are not directly nested (the body of each is exactly the next one),
an inner loop whose extent depends on an outer one, a repeated loop, a loop with
annotations or a thread binding."""
from __future__ import annotations

import dataclasses

from ...ir import expr as E
from ...ir import stmt as S
from .. import _common as common
from .. import _ir
from ..registry import primitive


def _one(e):
    return isinstance(e, E.IntImm) and e.value == 1


def _mul(a, b, dt):
    if isinstance(a, E.IntImm) and isinstance(b, E.IntImm):
        return common.int32(a.value * b.value, dt)
    if _one(a):
        return b
    return E.Mul(a, b, dt)


@primitive("fuse")
def fuse(sch, *loops, preserve_unit_iters=True):
    if len(loops) < 2:
        if len(loops) == 1:
            return loops[0]
        raise sch.error("fuse/bad-arguments", "fuse takes at least one loop")
    fors = [sch.loop_info(rv)[0] for rv in loops]
    ancestors = sch.loop_info(loops[0])[1]
    for a, b in zip(fors, fors[1:]):
        if a is b:
            raise sch.error("fuse/repeated-loop", f"loop '{a.loop_var.name}' is given twice", a)
        if a.body is not b:
            raise sch.error("fuse/not-directly-nested",
                            f"loop '{b.loop_var.name}' is not the only statement in the body "
                            f"of loop '{a.loop_var.name}'", b, [(a, "outer loop")])
    for f in fors:
        if f.annotations or f.kind == "thread_binding":
            raise sch.error("fuse/annotated-loop", f"loop '{f.loop_var.name}' has annotations "
                            "or a thread binding", f)
    outer_vars = []
    for f in fors:
        for v in outer_vars:
            if _ir.uses_var(f.extent, v) or _ir.uses_var(f.min, v):
                raise sch.error("fuse/dependent-extent",
                                f"the extent of loop '{f.loop_var.name}' depends on loop "
                                f"'{v.name}'", f)
        outer_vars.append(f.loop_var)
    dt = fors[0].loop_var.dtype
    name = "_".join(f.loop_var.name for f in fors) + "_fused"
    fused = E.Var(name, dt, None, fors[0].loop_var.span)
    total = common.int32(1, dt)
    for f in fors:
        total = _mul(total, f.extent, dt)
    vmap = {}
    stride = common.int32(1, dt)
    for k in range(len(fors) - 1, -1, -1):
        f = fors[k]
        e = fused if _one(stride) else E.FloorDiv(fused, stride, dt)
        if k > 0:
            e = E.FloorMod(e, f.extent, dt)
        if not (isinstance(f.min, E.IntImm) and f.min.value == 0):
            e = E.Add(f.min, e, dt)
        vmap[id(f.loop_var)] = e
        stride = _mul(stride, f.extent, dt)
    body = _ir.substitute(fors[-1].body, vmap)
    new = common.new_loop(fused, total, body, span=fors[0].span)
    new = dataclasses.replace(new, comments=fors[0].comments, trailing=fors[0].trailing)
    outer = [a for a in ancestors if isinstance(a, S.For)]
    # a fused loop of extent 1 is folded away (as TVM does), whatever preserve_unit_iters says
    unit = isinstance(total, E.IntImm) and total.value == 1
    new = common.simplify_bindings(new, outer, () if preserve_unit_iters and not unit
                              else {id(fused)})
    sch.replace(loops[0].func, fors[0], new)
    return sch.loop_of(loops[0].func, new)
