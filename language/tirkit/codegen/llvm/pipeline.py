"""Which LLVM pipeline a kernel gets: the full O3 pipeline only where it pays.

    choose(func)                # -> Pipeline(level, vectorize, unroll), for func as written
    FULL                        # O3 with loop and SLP vectorization and loop unrolling

LLVM's general loop unroller is the costly part of O3 for these kernels, and it pays only
in one situation (measured by `benchmarks/bench_codegen.py`, which times both pipelines side
by side, compile and run):

- a schedule that vectorized a loop but left the loops around it rolled (`scheduled_matmul_cpu`:
  a 16-lane body inside short serial loops) needs the unroller to keep accumulators in
  registers: without it the kernel ran about 3x slower;
- a schedule that unrolled loops itself (`T.unroll`, carried out by the lowering) already
  chose what to unroll (`matmul_1024_scheduled`), and run time stays the same without it;
- unscheduled scalar loop nests (a plain convolution, softmax, matmul) run as fast without
  general unrolling, which otherwise multiplies their optimisation time (2-3x for conv2d).

Vectorization (loop and SLP) stays on everywhere: it is cheap and plain scalar loops need it.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...ir import stmt as S
from ...ir.visit import walk


@dataclass(frozen=True)
class Pipeline:
    level: int = 3               # LLVM speed level of the default pipeline and of code generation
    vectorize: bool = True       # loop and SLP vectorizers
    unroll: bool = True          # LLVM's general loop unroller (forced hints apply regardless)

    def describe(self) -> str:
        extras = [name for name, on in (("vectorize", self.vectorize), ("unroll", self.unroll))
                  if on]
        return f"O{self.level}" + (f" ({', '.join(extras)})" if extras else "")


FULL = Pipeline()
NO_UNROLL = Pipeline(unroll=False)


def loop_kinds(func: S.PrimFunc) -> set:
    kinds = set()

    def fn(x):
        if isinstance(x, S.For):
            kinds.add(x.kind)
        return True
    walk(func.body, fn)
    return kinds


def choose(func: S.PrimFunc) -> Pipeline:
    """The pipeline for a function as written, before lowering (which carries out `T.unroll`
    itself); see the module docstring for why."""
    kinds = loop_kinds(func)
    if "vectorized" in kinds and "unrolled" not in kinds:
        return FULL
    return NO_UNROLL


__all__ = ["Pipeline", "FULL", "NO_UNROLL", "choose", "loop_kinds"]
