"""What LLVM makes of the loops closest to a store: the small loops it unrolls away, the loop
it keeps innermost, whether it can vectorize that loop itself, and the register tile the
unrolled body forms.

    f = inner(loops, accesses, store)    # {name: value} for the names in NAMES

`loops` is [(For, extent)] from the outermost to the store; `accesses` [(form, element
bytes, elements)] as in `tirkit.cost.locality`, `store` the form of the stored buffer.

The model needs this because on the CPU the fastest schedule of most workloads does not
vectorize explicitly: LLVM's full unrolling removes small inner loops of known trip count
(O3's threshold is about 300 instructions, some 32 iterations of a store's body), then its
loop vectorizer vectorizes the innermost loop that remains when every access is contiguous
along it or does not move with it, and its SLP vectorizer packs unrolled stores to
neighbouring elements. A reduction whose stored element does not move with the kept loop
keeps its accumulators in registers across it. The rule here is that sequence, read off the
loop nest; it is a model of the compiler, not the compiler.
"""
from __future__ import annotations

from ..ir import expr as E
from .locality import lg, stride, varies, walk_kinds

FULL_UNROLL = 32           # iterations of a body LLVM unrolls fully (O3, a store's body)
MIN_AUTO = 4               # a loop shorter than this is not worth a vector loop

NAMES = ["llvm.unrolled", "llvm.vector_lanes", "llvm.kept_extent", "llvm.kept_parallel",
         "llvm.kept_contiguous", "llvm.kept_invariant", "llvm.kept_strided",
         "llvm.kept_store_invariant", "llvm.auto_vector", "llvm.slp_lanes",
         "llvm.accumulators", "llvm.body_ops", "llvm.body_loads", "llvm.body_intensity"]


def _distinct(form, positions, loops):
    """Elements of the buffer the loops at `positions` reach."""
    n = 1
    for i in positions:
        if varies(form, i):
            n *= loops[i][1]
    return n


def inner(loops, accesses, store) -> dict:
    out = dict.fromkeys(NAMES, 0.0)
    lanes, unrolled, body = 1, 1, []          # body: positions inside the kept loop
    k = len(loops) - 1
    while k >= 0:
        f, e = loops[k]
        constant = isinstance(f.extent, E.IntImm)
        if f.kind == "vectorized":
            lanes *= e
        elif f.kind == "unrolled" or (f.kind == "serial" and constant
                                      and unrolled * e <= FULL_UNROLL):
            unrolled *= e
        else:
            break
        body.append(k)
        k -= 1
    out["llvm.unrolled"] = lg(unrolled)
    out["llvm.vector_lanes"] = lg(lanes)
    # SLP: the innermost unrolled scalar loop the store walks with stride 1
    if lanes == 1:
        for i in body:
            if stride(store, i) == 1 and loops[i][1] > 1:
                out["llvm.slp_lanes"] = lg(loops[i][1])
                break
    moving = accesses
    if k >= 0:
        f, e = loops[k]
        out["llvm.kept_extent"] = lg(e)
        out["llvm.kept_parallel"] = float(f.kind == "parallel")
        cont, inv, strided = walk_kinds(loops, accesses, k)
        moving = [a for a in accesses if varies(a[0], k)]
        out["llvm.kept_contiguous"], out["llvm.kept_invariant"] = cont, inv
        out["llvm.kept_strided"] = strided
        store_inv = not varies(store, k)
        out["llvm.kept_store_invariant"] = float(store_inv)
        out["llvm.auto_vector"] = float(lanes == 1 and f.kind == "serial" and strided == 0
                                        and e >= MIN_AUTO)
        if store_inv:
            out["llvm.accumulators"] = lg(_distinct(store, body, loops))
    ops = unrolled * lanes
    loads = sum(_distinct(a[0], body, loops) for a in moving)
    out["llvm.body_ops"] = lg(ops)
    out["llvm.body_loads"] = lg(loads)
    out["llvm.body_intensity"] = lg(ops / max(1, loads))
    return out
