"""The tensorization sketch: a reduction block mapped onto a tensor intrinsic of this CPU by
`auto_tensorize`, then tiled around the instruction.

    sketches = tensorize_sketches(module, "gemm")     # one per intrinsic that serves a block

After `auto_tensorize` (padding, packing, blockize, tensorize: the mapping's choice) the
tensorized block's own loops are tiled as MetaSchedule tiles around a tensor core, in three
spatial levels and one reduction level, ordered S0 S1 R S2: S2 is the register tile (each of
its iterations keeps one instruction's accumulator in a register: its product is at most
`MAX_ACCUMULATORS`), S1 the cache tile, S0 the outer loops (fused and parallel, a
decision). The reduction's init is decomposed at R and its tile zeroed by unrolled vector
stores, so the accumulators start as zeroed registers; the S2 loops are unrolled.  The
decisions are the perfect tile sizes and the parallel switch; mutations move a prime factor
between two levels of one loop or flip the switch.
"""
from __future__ import annotations

import dataclasses

from ..schedule import Schedule, ScheduleError
from .nest import tileable_loops
from .tiles import FirstChoice, mutate_tiles, sample_tiles

LEVELS = 3                  # S0 S1 S2
MAX_ACCUMULATORS = 16       # instruction results kept in registers (32 zmm: the rest for operands)


@dataclasses.dataclass
class TensorizedSketch:
    func: str
    block: str
    intrin: str
    label: str
    loops: tuple                      # nest.Loop per loop of the tensorized block
    inline: tuple = ()                # producer blocks to inline first

    @property
    def name(self) -> str:
        return f"tensorize {self.block} with {self.label}, tiled S S R S"

    def _spatial(self):
        return [lp.extent for lp in self.loops if lp.kind == "S"]

    def sample(self, rng) -> dict:
        tiles, budget = [], MAX_ACCUMULATORS
        for n in reversed(self._spatial()):        # the innermost loop picks its tile first
            t = sample_tiles(n, LEVELS, min(budget, n), rng)
            budget = max(1, budget // t[-1])
            tiles.append(t)
        return {"tiles": tiles[::-1], "par": int(rng.integers(0, 2))}

    def mutate(self, d: dict, rng) -> dict:
        d = {"tiles": [list(t) for t in d["tiles"]], "par": d["par"]}
        if rng.random() < 0.8 and d["tiles"]:
            i = int(rng.integers(0, len(d["tiles"])))
            d["tiles"][i] = mutate_tiles(d["tiles"][i], MAX_ACCUMULATORS, rng)
        else:
            d["par"] = 1 - d["par"]
        return d

    def apply(self, module, d: dict) -> Schedule:
        register = 1
        for t in d["tiles"]:
            register *= t[-1]
        if register > MAX_ACCUMULATORS:
            raise ScheduleError("tune", "sketch", f"a register tile of {register} "
                                f"accumulators (at most {MAX_ACCUMULATORS})")
        sch = Schedule(module, self.func)
        for name in self.inline:
            sch.compute_inline(sch.get_block(name))
        ob = sch.auto_tensorize(sch.get_block(self.block), self.intrin)
        loops = sch.get_loops(ob)[-len(self.loops):]
        levels = [[] for _ in range(LEVELS)]
        reduce = []
        tiles = iter(d["tiles"])
        for lp, info in zip(loops, self.loops):
            if info.kind == "R":
                reduce.append(lp)
                continue
            for level, part in zip(levels, sch.split(lp, list(next(tiles)))):
                level.append(part)
        sch.reorder(*(levels[0] + levels[1] + reduce + levels[2]))
        if d["par"]:
            sch.parallel(sch.fuse(*levels[0]) if len(levels[0]) > 1 else levels[0][0])
        if reduce:
            init = sch.decompose_reduction(ob, reduce[0])
            for lp in sch.get_loops(init)[-len(levels[2]):]:
                sch.unroll(lp)
            inner = sch.get_loops(sch.get_block(f"{self.block}_init"))[-1]
            sch.vectorize(inner)
        for lp in levels[2]:
            sch.unroll(lp)
        return sch


def tensorize_sketches(module, func_name: str, target=None, inline=(), blocks=()) -> list:
    """One sketch per intrinsic of the target (this CPU by default) that serves one of
    `blocks` (reduction blocks) after `inline`, each one checked to apply.  An intrinsic
    with a caveat (the `vpmaddubsw` forms saturate pair sums) is left out: a tuned kernel
    must compute what the kernel does for every input."""
    from ..tensorize.suggest import block_mappings
    out = []
    for name in blocks:
        base = Schedule(module, func_name)
        for n in inline:
            base.compute_inline(base.get_block(n))
        ok, _ = block_mappings(base.get(base.get_block(name)), target)
        for m in ok:
            if m.intrin.caveat:         # its results differ from the kernel's for some inputs
                continue
            trial = base.copy()
            try:
                ob = trial.auto_tensorize(trial.get_block(name), m.intrin.name)
            except ScheduleError:
                continue
            loops = tileable_loops(trial, ob)
            if loops is None or not any(lp.kind == "S" for lp in loops):
                continue
            sk = TensorizedSketch(func_name, name, m.intrin.name, m.intrin.label,
                                  loops, tuple(inline))
            try:
                sk.apply(module, sk.sample(FirstChoice()))
            except ScheduleError:
                continue
            out.append(sk)
    return out


__all__ = ["TensorizedSketch", "tensorize_sketches", "MAX_ACCUMULATORS"]
