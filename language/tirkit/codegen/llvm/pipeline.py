"""Which LLVM pipeline a kernel gets, and the pipelines measured against each other.

    choose(func)                # -> Pipeline(level, vectorize, unroll), for func as written
    FULL                        # O3 with loop and SLP vectorization and loop unrolling
    build(func, module, pipeline=NO_UNROLL)     # another pipeline, on request

Measured side by side (`benchmarks/bench_codegen.py` compares the chosen pipeline with
`FULL` in every run; the choice below comes from runs of the same comparison over O1, O2,
O3 and O3 without the unroller, CPU time, one thread, on a znver4 host without AVX-512):

- O2 and O1 cost as much compile time as O3 (within 5%); O1 ran `matmul_1024` and
  `scheduled_matmul_cpu` 1.8x slower.
- LLVM's general loop unroller is the one costly part of O3 (conv2d: about 180 ms with it,
  85 ms without; 10-20% elsewhere), and it pays at run time: without it
  `scheduled_matmul_cpu` ran 2.6-2.9x slower (its rolled loops around a vector body), the
  plain `matmul` 1.27-1.35x, conv2d 1.07x, softmax 1.03x; for the two 1024^3 schedules,
  which unroll by themselves, the difference stayed within the noise of a busy machine.

So every kernel gets `FULL`: a cheaper pipeline would have to give up run time.  Where the
compile time goes instead is in the benchmark's breakdown (lowering, IR generation, LLVM).
"""
from __future__ import annotations

from dataclasses import dataclass

from ...ir import stmt as S


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


def choose(func: S.PrimFunc) -> Pipeline:
    """The pipeline for a function as written: `FULL` (see the module docstring for the
    measurements behind it).  The one place to change when a cheaper pipeline is shown to
    keep some class of kernels as fast."""
    return FULL


__all__ = ["Pipeline", "FULL", "NO_UNROLL", "choose"]
