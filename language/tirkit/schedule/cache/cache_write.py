"""cache_write: write a buffer through a copy in another storage scope.

    C_local = sch.cache_write(block, write_buffer_index=0, storage_scope="local")

The block writes (and reads, for a reduction) a new buffer `<name>_<scope>`; a copy block of
the same name writes the original buffer, right before the first consumer in the innermost
loop that holds both (at the end of the scope when nothing in it reads the buffer), over the
region the block writes there (relaxed over the thread loops that share the original buffer,
cut where the block's predicate stops it). A copy at the scope's top level is sized to its
region; one inside a loop keeps the buffer's shape. Stores of an initial value outside the
blocks, before the block, move to the cache with it. Refused: an index outside the block's
writes, an unknown scope, a buffer written by several blocks or accessed otherwise outside
the blocks of the scope, used opaquely (through its pointer) where the cache would not be
the whole buffer, or viewed by a match_buffer in the scope."""
from __future__ import annotations

from ...ir import expr as E
from ...ir import stmt as S
from . import placement
from ..inline import common as inlining
from .. import _ir
from .copies import (cache_buffer, compact_buffer, compact_copy_nest, copy_nest,
                          shift_buffer, whole)
from .region import relaxed_region
from ..analysis import consumers, infer_regions, opaque_uses, write_buffers
from ..registry import primitive


@primitive("cache_write")
def cache_write(sch, block, write_buffer_index, storage_scope, consumer_blocks=None):
    info = sch.block_info(block)
    blk = info.block
    placement.check_scope(sch, storage_scope, blk)
    writes = blk.writes if blk.writes is not None else infer_regions(blk)[1]
    if not isinstance(write_buffer_index, int) or not 0 <= write_buffer_index < len(writes):
        raise sch.error("cache_write/bad-index", f"block '{blk.name_hint}' writes "
                        f"{len(writes)} buffers; index {write_buffer_index} is out of range",
                        blk)
    region = writes[write_buffer_index]
    buf = region.buffer
    scope = inlining.scope_of(sch, block.func, info)
    for other in sch.index(block.func).order:
        if other.block is not blk and other.scope is scope and \
                any(b is buf for b in write_buffers(other.block)):
            raise sch.error("cache_write/several-writers", f"block '{other.block.name_hint}' "
                            f"also writes '{buf.name}'", other.block, [(blk, "block")])
    if consumer_blocks is not None:
        related = [sch.block_info(rv).realize for rv in consumer_blocks]
    else:
        related = [c.realize for c in consumers(sch, block.func, info)]
    loc, pos = placement.locate(scope, info.realize, related)
    # over the thread loops that share the *original* buffer (as for cache_read)
    rel, outer = relaxed_region(sch, info, region, loc, buf.scope or "global")
    placement.check_own_view(sch, blk, buf)
    for other in sch.index(block.func).order:
        if other.scope is scope:
            placement.check_matches(sch, other.block, buf, other.block)
    loose = placement.loose_accesses(scope, buf)
    if loose:
        # statements outside the blocks: stores that set up what the block goes on writing
        # (an initial value) move to the cache with it; anything else would see the wrong
        # buffer
        first = placement.position(scope, placement.top_stmt(info, scope)) if loc is scope else -1
        if not all(k < first and isinstance(x, S.BufferStore) and
                   _inside(x.indices, rel) for k, x in loose):
            raise sch.error("cache_write/loose-access", f"'{buf.name}' is also accessed "
                            "outside the blocks of the scope", blk)
    same_layout = loc is not scope or whole(rel, buf)
    if opaque_uses(blk, buf) and not same_layout:
        # a pointer into the buffer cannot be moved into a smaller cache
        raise sch.error("cache_write/opaque-access", f"block '{blk.name_hint}' uses "
                        f"'{buf.name}' opaquely", blk)
    name = sch.fresh_block_name(block.func, f"{buf.name}_{storage_scope.replace('.', '_')}")
    if loc is not scope:        # a copy inside a loop: the cache has the buffer's shape
        cbuf = cache_buffer(buf, storage_scope, name)
        nest = copy_nest(sch, cbuf, buf, name, rel, outer)
        nb = _ir.replace_buffer(blk, buf, cbuf)
    elif same_layout:           # the cache is the whole buffer: accesses keep their indices
        cbuf = compact_buffer(buf, storage_scope, name, rel)
        nest = compact_copy_nest(sch, buf, cbuf, name, rel, reading=False)
        nb = _ir.replace_buffer(blk, buf, cbuf)
    else:
        cbuf = compact_buffer(buf, storage_scope, name, rel)
        nest = compact_copy_nest(sch, buf, cbuf, name, rel, reading=False)
        nb = shift_buffer(blk, buf, cbuf, rel)
    mapping = {id(blk): nb}
    for _, x in loose:
        mapping[id(x)] = _ir.replace_buffer(x, buf, cbuf) if loc is not scope or same_layout \
            else shift_buffer(x, buf, cbuf, rel)
    placement.insert(sch, block.func, scope, loc, pos, nest, mapping, cbuf)
    return sch.block_of(block.func, name)


def _inside(indices, region) -> bool:
    """Constant indices inside a constant region."""
    for i, (mn, ext) in zip(indices, region):
        if not (isinstance(i, E.IntImm) and isinstance(mn, E.IntImm) and isinstance(ext, int)
                and mn.value <= i.value < mn.value + ext):
            return False
    return True
