"""The GPU sketch: multi-level tiling SSSRRSRS for a CUDA target, with shared-memory copies of
the operands and thread bindings, as MetaSchedule writes it for CUDA.

    sketches = gpu_sketches(module, "mm", "cuda-sm80", trial, blocks=("C",))
    d = sketches[0].sample(rng)        # {"tiles": [[5 factors] or [3 factors] per loop],
    sch = sketches[0].apply(module, d) #  "vec": [1 | 2 | 4 per operand], "unroll": 0 | 1}

The reduction block's spatial loops are split in five (S0..S4), its reduction loops in three
(R0..R2), ordered S0 S1 S2 R0 R1 S3 R2 S4:
- S0 fused and bound to blockIdx.x, S1 fused and bound to vthread.x, S2 fused and bound to
  threadIdx.x (one thread computes an S3*S4 tile of the result, S1 times);
- the result accumulates in a `local` cache (`cache_write`), written back under the
  threadIdx loop (`reverse_compute_at`), through the block's elementwise consumer (a
  ReLU) where it has one (`reverse_compute_inline` into the write-back);
- each operand is copied to `shared` memory (`cache_read`) at the last R0 loop
  (`compute_at`): the copy covers what all the threads of the block read in one R0
  iteration; its loops are fused, split by the thread count and bound to threadIdx.x
  (a cooperative fetch), the innermost part vectorized by the decision's width;
- the R2, S4 and S3 loops unrolled, innermost first, up to 64 iterations (a decision);
- the reduction's init decomposed out at the outermost R0 loop.

Decisions are perfect tile sizes (innermost at most 64) that keep a block within the
target: at most `max_threads_per_block` threads, `MAX_VTHREAD` virtual threads,
`MAX_LOCAL` accumulators per thread and its operand tiles within the static shared memory
(estimated from the loops each operand is indexed by; validation has the exact size).  A
sample or mutation that passes a limit is repaired by moving prime factors of the levels
at fault to S0 (or R0).  Mutations move a prime factor between two levels of one loop,
flip the unroll switch or change one operand's vector width.
"""
from __future__ import annotations

import dataclasses

from .. import target as targets
from ..analysis.regions import regions_of
from ..ir.dtype import bytes_of
from ..ir.visit import walk
from ..ir import expr as E
from ..schedule import Schedule, ScheduleError
from .nest import (MAX_INNERMOST, is_elementwise, split_levels, tileable_loops,
                   unroll_within)
from .tiles import FirstChoice, mutate_tiles, prime_factors, sample_tiles

SPATIAL_LEVELS = 5          # S0 blockIdx, S1 vthread, S2 threadIdx, S3, S4
REDUCE_LEVELS = 3           # R0 (the shared copies' loop), R1, R2
MAX_VTHREAD = 8             # virtual threads per thread
MAX_LOCAL = 64              # accumulators per thread (S1 * S3 * S4)
VECTOR_WIDTHS = (1, 2, 4)   # of a cooperative fetch


@dataclasses.dataclass(frozen=True)
class Operand:
    """An input the sketch copies to shared memory: its buffer's name, element size and the
    loops (by position in the block's nest) its indices use."""
    name: str
    itemsize: int
    loops: tuple


