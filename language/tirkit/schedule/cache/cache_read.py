"""cache_read: read a buffer through a copy in another storage scope.

    A_shared = sch.cache_read(block, read_buffer_index=0, storage_scope="shared")

A new buffer `<name>_<scope>` and a copy block of the same name are added; the consumers
(all readers in the scope, or `consumer_blocks`) read the copy instead, in their predicates
too; so do loads outside the blocks of the scope after the copy of an input. The copy goes
right after the buffer's writer, in the innermost loop that holds the writer and the first
consumer (first in the scope for an input) and copies the region the writer writes there
(for an input of the scope: the region the scope block reads, the whole buffer at the root).
A copy at the scope's top level is sized to its region; one inside a loop keeps the buffer's
shape. Refused: an index outside the block's reads, an unknown scope, a buffer written by
several blocks or outside the blocks after the copy, read opaquely (through its pointer)
where the cache would not be the whole buffer, or viewed by a match_buffer in the scope."""
from __future__ import annotations

from ...ir import expr as E
from . import placement
from ..inline import common as inlining
from .. import _ir
from .copies import (cache_buffer, compact_buffer, compact_copy_nest, copy_nest,
                          shift_buffer, whole)
from .region import relaxed_region
from ..analysis import opaque_uses, read_buffers, regions_of, write_buffers
from ..registry import primitive


@primitive("cache_read")
def cache_read(sch, block, read_buffer_index, storage_scope, consumer_blocks=None):
    info = sch.block_info(block)
    blk = info.block
    placement.check_scope(sch, storage_scope, blk)
    reads = regions_of(blk)[0]
    if not isinstance(read_buffer_index, int) or not 0 <= read_buffer_index < len(reads):
        raise sch.error("cache_read/bad-index", f"block '{blk.name_hint}' reads "
                        f"{len(reads)} buffers; index {read_buffer_index} is out of range", blk)
    region = reads[read_buffer_index]
    buf = region.buffer
    scope = inlining.scope_of(sch, block.func, info)
    infos = [i for i in sch.index(block.func).order if i.scope is scope]
    if consumer_blocks is None:
        cons = [i for i in infos if any(b is buf for b in read_buffers(i.block)) and
                not any(b is buf for b in write_buffers(i.block))]
    else:
        cons = [sch.block_info(rv) for rv in consumer_blocks]
        if not any(c.block is blk for c in cons):
            cons.append(info)
    writers = [i for i in infos if any(b is buf for b in write_buffers(i.block))]
    if len(writers) > 1:
        raise sch.error("cache_read/several-writers", f"'{buf.name}' is written by "
                        f"{len(writers)} blocks", writers[1].block)
    writer = writers[0].realize if writers else None
    loc, pos = placement.locate(scope, writer, [c.realize for c in cons])
    if writers:
        # the copy holds what the writer produces there (so every consumer finds its part)
        w = writers[0]
        wregs = regions_of(w.block)[1]
        wreg = next(r for r in wregs if r.buffer is buf)
        # over thread loops only where threads share the *original* buffer (a thread's
        # local result is copied by that thread)
        rel, outer = relaxed_region(sch, w, wreg, loc, buf.scope or "global")
    else:
        # an input of the scope: what the scope block reads of it, else the whole buffer
        rel, outer = placement.input_region(sch, block.func, scope, buf), []
    # a store outside the blocks after the copy would leave the copy stale
    at = pos if loc is scope else next(
        (k for k, top in enumerate(_ir.child_stmts(scope))
         if any(x is loc for x in _ir.stmts(top))), 0)
    late = [x for k, x in placement.loose_accesses(scope, buf)
            if k >= at and not isinstance(x, E.BufferLoad)]
    if late:
        raise sch.error("cache_read/loose-access", f"'{buf.name}' is written outside the "
                        "blocks of the scope after the copy", blk)
    placement.check_own_view(sch, blk, buf)
    for c in infos:
        placement.check_matches(sch, c.block, buf, c.block)
    same_layout = loc is not scope or whole(rel, buf)
    for c in cons:
        if opaque_uses(c.block, buf) and not same_layout:
            # a pointer into the buffer cannot be moved into a smaller cache
            raise sch.error("cache_read/opaque-access", f"block '{c.block.name_hint}' uses "
                            f"'{buf.name}' opaquely", c.block)
    name = sch.fresh_block_name(block.func, f"{buf.name}_{storage_scope.replace('.', '_')}")
    if loc is not scope:        # a copy inside a loop: the cache has the buffer's shape
        cbuf = cache_buffer(buf, storage_scope, name)
        nest = copy_nest(sch, buf, cbuf, name, rel, outer)
        mapping = {id(c.realize): _ir.replace_buffer(c.realize, buf, cbuf) for c in cons}
    elif same_layout:           # the cache is the whole buffer: accesses keep their indices
        cbuf = compact_buffer(buf, storage_scope, name, rel)
        nest = compact_copy_nest(sch, buf, cbuf, name, rel, reading=True)
        mapping = {id(c.realize): _ir.replace_buffer(c.realize, buf, cbuf) for c in cons}
    else:
        cbuf = compact_buffer(buf, storage_scope, name, rel)
        nest = compact_copy_nest(sch, buf, cbuf, name, rel, reading=True)
        mapping = {id(c.realize): shift_buffer(c.realize, buf, cbuf, rel) for c in cons}
    if not writers and loc is scope:
        # an input of the scope: its loads outside the blocks, after the copy, read the copy
        # too (the copy holds what the scope reads of it)
        for k, x in placement.loose_accesses(scope, buf):
            if k >= pos and isinstance(x, E.BufferLoad):
                mapping[id(x)] = _ir.replace_buffer(x, buf, cbuf) if same_layout else \
                    shift_buffer(x, buf, cbuf, rel)
    placement.insert(sch, block.func, scope, loc, pos, nest, mapping, cbuf)
    return sch.block_of(block.func, name)
