"""auto_tensorize: the whole schedule that puts a tensor instruction on a block.

    outer = sch.auto_tensorize(sch.get_block("C"), "x86.avx2.dot_8x4_u8s8s32")

The mapping (`tirkit.tensorize.mapping`) chooses, for each of the instruction's iterators,
the block iterator it tiles and how each operand is laid out. The steps, each applied as
the primitive of the same name and recorded in the trace (auto_tensorize itself is not
recorded, so the trace replays step by step):
  reindex   (an operand of two or more dimensions that the instruction does not take in
               place: a copy indexed by the block's iterators),
  pad_einsum   (extents that are not multiples of the instruction's),
  transform_layout   (the copies packed so that the instruction's tile is contiguous:
               B[K, N] -> [N/16, K/4, 16, 4] for VNNI),
  split + reorder   (each chosen iterator's loop into outer and instruction-sized inner
               loops, the inner ones innermost in the instruction's order),
  blockize + tensorize   (the inner loops become the instruction).
Refused, with the mapping's reason (`auto_tensorize/not-feasible`): a block the
instruction cannot serve. Returns the tensorized (outer) block."""
from __future__ import annotations

from ...ir import expr as E
from ...tensorize.library import load
from ...tensorize.mapping import find_mapping
from ..analysis import infer_regions
from ..registry import primitive


@primitive("auto_tensorize", record=False)
def auto_tensorize(sch, block, intrin, intrinsics=None):
    lib = load(intrinsics)
    it = lib.get(intrin)
    if it is None:
        raise sch.error("tensorize/unknown-intrinsic", f"no intrinsic named '{intrin}' "
                        f"(known: {', '.join(lib.names())})")
    info = sch.block_info(block)
    m = find_mapping(info.realize, it)
    if not m.feasible:
        raise sch.error("auto_tensorize/not-feasible", f"'{it.name}' cannot serve block "
                        f"'{info.block.name_hint}': {m.message} ({m.code})", info.block)
    # operands by their position in the block's (declared or inferred) regions, which
    # pad_einsum keeps while it swaps the buffers for their padded copies
    blk = info.block
    inferred = infer_regions(blk)
    regions = {"read": blk.reads if blk.reads is not None else inferred[0],
               "write": blk.writes if blk.writes is not None else inferred[1]}
    packs = []
    for op in m.operands:
        if len(op.desc_buffer.shape) > 1 and op.layout != "direct":
            pos = next((k for k, r in enumerate(regions[op.kind]) if r.buffer is op.buffer),
                       None)
            if pos is None:
                raise sch.error("auto_tensorize/not-feasible", f"'{op.buffer.name}' is not "
                                f"among the {op.kind}s of block '{blk.name_hint}'", blk)
            packs.append(((op.kind, pos), op.index_map))
    # reindexed before padding: pad_einsum then pads the copies, whose indices are the
    # block's iterators (a conv's input `X[h + rh, ...]` included)
    for where, _ in packs:
        sch.reindex(block, where)
    if any(p > 1 for p in m.padding):
        sch.pad_einsum(block, list(m.padding))
    for where, index_map in packs:
        sch.transform_layout(block, where, index_map)
    info = sch.block_info(block)
    loops = sch.get_loops(block)
    by_var = {id(sch.get(lp).loop_var): lp for lp in loops}
    names = [iv.var.name for iv in info.block.iter_vars]
    outer, inner = list(loops), []
    for cname, ext in zip(m.chosen, m.extents):
        k = names.index(cname)
        v = info.realize.iter_values[k]
        lp = by_var.get(id(v)) if isinstance(v, E.Var) else None
        if lp is None:
            raise sch.error("auto_tensorize/not-feasible", f"iterator '{cname}' of block "
                            f"'{info.block.name_hint}' is not bound to a loop of its own",
                            info.block)
        lo, li = sch.split(lp, [None, ext])
        outer[outer.index(lp)] = lo
        inner.append(li)
    sch.reorder(*(outer + inner))
    outer_block = sch.blockize(inner[0])
    sch.tensorize(outer_block, it.name, intrinsics)
    return outer_block