@dataclasses.dataclass
class GpuTiledSketch:
    """SSSRRSRS tiling of one reduction block for a CUDA target, its producers inlined."""
    func: str
    block: str
    loops: tuple                     # nest.Loop per loop of the block, outermost first
    operands: tuple                  # Operand per input copied to shared memory
    target: str = targets.DEFAULT_CUDA
    inline: tuple = ()
    consumer: str | None = None      # an elementwise consumer fused into the write-back

    @property
    def name(self) -> str:
        extra = f", {'+'.join(self.inline)} inlined" if self.inline else ""
        extra += f", {self.consumer} fused" if self.consumer else ""
        return f"tile {self.block} SSSRRSRS for {self.target}, shared copies{extra}"

    # ---- limits -----------------------------------------------------------------------------
    def _levels(self, lp):
        return SPATIAL_LEVELS if lp.kind == "S" else REDUCE_LEVELS

    @staticmethod
    def _tile(t) -> int:
        """The extent of one loop that a block covers in one R0 iteration."""
        n = 1
        for f in t[1:]:
            n *= f
        return n

    def _product(self, tiles, kind, levels) -> int:
        n = 1
        for lp, t in zip(self.loops, tiles):
            if lp.kind == kind:
                for lvl in levels:
                    n *= t[lvl]
        return n

    def shared_bytes(self, tiles) -> int:
        """An estimate of the block's shared memory: each operand's tile, the product of the
        tiles of the loops it is indexed by (exact for indices that are loop iterators)."""
        total = 0
        for op in self.operands:
            n = op.itemsize
            for i in op.loops:
                n *= self._tile(tiles[i])
            total += n
        return total

    def _fault(self, tiles):
        """The (loop kind, levels) whose factors pass a limit, or None within all of them."""
        tgt = targets.get(self.target)
        if self._product(tiles, "S", (2,)) > tgt.max_threads_per_block:
            return "S", (2,)
        if self._product(tiles, "S", (1,)) > MAX_VTHREAD:
            return "S", (1,)
        if self._product(tiles, "S", (1, 3, 4)) > MAX_LOCAL:
            return "S", (1, 3, 4)
        if self.shared_bytes(tiles) > tgt.shared_static:
            return None, (1, 2, 3, 4)
        return None

    def repair(self, tiles, rng) -> list:
        """Prime factors moved from the levels at fault to the outermost, until the tiles
        keep every limit (each move shrinks what is at fault; all-outer keeps them all)."""
        tiles = [list(t) for t in tiles]
        fault = self._fault(tiles)
        while fault is not None:
            kind, levels = fault
            where = [(i, lvl) for i, (lp, t) in enumerate(zip(self.loops, tiles))
                     if kind in (None, lp.kind) for lvl in levels
                     if lvl < len(t) and t[lvl] > 1]
            i, lvl = where[int(rng.integers(0, len(where)))]
            p = prime_factors(tiles[i][lvl])[0]
            tiles[i][lvl] //= p
            tiles[i][0] *= p
            fault = self._fault(tiles)
        return tiles

    # ---- decisions --------------------------------------------------------------------------
    def sample(self, rng) -> dict:
        tiles = [sample_tiles(lp.extent, self._levels(lp), MAX_INNERMOST, rng)
                 for lp in self.loops]
        return {"tiles": self.repair(tiles, rng),
                "vec": [VECTOR_WIDTHS[int(rng.integers(0, len(VECTOR_WIDTHS)))]
                        for _ in self.operands],
                "unroll": int(rng.integers(0, 2))}

    def mutate(self, d: dict, rng) -> dict:
        d = {"tiles": [list(t) for t in d["tiles"]], "vec": list(d["vec"]),
             "unroll": d["unroll"]}
        r = rng.random()
        if r < 0.7:
            i = int(rng.integers(0, len(self.loops)))
            d["tiles"][i] = mutate_tiles(d["tiles"][i], MAX_INNERMOST, rng)
            d["tiles"] = self.repair(d["tiles"], rng)
        elif r < 0.85 or not d["vec"]:
            d["unroll"] = 1 - d["unroll"]
        else:
            k = int(rng.integers(0, len(d["vec"])))
            others = [w for w in VECTOR_WIDTHS if w != d["vec"][k]]
            d["vec"][k] = others[int(rng.integers(0, len(others)))]
        return d

    # ---- the schedule -----------------------------------------------------------------------
    def apply(self, module, d: dict) -> Schedule:
        sch, b, sp, rd, extent = split_levels(module, self.func, self.block, self.inline,
                                              self.loops, d["tiles"], SPATIAL_LEVELS,
                                              REDUCE_LEVELS)
        sch.reorder(*(sp[0] + sp[1] + sp[2] + rd[0] + rd[1] + sp[3] + rd[2] + sp[4]))
        threads = self._product(d["tiles"], "S", (2,))
        for level, tag in zip(sp[:3], ("blockIdx.x", "vthread.x", "threadIdx.x")):
            sch.bind(sch.fuse(*level), tag)
        tx = sch.get_loops(b)[2]
        sch.reverse_compute_at(sch.cache_write(b, 0, "local"), tx)
        if self.consumer is not None:
            sch.reverse_compute_inline(sch.get_block(self.consumer))
        for op, vec in zip(self.operands, d["vec"]):
            self._fetch(sch, b, op, rd[0][-1], 3 + len(rd[0]), threads, vec)
        if d["unroll"]:
            unroll_within(sch, sp[4][::-1] + rd[2][::-1] + sp[3][::-1], extent)
        sch.decompose_reduction(b, rd[0][0])
        return sch

    def _fetch(self, sch, b, op, anchor, depth, threads, vec):
        """The operand copied to shared memory at `anchor` by all threads of the block."""
        blk = sch.block_info(b).block
        reads = regions_of(blk)[0]
        index = next((i for i, r in enumerate(reads) if r.buffer.name == op.name), None)
        if index is None:
            raise ScheduleError("tune", "sketch", f"block '{self.block}' does not read "
                                f"'{op.name}'")
        copy = sch.cache_read(b, index, "shared")
        sch.compute_at(copy, anchor, preserve_unit_loops=True)
        own = sch.get_loops(copy)[depth:]
        fused = sch.fuse(*own)
        parts = sch.split(fused, [None, threads, vec] if vec > 1 else [None, threads])
        sch.bind(parts[1], "threadIdx.x")
        if vec > 1:
            sch.vectorize(parts[2])


