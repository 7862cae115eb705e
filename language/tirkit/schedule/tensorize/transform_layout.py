"""transform_layout: store a buffer in another layout, given by an index map.

    sch.transform_layout(block, ("read", 1), "lambda j, k: (j // 16, k // 4, j % 16, k % 4)")

The buffer that the block reads (writes) at that position gets the shape the map's results
span over the old shape, and every access to it in the function (loads, stores, regions) is
rewritten through the map. A parameter of the function (as TVM's `transform_layout` does
on a parameter's buffer) changes the function's signature: it then takes (or gives back) the
buffer in the new layout, and the caller lays the data out so, once, outside the function
(pre-packed weights: `B[K, N]` passed as `[N/16, K/4, 16, 4]`).  Refused: a map that is not a lambda of integer arithmetic, one with a
parameter count other than the buffer's dimensions, a result that does not start at zero, a
map that is not one to one on the buffer's shape (two elements sent to one place), a parameter
with explicit strides, an element offset or axis separators (its layout is not the shape's
row-major one, so a new shape alone cannot describe it)."""
from __future__ import annotations

import dataclasses

import numpy as np

from ...arith import writeback as A
from ...ir import expr as E
from ...ir import stmt as S
from .. import _common as common
from .. import _ir
from ..analysis import infer_regions
from ..registry import primitive
from . import index_map as IM


@primitive("transform_layout")
def transform_layout(sch, block, buffer, index_map):
    info = sch.block_info(block)
    blk = info.block
    if not (isinstance(buffer, (tuple, list)) and len(buffer) == 2 and
            buffer[0] in ("read", "write") and isinstance(buffer[1], int)):
        raise sch.error("transform_layout/bad-buffer", "the buffer is given as ('read', i) "
                        "or ('write', i)", blk)
    regions = blk.reads if buffer[0] == "read" else blk.writes
    if regions is None:
        regions = infer_regions(blk)[0 if buffer[0] == "read" else 1]
    if not 0 <= buffer[1] < len(regions):
        raise sch.error("transform_layout/bad-index", f"block '{blk.name_hint}' has "
                        f"{len(regions)} {buffer[0]} buffers", blk)
    buf = regions[buffer[1]].buffer
    func = sch.func(block.func)
    param = any(b is buf for _, b in func.buffer_map)
    if param and (buf.strides or buf.elem_offset is not None or buf.axis_separators):
        raise sch.error("transform_layout/parameter", f"parameter '{buf.name}' of "
                        f"'{func.name}' has explicit strides, an offset or axis separators", blk)
    try:
        m = IM.parse(index_map)
    except ValueError as e:
        raise sch.error("transform_layout/bad-map", str(e), blk) from None
    if len(m.params) != len(buf.shape) or not all(isinstance(s, E.IntImm) for s in buf.shape):
        raise sch.error("transform_layout/bad-map", f"the map takes {len(m.params)} indices; "
                        f"'{buf.name}' has {len(buf.shape)} constant dimensions", blk)
    dt = buf.shape[0].dtype
    vs = [E.Var(p, dt) for p in m.params]
    bounds = {id(v): (0, s.value - 1) for v, s in zip(vs, buf.shape)}
    shape = []
    for e in m.apply(vs):
        b = A.bound_of(e, bounds)
        if b is None or b[0] != 0:
            raise sch.error("transform_layout/bad-map", f"a result of the map does not span "
                            f"[0, n) over '{buf.name}'", blk)
        shape.append(b[1] + 1)
    if not _one_to_one(m, [s.value for s in buf.shape]):
        raise sch.error("transform_layout/not-bijective", "the map sends two elements of "
                        f"'{buf.name}' to one place", blk)
    new = dataclasses.replace(buf, shape=tuple(common.int32(n, dt) for n in shape))

    def idx(indices):
        return tuple(A.simplify(e) for e in m.apply(list(indices)))

    def region(r):
        if all(E.is_const_int(x.extent, 1) for x in r.region):
            return tuple(E.Range(e, common.int32(1, e.dtype))
                         for e in idx([x.min for x in r.region]))
        return tuple(E.Range(common.int32(0, dt), common.int32(n, dt)) for n in shape)

    def fn(y, x):
        if isinstance(y, E.BufferLoad) and y.buffer is buf:
            return dataclasses.replace(y, buffer=new, indices=idx(y.indices))
        if isinstance(y, S.BufferStore) and y.buffer is buf:
            return dataclasses.replace(y, buffer=new, indices=idx(y.indices))
        if isinstance(y, S.BufferRegion) and y.buffer is buf:
            return S.BufferRegion(new, region(y))
        if isinstance(y, S.Block) and any(b is buf for b in y.alloc_buffers):
            return dataclasses.replace(y, alloc_buffers=tuple(new if b is buf else b
                                                              for b in y.alloc_buffers))
        return None
    bmap = tuple((v, new if b is buf else b) for v, b in func.buffer_map)
    sch.replace_func(block.func, dataclasses.replace(func, body=_ir.rebuild(func.body, fn),
                                                     buffer_map=bmap))
    return None


def _one_to_one(m, shape, limit=1 << 16):
    """Whether the map is injective on the shape (checked exhaustively up to `limit` points,
    else on the shape's corners and edges), the map evaluated on all points at once."""
    total = 1
    for n in shape:
        total *= n
    axes = [np.arange(n) for n in shape] if total <= limit else \
        [np.array(sorted({0, 1, n - 2, n - 1} & set(range(n)))) for n in shape]
    grids = np.meshgrid(*axes, indexing="ij")
    env = dict(zip(m.params, grids))
    images = [np.broadcast_to(_eval(b, env), grids[0].shape).ravel().astype(np.int64)
              for b in m.body]
    # each image as one integer (its place in the box the images span), then a 1-D test
    flat, span = np.zeros(grids[0].size, np.int64), 1
    for q in images:
        lo, n = int(q.min()), int(q.max() - q.min()) + 1
        if span * n >= 1 << 62:                 # too many places for one int64: by rows
            rows = np.stack(images, axis=1)
            return len(np.unique(rows, axis=0)) == len(rows)
        flat += (q - lo) * span
        span *= n
    return len(np.unique(flat)) == len(flat)


def _eval(node, env):
    import ast
    if isinstance(node, ast.Name):
        return env[node.id]
    if isinstance(node, ast.Constant):
        return node.value
    a, b = _eval(node.left, env), _eval(node.right, env)
    return {ast.Add: a + b, ast.Sub: a - b, ast.Mult: a * b}.get(type(node.op)) \
        if type(node.op) not in (ast.FloorDiv, ast.Mod) else \
        (a // b if isinstance(node.op, ast.FloorDiv) else a % b)
