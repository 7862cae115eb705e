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

The unroller pays where a loop is left rolled around a small body: a scalar innermost loop
(partial unrolling lets consecutive iterations overlap), or a loop around one vector statement
(`matmul_1024_avx2`'s packing loop: 1.11-1.15x slower without it, in the same run).  Where the
schedule unrolled every innermost rolled loop's body itself (`matmul_1024`: each `k` and `i_0`
loop holds a `T.unroll` nest of vector statements), the unroller finds nothing worth doing
(run time 0.97-1.03x, compile time 10% less): such functions get `NO_UNROLL`, all others
`FULL`.  Where the rest of the compile time goes is in the benchmark's breakdown (lowering,
IR generation, LLVM optimization and machine code).
"""
from __future__ import annotations

from dataclasses import dataclass

from ...ir import stmt as S
from ...ir.visit import find_first, walk


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
    """The pipeline for a function as written: `NO_UNROLL` when every innermost rolled loop
    (serial, holding no other rolled loop) holds an explicitly unrolled loop, else `FULL`
    (see the module docstring for the measurements behind it)."""
    rolled = _innermost_rolled(func.body)
    if rolled and all(find_first(lp.body, lambda x: x.kind == "unrolled", S.For) is not None
                      for lp in rolled):
        return NO_UNROLL
    return FULL


def _innermost_rolled(body) -> list:
    """Serial loops with no serial loop inside them."""
    out = []

    def fn(x):
        if isinstance(x, S.For) and x.kind == "serial" and \
                find_first(x.body, lambda y: y.kind == "serial", S.For) is None:
            out.append(x)
            return False
        return True
    walk(body, fn)
    return out


__all__ = ["Pipeline", "FULL", "NO_UNROLL", "choose"]
