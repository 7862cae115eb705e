"""Tensor-core builtins whose operands do not fit (`type/mismatch`, `bounds/out-of-bounds`):
`T.tvm_fill_fragment`, `T.tvm_load_matrix_sync`, `T.tvm_mma_sync` and
`T.tvm_store_matrix_sync` over `nvcuda::wmma` fragments (ir/ptx.py).

TVM's CUDA code generator prints them as `nvcuda::wmma` calls on `fragment[index]` and on
`(type*)data + offset`, with no check of either: past the fragments or the memory they read
and write whatever lies there.  Reported at the call:
- a fragment index past the fragments its buffer holds (fragment i is its elements from
  i * rows * cols on, a fragment being m x k for `wmma.matrix_a`, k x n for `wmma.matrix_b`
  and m x n for accumulators; for `T.tvm_mma_sync`, the m, n, k of the buffer's other calls);
- a load or store whose tile (rows of `cols` elements `stride` apart, or columns for
  `col_major`) leaves the storage behind its `T.tvm_access_ptr`;
- a load or store between a fragment and memory of another element type: nvcuda::wmma has
  no `load_matrix_sync` of a `half` fragment from `float*`, so the generated code does not
  compile.
Indices and offsets are read at their certain extremes over the enclosing loops
(`_operands.py`); symbolic shapes, strides and layouts are not checked."""
from __future__ import annotations

from ..ir import expr as E
from ..ir import ptx
from ..ir.dtype import bits_of, parse_dtype
from . import register
from ._common import func_accesses, storage_owners
from ._operands import BOUNDS, TYPE, CallCheck


def _mnk(call):
    mnk = call.args[1:4]
    return tuple(v.value for v in mnk) if all(isinstance(v, E.IntImm) for v in mnk) else None


def _fragment(c: CallCheck, var, index, mnk):
    """Report a fragment index past the fragments of var."""
    if not isinstance(var, E.Var) or mnk is None:
        return
    rows, cols = ptx.wmma_tile(c.scope(var) or "global", mnk)
    held = c.storage(var, c.element(var) or "float32")
    if held is None:
        return
    size, rel = held
    per = rows * cols
    lo, hi = c.offset_range(index)
    if hi is not None and (hi + 1) * per > size:
        c.error(BOUNDS, f"uses fragment {hi} of '{var.name}', which holds {size // per} "
                f"fragment{'s' if size // per != 1 else ''} of {rows}×{cols} elements", index,
                rel)
    elif lo is not None and lo < 0:
        c.error(BOUNDS, f"uses fragment {lo} of '{var.name}'", index, rel)


def _memory(c: CallCheck, frag, mnk, ptr, stride, layout):
    """Report a tile that leaves the memory behind ptr, or memory of another type."""
    if not (isinstance(ptr, E.Call) and ptr.op == ptx.ACCESS_PTR and len(ptr.args) == 5):
        return
    dtype, data, offset = ptr.args[0].dtype, ptr.args[1], ptr.args[2]
    if parse_dtype(dtype) is None:
        return
    load = c.call.op == ptx.WMMA_LOAD
    held = c.element(frag)
    if held is not None and parse_dtype(held) is not None and held != dtype and \
            min(bits_of(held), bits_of(dtype)) >= 8:
        c.error(TYPE, f"{'loads' if load else 'stores'} the {held} fragment '{frag.name}' "
                f"{'from' if load else 'to'} {dtype} memory (the type of its "
                f"`T.tvm_access_ptr`): nvcuda::wmma has no such "
                f"{'load_matrix_sync' if load else 'store_matrix_sync'}", ptr)
        return
    if not isinstance(stride, E.IntImm) or not isinstance(layout, E.StringImm):
        return
    rows, cols = ptx.wmma_tile(c.scope(frag) or "global", mnk)
    c.within(data, offset, ptx.wmma_span(rows, cols, stride.value, layout.value), dtype,
             "reads its tile from" if load else "writes its tile to")


@register("wmma-operands", codes=(TYPE, BOUNDS), fast=True)
def check_wmma_operands(func, ctx):
    fa = func_accesses(func, ctx)
    calls = [x for x in fa.calls if x[0].op in ptx.WMMA_OPS and x[0].span is not None]
    if not calls:
        return []
    owners = storage_owners(func, ctx)
    shapes = {}                 # fragment data var -> the (m, n, k) its calls give it
    for call, _, _ in calls:
        if call.op != ptx.WMMA_MMA and len(call.args) >= 5 and _mnk(call) is not None:
            shapes.setdefault(call.args[0], _mnk(call))
    out = []
    for call, loops, conds in calls:
        c = CallCheck(call, loops, conds, fa, owners, out)
        a = call.args
        if call.op == ptx.WMMA_MMA:
            if len(a) == 8:
                for var, index in zip(a[0::2], a[1::2]):
                    _fragment(c, var, index, shapes.get(var))
            continue
        mnk = _mnk(call) if len(a) >= 5 else None
        if mnk is None:
            continue
        _fragment(c, a[0], a[4], mnk)
        if call.op != ptx.WMMA_FILL and len(a) == 8:
            _memory(c, a[0], mnk, a[5], a[6], a[7])
    return out
