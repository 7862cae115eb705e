"""The search space: sketch rules for the CPU (and, through `gpu.py`, for CUDA targets), as
MetaSchedule writes them, with the random decisions each sketch leaves open.

    sketches = design_space(module, "matmul")     # [Sketch]; every one applies to the module
    d = sketches[0].sample(rng)                   # decisions: JSON-able, e.g. {"tiles": ...}
    sch = sketches[0].apply(module, d)            # a Schedule (its trace replays the sketch)
    d2 = sketches[0].mutate(d, rng)

Rules, in the order a sketch applies them:
- inline: elementwise producers (padding, casts) are inlined into their consumer
  (`compute_inline`), tried on the kernel first and kept only where the primitive accepts.
- multi-level tiling (SSRSRS) of each reduction block whose loops bind its iterators one to
  one: every spatial loop split in 4, every reduction loop in 2, ordered
  S0 S1 R0 S2 R1 S3, with the write-back either through `cache_write` or by an elementwise
  consumer moved under the tiles (`reverse_compute_at`) at level S0 or S1 (a decision).
- parallelize outer: the S0 loops fused and parallel (a decision: on or off).
- vectorize inner: the innermost spatial loop (and the write-back's innermost loop); its
  innermost tile is sampled as a whole number of the CPU's vector registers where the
  extent allows (16 float32 lanes with AVX-512: a ResNet-50 conv2d's search picked an
  8-wide tile and ran at half the speed of its 16- and 32-wide neighbours).
- unroll: the S3 loops other than the vectorized one, innermost first, then the R1 loops,
  are unrolled while the product of unrolled extents stays within a budget sampled from
  MetaSchedule's auto-unroll steps but the largest, 0, 16 or 64 (a decision; 512 made
  conv2d candidates that took up to 60 s to compile).  The S3 loops come first, so the
  accumulators of the register tile stay in registers (R1 unrolled first would spend the
  budget and leave them in memory: a 1024³ GEMM with R1 = 64 ran 3.3x slower).  The S2
  loops stay rolled: unrolled too, a conv2d candidate took up to 2 s to compile and its
  search 114-176 s instead of 79.
- pack (a decision, where the block reads an operand along the vectorized loop's iterator
  in its last dimension, `B[k, j]`): the operand is copied first into panels as wide as
  the vectorized tile (`reindex`, `transform_layout` to `B[j // w, k, j % w]`; see
  `tune/pack.py`), so the register tile reads contiguous runs instead of rows 4 KiB apart.
- the reduction's init is decomposed out of the reduction loops.

A sketch is any object with `name`, `sample(rng)`, `mutate(decisions, rng)` and
`apply(module, decisions) -> Schedule`; `design_space` returns the built-in ones and, for
each intrinsic of this CPU that serves a tiled block, a tensorization sketch
(`tune/tensorized.py`); the search takes extra ones.  For a CUDA target
(`design_space(module, "matmul", "cuda-sm80")`) it returns the GPU sketch instead
(`tune/gpu.py`: SSSRRSRS tiling bound to blockIdx/vthread/threadIdx, shared-memory copies
of the operands fetched by all the threads of a block, a local accumulator), after the
same inlining.
"""
from __future__ import annotations

import dataclasses

from .. import target as targets
from ..analysis.regions import regions_of
from ..schedule import Schedule, ScheduleError
from .gpu import gpu_sketches
from .pack import packable_operands
from .nest import (MAX_INNERMOST, MAX_UNROLLED, Loop, extent_of, is_elementwise, split_levels,
                   tileable_loops, unroll_within, vector_lanes)
from .tensorized import tensorize_sketches
from .tiles import FirstChoice, mutate_tiles, sample_tiles

SPATIAL_LEVELS = 4          # S0 S1 S2 S3
REDUCE_LEVELS = 2           # R0 R1
# MetaSchedule's `pragma_auto_unroll_max_step` choices but its 512: a ResNet-50 conv2d
# candidate unrolled that far took up to 60 s to compile here (64: at most 2.6 s)
UNROLL_STEPS = (0, 16, 64)


