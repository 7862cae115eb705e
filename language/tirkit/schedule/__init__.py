"""Schedule primitives: checked IR-to-IR transformations with a replayable trace.

    sch = tirkit.Schedule(module)
    i, j, k = sch.get_loops(sch.get_block("C"))
    i0, i1 = sch.split(i, [None, 32])
    print(tirkit.to_script(sch.mod)); print(sch.trace.as_python())

Layout. The package's own modules are what every primitive shares: `state` (the Schedule,
its one replace point), `trace`, `errors` (ScheduleError names IR nodes with spans),
`registry` (one `@primitive` per public primitive; `Schedule.<name>` finds it there),
`analysis` (block reads/writes, producers and consumers), `actions` (the editor's code
actions), and the package-private helpers `_ir` (tree plumbing) and `_common` (constants,
loop nests, binding simplification); linear forms come from `arith.writeback`, which writes
them back as TVM prints them. The primitives are grouped by family, as TVM groups them; a family's public primitive is the module of the same name, and
its other modules are the steps that primitive (or its sibling) takes:

    loops/       split, fuse, reorder, loop_kind (parallel, vectorize, unroll), bind
    annotate/    annotate, unannotate
    compute_at/  compute_at, reverse_compute_at; move drives both through checks, region,
                 nest and bounds
    inline/      compute_inline, reverse_compute_inline; common (removing a block from its
                 scope, also used by compute_at, cache and layout), reverse_map,
                 reverse_producer, copy_inline (an identity copy replaced by its source)
    cache/       cache_read, cache_write; placement (where the copy goes, also used by
                 layout), region, copies
    blockize/    blockize; divide, outer, simplify
    reduction/   decompose_reduction, rfactor
    layout/      reindex, pad_einsum, set_scope
    tensorize/   transform_layout, tensorize, auto_tensorize; index_map (lambdas read
                 without running them), cli (`tirkit tensorize`)

A family imports the shared modules above it and another family's public helper modules
(`inline.common`, `cache.placement`), never another family's primitive.
"""
from .errors import ScheduleError
from .registry import PRIMITIVES, load
from .state import BlockRV, LoopRV, Schedule
from .trace import Trace

__all__ = ["Schedule", "ScheduleError", "BlockRV", "LoopRV", "Trace", "PRIMITIVES", "load"]
