"""parallel, vectorize, unroll: change a loop's kind.

Refused for parallel and vectorize: a loop that feeds a reduction iterator of a block under
it, does not start at zero, or whose iterations (lanes) touch one element, one writing, in
an order the new kind does not keep (verify/parallel_race.py, verify/vector_dependence.py)."""
from __future__ import annotations

import dataclasses

from ...ir import expr as E
from ..analysis import binding_uses, check_independent, realizes_under
from ..registry import primitive


def check_no_reduction(sch, f, what):
    for r in realizes_under(f.body):
        ivs = binding_uses(r, f.loop_var, ("R", "C", "O"))
        if ivs:
            iv = ivs[0]
            kind = {"R": "reduction", "C": "scan", "O": "opaque"}[iv.kind]
            raise sch.error(f"{what}/feeds-reduction",
                            f"loop '{f.loop_var.name}' feeds the {kind} iterator "
                            f"'{iv.var.name}' of block '{r.block.name_hint}'", f,
                            [(r.block, "block")])


def _set_kind(sch, loop, kind, what):
    f, _ = sch.loop_info(loop)
    new = dataclasses.replace(f, kind=kind, thread_tag=None)
    if kind in ("parallel", "vectorized"):
        check_no_reduction(sch, f, what)
        if not (isinstance(f.min, E.IntImm) and f.min.value == 0):
            raise sch.error(f"{what}/nonzero-min", f"loop '{f.loop_var.name}' does not start "
                            "at zero", f)
        check_independent(sch, sch.func(loop.func), f, new, [new], what)
    sch.replace(loop.func, f, new)


@primitive("parallel")
def parallel(sch, loop):
    """Run the iterations of `loop` in parallel (CPU threads)."""
    _set_kind(sch, loop, "parallel", "parallel")


@primitive("vectorize")
def vectorize(sch, loop):
    """Vectorize `loop`."""
    _set_kind(sch, loop, "vectorized", "vectorize")


@primitive("unroll")
def unroll(sch, loop):
    """Unroll `loop`."""
    _set_kind(sch, loop, "unrolled", "unroll")


@primitive("serial")
def serial(sch, loop):
    """Run `loop` serially again (a tirkit addition; TVM has no primitive for it): the quick
    fix for a parallel, vectorized or thread-bound loop that feeds a reduction."""
    f, _ = sch.loop_info(loop)
    if f.kind == "serial":
        return
    sch.replace(loop.func, f, dataclasses.replace(f, kind="serial", thread_tag=None))