def unroll_budget(decision: int) -> int:
    """The unroll budget of an `unroll` decision (1, from databases written before the budget
    was a decision, meant 64)."""
    return MAX_UNROLLED if decision == 1 else int(decision)


@dataclasses.dataclass
class TiledSketch:
    """SSRSRS tiling of one reduction block, its producers inlined, its result written back
    through a cache (`write="cache"`) or by its elementwise consumer (`write="consumer"`)."""
    func: str
    block: str
    loops: tuple                     # Loop per loop of the block, outermost first
    inline: tuple = ()               # producer blocks to inline, in order
    write: str = "cache"             # "cache" | "consumer" | "direct"
    consumer: str | None = None
    lanes: int = 1                   # the vectorized tile is a multiple of it where it can be
    packs: tuple = ()                # Pack per operand the `pack` decision lays out anew

    @property
    def vectorized(self) -> int:
        """The loop whose innermost tile is vectorized: the last spatial one."""
        return _last_spatial(self.loops)

    @property
    def name(self) -> str:
        extra = f", {'+'.join(self.inline)} inlined" if self.inline else ""
        return f"tile {self.block} SSRSRS, write-back {self.write}{extra}"

    # ---- decisions ------------------------------------------------------------------------
    def sample(self, rng) -> dict:
        tiles = []
        for i, lp in enumerate(self.loops):
            levels = SPATIAL_LEVELS if lp.kind == "S" else REDUCE_LEVELS
            tiles.append(sample_tiles(lp.extent, levels, MAX_INNERMOST, rng,
                                      self.lanes if i == self.vectorized else 1))
        d = {"tiles": tiles, "wb": int(rng.integers(0, 2)), "par": int(rng.integers(0, 2)),
             "unroll": UNROLL_STEPS[int(rng.integers(0, len(UNROLL_STEPS)))]}
        if self.packs:
            d["pack"] = int(rng.integers(0, 2))
        return d

    def mutate(self, d: dict, rng) -> dict:
        old, d = d, {"tiles": [list(t) for t in d["tiles"]], "wb": d["wb"], "par": d["par"],
                     "unroll": d["unroll"]}
        if self.packs:
            d["pack"] = old.get("pack", 0)
        if rng.random() < 0.7:
            i = int(rng.integers(0, len(self.loops)))
            d["tiles"][i] = mutate_tiles(d["tiles"][i], MAX_INNERMOST, rng,
                                         self.lanes if i == self.vectorized else 1)
            return d
        switches = ["wb", "par", "unroll"] + (["pack"] if self.packs else [])
        what = switches[int(rng.integers(0, len(switches)))]
        if what == "unroll":
            others = [u for u in UNROLL_STEPS if u != unroll_budget(d["unroll"])]
            d["unroll"] = others[int(rng.integers(0, len(others)))]
        else:
            d[what] = 1 - d[what]
        return d

    # ---- the schedule -----------------------------------------------------------------------
    def apply(self, module, d: dict) -> Schedule:
        width = d["tiles"][self.vectorized][-1]
        packs = self.packs if d.get("pack") and width > 1 else ()

        def prepare(sch, b):
            for p in packs:
                p.apply(sch, b, width, self.loops[self.vectorized].extent, d["par"])
        sch, b, sp, rd, extent = split_levels(module, self.func, self.block, self.inline,
                                              self.loops, d["tiles"], SPATIAL_LEVELS,
                                              REDUCE_LEVELS, prepare)
        order = sp[0] + sp[1] + rd[0] + sp[2] + rd[1] + sp[3]
        sch.reorder(*order)
        anchor = (sp[1] if d["wb"] else sp[0])[-1]
        wb = None
        if self.write == "cache":
            wb = sch.cache_write(b, 0, "global")
        elif self.write == "consumer":
            wb = sch.get_block(self.consumer)
        if wb is not None:
            sch.reverse_compute_at(wb, anchor)
        if d["par"]:
            outer = sch.fuse(*sp[0]) if len(sp[0]) > 1 else sp[0][0]
            sch.parallel(outer)
        inner = sp[3][-1]
        if extent[id(inner)] > 1:
            sch.vectorize(inner)
        if d["unroll"]:
            # the register tile first (the S3 loops around the vectorized one, innermost
            # first: unrolled, its accumulators are registers), then R1 while the budget
            # lasts
            unroll_within(sch, sp[3][:-1][::-1] + rd[1][::-1], extent,
                          unroll_budget(d["unroll"]))
        if wb is not None:
            wl = sch.get_loops(wb)[-1]
            n = extent_of(sch.get(wl))
            if n is not None and 1 < n <= MAX_INNERMOST * 4:
                sch.vectorize(wl)
        if rd[0]:
            sch.decompose_reduction(b, rd[0][0])
        return sch


