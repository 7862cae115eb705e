"""set_scope: change the storage scope of a buffer a block writes (an allocated buffer, not
a function parameter)."""
from __future__ import annotations

import dataclasses

from ...ir import expr as E
from ..cache import placement
from .. import _ir
from ..analysis import infer_regions, output_buffers
from ..registry import primitive


@primitive("set_scope")
def set_scope(sch, block, buffer_index, storage_scope):
    info = sch.block_info(block)
    blk = info.block
    placement.check_scope(sch, storage_scope, blk)
    writes = blk.writes if blk.writes is not None else infer_regions(blk)[1]
    if not isinstance(buffer_index, int) or not 0 <= buffer_index < len(writes):
        raise sch.error("set_scope/bad-index", f"block '{blk.name_hint}' writes {len(writes)} "
                        f"buffers; index {buffer_index} is out of range", blk)
    buf = writes[buffer_index].buffer
    func = sch.func(block.func)
    if any(buf is o for o in output_buffers(func)):
        raise sch.error("set_scope/parameter", f"'{buf.name}' is a parameter of the function",
                        blk)
    if buf.scope == storage_scope:
        return None
    data = E.Var(buf.data.name, buf.data.dtype, E.PointerType(buf.dtype, storage_scope),
                 buf.data.span)
    new = dataclasses.replace(buf, scope=storage_scope, data=data)
    sch.replace_func(block.func, dataclasses.replace(func, body=_ir.replace_buffer(
        func.body, buf, new)))
    return None
