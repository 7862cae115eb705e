"""What the code generator and LLVM make of the loops closest to a store: the loops that
become straight-line code, the loop left innermost, whether LLVM vectorizes that loop or
packs the straight-line stores (SLP), and where a reduction keeps its running value.

    b = inner(loops, accesses, store, rmw, unroll_count)   # an Inner; b.features() -> {...}

`loops` is [(For, extent)] from the outermost to the store; `accesses` [(form, element
bytes, elements)] as in `tirkit.cost.locality`, the stored buffer first; `store` the form of
the stored buffer; `rmw` whether the store reads the element it writes (a reduction update);
`unroll_count` the count the kernel's pipeline hints on innermost rolled loops
(`pipeline.choose(func).unroll_count`: 0 for `NO_UNROLL`).

The rules follow the pipeline the code generator chooses (codegen/llvm/pipeline.py), checked
against the assembly LLVM emits for it (tests/cost/test_cost_features.py):
- a `T.unroll` loop of at most `MAX_UNROLL` iterations becomes straight-line code before LLVM
  sees it (codegen/passes/unroll.py); a `T.vectorize` loop becomes vector code of its
  extent; a unit loop disappears. LLVM's general unroller is off, so a serial loop stays a
  loop, except the innermost one when it carries a reduction or holds vector code: under
  the `HINTED` pipeline it gets an unroll count (`unroll_count`), which unrolls it fully
  when its trip count is no larger. A kernel whose every innermost serial loop holds a
  `T.unroll` loop gets `NO_UNROLL`, and no loop of it a count;
- LLVM's loop vectorizer widens the loop left innermost (the kept loop) when its body is
  scalar, it runs at least `MIN_AUTO` iterations and it does not carry a float reduction
  (without fast-math LLVM does not reorder one); its width is counted in `VECTOR_BYTES`
  of elements (Zen 4 executes a wider vector instruction as 256-bit halves; a wider
  `T.vectorize` loop is counted in such halves too). An access with a larger stride along
  it does not stop it: LLVM gathers the loads and scatters the stores (`gathers`: their
  lanes per run of the body, explicit vector code included);
- otherwise the SLP vectorizer packs the straight-line copies of a store to neighbouring
  elements (`VECTOR_BYTES` of them at most), when every access walks that unrolled loop with
  stride 0 or 1;
- a reduction over the kept loop keeps its accumulators in registers (one dependent add per
  iteration of the kept loop); one over a loop further out keeps them in memory, each update
  a store and a reload of the element.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..codegen.llvm.pipeline import HINTED
from ..codegen.passes.unroll import MAX_UNROLL
from ..ir import expr as E
from .locality import lg, stride, varies

VECTOR_BYTES = 32          # a vector instruction as the machine the model is trained on
                           # executes it: Zen 4 runs a 512-bit one as two 256-bit halves on
                           # its 256-bit load, store and float pipes, so the estimate counts
                           # vector code in 256-bit instructions (8 floats)
MIN_AUTO = 4               # a loop shorter than this gets no vector loop

NAMES = ["llvm.unrolled", "llvm.vector_lanes", "llvm.auto_lanes", "llvm.slp_lanes",
         "llvm.lanes", "llvm.kept_extent", "llvm.kept_parallel", "llvm.register_reduction",
         "llvm.memory_reduction", "llvm.accumulators", "llvm.body_ops", "llvm.body_loads",
         "llvm.body_gathers", "llvm.body_runs"]


@dataclass
class Inner:
    body: list                 # positions of the loops that become straight-line/vector code
    kept: int                  # position of the loop left innermost (-1: none)
    unrolled: int              # iterations of the body's unrolled loops
    lanes: int                 # iterations of its `T.vectorize` loops
    auto: int                  # the loop vectorizer's width on the kept loop (0: not widened)
    slp: int                   # lanes the SLP vectorizer packs (0: none)
    width: int                 # elements per vector instruction of the body (1: scalar)
    elements: int              # store executions per run of the body
    register_reduction: bool   # the kept loop carries the store's running value in registers
    memory_reduction: int      # position of the loop carrying it through memory (-1: none)
    accumulators: int          # independent running values in the body
    loads: float               # load instructions per run of the body
    gathers: float = 0.0       # of them, lanes of gathers (and scatters) of a vector body

    def features(self, loops) -> dict:
        return {"llvm.unrolled": lg(self.unrolled), "llvm.vector_lanes": lg(self.lanes),
                "llvm.auto_lanes": lg(self.auto), "llvm.slp_lanes": lg(self.slp),
                "llvm.lanes": lg(self.width),
                "llvm.kept_extent": lg(loops[self.kept][1] if self.kept >= 0 else 0),
                "llvm.kept_parallel": float(self.kept >= 0
                                            and loops[self.kept][0].kind == "parallel"),
                "llvm.register_reduction": float(self.register_reduction),
                "llvm.memory_reduction": float(self.memory_reduction >= 0),
                "llvm.accumulators": lg(self.accumulators),
                "llvm.body_ops": lg(self.elements / self.width),
                "llvm.body_loads": lg(self.loads),
                "llvm.body_gathers": lg(self.gathers),
                "llvm.body_runs": lg(runs(loops) / self.elements)}


def runs(loops) -> int:
    """Executions of a body inside `loops` ([(For, extent)]): the product of the extents."""
    return math.prod(e for _, e in loops)


def _distinct(form, positions, loops) -> int:
    """Elements of the buffer the loops at `positions` reach."""
    n = 1
    for i in positions:
        if varies(form, i):
            n *= loops[i][1]
    return n


def _gathered(form, lane_loop, body, loops) -> bool:
    """Whether the vector instructions of an access are gathers (scatters for a store): it
    moves across the lanes (stride other than 0 and 1, or not affinely) and the other loops
    of the body do not fill the gap between two lanes, as the copies of an unrolled loop
    over the next 8 elements fill a stride of 8 (LLVM then loads the group whole and
    shuffles it)."""
    s = stride(form, lane_loop)
    if s == 0:
        return False
    if s is None:
        return True
    return _distinct(form, [i for i in body if i != lane_loop], loops) < s


def inner(loops, accesses, store, rmw, unroll_count=HINTED.unroll_count) -> Inner:
    eb = accesses[0][1] if accesses else 4
    per_vector = max(1, VECTOR_BYTES // eb)
    lanes = unrolled = 1
    body: list = []
    hinted = False
    k = len(loops) - 1
    while k >= 0:
        f, e = loops[k]
        constant = isinstance(f.extent, E.IntImm)
        if e == 1 and f.kind != "parallel":
            pass
        elif f.kind == "vectorized":
            lanes *= e
        elif f.kind == "unrolled" and constant and e <= MAX_UNROLL:
            unrolled *= e
        elif f.kind == "serial" and constant and not hinted and e <= unroll_count \
                and (not varies(store, k) or lanes > 1):
            unrolled *= e
            hinted = True
        else:
            break
        body.append(k)
        k -= 1
    auto = slp = 0
    reduction = False
    if k >= 0:
        e = loops[k][1]
        reduction = rmw and not varies(store, k)
        if lanes == 1 and not reduction and e >= MIN_AUTO:
            auto = min(per_vector, 1 << int(math.log2(e)))
    slp_loop = None
    if lanes == 1 and not auto:
        for i in body:
            if stride(store, i) == 1 and loops[i][1] > 1:
                if all(stride(a[0], i) in (0, 1) for a in accesses):
                    slp, slp_loop = min(per_vector, loops[i][1]), i
                break
    width = min(lanes, per_vector) if lanes > 1 else (auto or slp or 1)
    # the loop whose iterations share a vector instruction
    lane_loop = next((i for i in body if loops[i][0].kind == "vectorized"), None) \
        if lanes > 1 else (k if auto else slp_loop)
    loads = gathers = 0.0
    for a in accesses:
        if k >= 0 and not varies(a[0], k):
            continue                   # LLVM hoists it out of the kept loop
        n = _distinct(a[0], body, loops) * (auto or 1)
        # a vector load per `width` elements walked with stride 1; otherwise one load (a
        # broadcast, or a lane of a gather) per element
        contiguous = lane_loop is not None and stride(a[0], lane_loop) == 1
        loads += n / width if contiguous else n
        if width > 1 and lane_loop is not None and not contiguous \
                and _gathered(a[0], lane_loop, body, loops):
            gathers += n
    memory = -1
    if rmw and not reduction and k >= 0:
        memory = next((i for i in range(k - 1, -1, -1)
                       if not varies(store, i) and loops[i][1] > 1), -1)
    acc = max(1, _distinct(store, body, loops)) if reduction else 0
    return Inner(body=body, kept=k, unrolled=unrolled, lanes=lanes, auto=auto, slp=slp,
                 width=width, elements=unrolled * lanes * (auto or 1),
                 register_reduction=reduction, memory_reduction=memory, accumulators=acc,
                 loads=loads, gathers=gathers)


__all__ = ["Inner", "inner", "NAMES", "VECTOR_BYTES", "runs"]