def _last_spatial(loops) -> int:
    return max(i for i, lp in enumerate(loops) if lp.kind == "S")


def _iterator_of(info, k: int):
    """The block iterator that loop k of the block binds."""
    var = info.loops[k].loop_var
    for iv, value in zip(info.block.iter_vars, info.realize.iter_values):
        if value is var:
            return iv.var
    return None


def design_space(module, func_name: str, target=None) -> list:
    """The sketches for one function of the module (possibly none): for a CUDA target (a
    name of `tirkit.target`, e.g. "cuda-sm80") the GPU sketches, else this CPU's."""
    gpu = targets.get(target) if target is not None else None
    if target is not None and gpu is None:
        raise ValueError(f"unknown target '{target}' (known: {', '.join(targets.names())})")
    base = Schedule(module, func_name)
    names = [info.block.name_hint for info in base.index(func_name).order]
    tiled = [n for n in names if tileable_loops(base, base.get_block(n)) is not None]
    # producers that inline: tried on the kernel itself, kept where the primitive accepts
    inline, trial = [], base
    for n in names:
        if n in tiled or not is_elementwise(trial.block_info(trial.get_block(n)).block):
            continue
        t2 = trial.copy()
        try:
            t2.compute_inline(t2.get_block(n))
        except ScheduleError:
            continue
        inline.append(n)
        trial = t2
    if gpu is not None and gpu.is_gpu:
        return gpu_sketches(module, func_name, gpu, trial, blocks=tiled, inline=inline)
    out = []
    for n in tiled:
        rv = trial.get_block(n)
        loops = tileable_loops(trial, rv)
        if loops is None:
            continue
        consumers = trial.get_consumers(rv)
        writes = [("cache", None)]
        if len(consumers) == 1 and is_elementwise(trial.block_info(consumers[0]).block):
            writes.append(("consumer", consumers[0].name))
        info = trial.block_info(rv)
        lanes = vector_lanes(regions_of(info.block)[1][0].buffer.dtype)
        packs = packable_operands(info.block, _iterator_of(info, _last_spatial(loops)))
        for write, consumer in writes:
            sk = TiledSketch(func_name, n, loops, tuple(inline), write, consumer, lanes)
            try:                                    # the sketch must apply to this kernel
                sk.apply(module, sk.sample(FirstChoice()))
            except ScheduleError:
                continue
            # operands it packs: each one checked to apply
            ok = []
            for p in packs:
                trial_sk = dataclasses.replace(sk, packs=(p,))
                try:
                    trial_sk.apply(module, {**trial_sk.sample(FirstChoice()), "pack": 1})
                except ScheduleError:
                    continue
                ok.append(p)
            out.append(dataclasses.replace(sk, packs=tuple(ok)))
    out.extend(tensorize_sketches(module, func_name, inline=tuple(inline), blocks=tiled))
    return out


__all__ = ["TiledSketch", "Loop", "design_space", "gpu_sketches", "tensorize_sketches"]
