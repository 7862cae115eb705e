"""bind: bind a loop to a GPU thread axis (`blockIdx.x`, `threadIdx.y`, `vthread.x`...).

Refused: an unknown axis, a loop that feeds a reduction iterator unless the axis is a
`threadIdx` (cross-thread reduction), a loop that does not start at zero, a loop bound to
`blockIdx` or `threadIdx` whose iterations, the grid's thread blocks or one block's
threads, would touch one element of global storage, one writing (the race rule's witness,
as `parallel` refuses; TVM puts barriers between a block's threads only for shared
memory; a block the threads share out is not read: a cross-thread reduction's, whose
reduction iterator the loop feeds, or one marked `auto_copy`)."""
from __future__ import annotations

import dataclasses

from ...ir import expr as E
from ..analysis import binding_uses, check_independent, realizes_under
from ..registry import primitive

AXES = {f"{p}.{a}" for p in ("blockIdx", "threadIdx", "vthread") for a in "xyz"} | {"vthread"}


@primitive("bind")
def bind(sch, loop, thread_axis):
    f, _ = sch.loop_info(loop)
    if thread_axis not in AXES:
        raise sch.error("bind/unknown-axis", f"'{thread_axis}' is not a thread axis", f)
    if not (isinstance(f.min, E.IntImm) and f.min.value == 0):
        raise sch.error("bind/nonzero-min", f"loop '{f.loop_var.name}' does not start at zero",
                        f)
    for r in realizes_under(f.body):
        ivs = binding_uses(r, f.loop_var, ("R", "C", "O"))
        if ivs and not (ivs[0].kind == "R" and thread_axis.startswith("threadIdx")):
            iv = ivs[0]
            raise sch.error("bind/feeds-reduction",
                            f"loop '{f.loop_var.name}' feeds the "
                            f"{'reduction' if iv.kind == 'R' else 'scan'} iterator "
                            f"'{iv.var.name}' of block '{r.block.name_hint}' and cannot be "
                            f"bound to '{thread_axis}'", f, [(r.block, "block")])
    new = dataclasses.replace(f, kind="thread_binding", thread_tag=thread_axis)
    check_independent(sch, sch.func(loop.func), f, new, [new], "bind")
    sch.replace(loop.func, f, new)