def operands_of(sch, rv, loops) -> tuple | None:
    """The inputs of a tileable block (every buffer it reads but its output), each with the
    positions of the loops its indices use; None when one buffer is read in two regions."""
    info = sch.block_info(rv)
    block, realize = info.block, info.realize
    reads, writes = regions_of(block)
    by_loop = {id(lp.loop_var): k for k, lp in enumerate(info.loops)}
    position = {id(iv.var): by_loop[id(v)] for iv, v in zip(block.iter_vars,
                                                             realize.iter_values)
                if id(v) in by_loop}
    out = []
    written = {id(w.buffer) for w in writes}
    for r in reads:
        if id(r.buffer) in written:
            continue
        used = set()
        for rng in r.region:
            walk(rng.min, lambda x: used.add(position[id(x)])
                 if isinstance(x, E.Var) and id(x) in position else None)
        out.append(Operand(r.buffer.name, bytes_of(r.buffer.dtype), tuple(sorted(used))))
    if len({o.name for o in out}) != len(out) or len(loops) != len(info.loops):
        return None                  # one buffer read in two regions: not copied
    return tuple(out)


def gpu_sketches(module, func_name: str, target, trial, blocks=(), inline=()) -> list:
    """One GpuTiledSketch per block of `blocks` (in `trial`, the kernel with `inline`
    inlined) that tiles, each one checked to apply and to give one CUDA kernel (no block of
    the function is left outside the thread bindings)."""
    name = targets.get(target).name
    out = []
    for n in blocks:
        rv = trial.get_block(n)
        loops = tileable_loops(trial, rv)
        if loops is None or not any(lp.kind == "S" for lp in loops):
            continue
        operands = operands_of(trial, rv, loops)
        if not operands:
            continue
        consumers = trial.get_consumers(rv)
        consumer = consumers[0].name if len(consumers) == 1 and \
            is_elementwise(trial.block_info(consumers[0]).block) else None
        sk = GpuTiledSketch(func_name, n, loops, operands, name, tuple(inline), consumer)
        try:                                    # the sketch must apply to this kernel
            sch = sk.apply(module, sk.sample(FirstChoice()))
        except ScheduleError:
            continue
        if any(not any(lp.kind == "thread_binding" for lp in info.loops)
               for info in sch.index(func_name).order[1:]):      # past the root block
            continue                            # a block outside the kernel
        out.append(sk)
    return out


__all__ = ["GpuTiledSketch", "Operand", "gpu_sketches", "operands_of", "MAX_LOCAL",
           "MAX_VTHREAD"]
