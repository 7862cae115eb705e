"""The cache buffer and the copy between it and the buffer, for cache_read and cache_write: in
a loop the cache has the buffer's shape; a cache at the level of a non-root scope is
compacted to the region it holds (as TVM does), the accesses moved to it shifted by the
region's start."""
from __future__ import annotations

import dataclasses

from ...ir import expr as E
from ...ir import stmt as S
from .. import _arith as A
from .. import _common as common
from .. import _ir


def cache_buffer(buf, scope, name):
    data = E.Var(name, "handle", E.PointerType(buf.dtype, scope))
    return S.Buffer(name, buf.shape, buf.dtype, data, strides=buf.strides,
                    elem_offset=buf.elem_offset, scope=scope)


def copy_nest(sch, src, dst, name, region, outer_loops):
    """`for ax...: with block(name): dst[v...] = src[v...]` over `region`."""
    loops, ivs, values, idx = [], [], [], []
    bounds = _loop_bounds(outer_loops)
    for k, ((mn, ext), d) in enumerate(zip(region, src.shape)):
        if ext is None:
            raise sch.error(f"{sch._current}/symbolic-shape", f"buffer '{src.name}' has a "
                            "non-constant shape")
        lv = E.Var(f"ax{k}", d.dtype)
        v = E.Var(f"v{k}", d.dtype)
        loops.append(common.new_loop(lv, ext))
        if isinstance(ext, int):
            bounds[id(lv)] = (0, ext - 1)
        ivs.append(S.IterVar(v, E.Range(E.IntImm(d.dtype, 0), d), "S"))
        # TVM binds `min + ax` as it is (the region's min is already simple)
        values.append(lv if common.is_zero(mn) else E.Add(mn, lv, d.dtype))
        idx.append(v)
    point = tuple(E.Range(v, E.IntImm("int32", 1)) for v in idx)
    store = S.BufferStore(dst, E.BufferLoad(src, tuple(idx), src.dtype), tuple(idx))
    block = S.Block(name, tuple(ivs), (S.BufferRegion(src, point),),
                    (S.BufferRegion(dst, point),), store)
    realize = S.BlockRealize(tuple(values), common.TRUE, block)
    return common.nest(loops, realize)


def _loop_bounds(loops):
    """Loop variable bounds; a loop of symbolic extent from a constant start is bounded by
    the largest value of its type (so that its variable still counts as a loop variable)."""
    out = common.loop_bounds(loops)
    for f in loops:
        if id(f.loop_var) not in out and isinstance(f.min, E.IntImm):
            bits = 63 if f.loop_var.dtype == "int64" else 31
            out[id(f.loop_var)] = (f.min.value, 2 ** bits - 1)
    return out


def whole(region, buf) -> bool:
    """A cache compacted to the region keeps the buffer's layout (row-major): the region
    starts at 0 and is whole in every dimension but the first, so an element sits at the same
    offset in both (a pointer into the buffer may move to the cache)."""
    from ...ir.equality import structural_equal
    for k, ((mn, ext), d) in enumerate(zip(region, buf.shape)):
        if not common.is_zero(mn):
            return False
        if k == 0:
            continue
        if isinstance(ext, int):
            if not (isinstance(d, E.IntImm) and d.value == ext):
                return False
        elif not structural_equal(ext, d):
            return False
    return True


def compact_buffer(buf, scope, name, region):
    data = E.Var(name, "handle", E.PointerType(buf.dtype, scope))
    shape = tuple(E.IntImm(d.dtype, ext) if isinstance(ext, int) else ext
                  for (_, ext), d in zip(region, buf.shape))
    # the buffer's strides and offset come along, as in TVM (a copy of the buffer's
    # declaration with a new shape)
    return S.Buffer(name, shape, buf.dtype, data, strides=buf.strides,
                    elem_offset=buf.elem_offset, scope=scope)


def compact_copy_nest(sch, orig, cache, name, region, reading):
    """Copy between `orig[min + v]` and `cache[v]` for v over the region's extents."""
    loops, ivs, vals, cidx, oidx = [], [], [], [], []
    for k, ((mn, ext), d) in enumerate(zip(region, orig.shape)):
        if ext is None:
            raise sch.error(f"{sch._current}/symbolic-shape", f"buffer '{orig.name}' has a "
                            "non-constant region")
        lv = E.Var(f"ax{k}", d.dtype)
        v = E.Var(f"v{k}", d.dtype)
        loops.append(common.new_loop(lv, ext))
        dom = E.IntImm(d.dtype, ext) if isinstance(ext, int) else ext
        ivs.append(S.IterVar(v, E.Range(E.IntImm(d.dtype, 0), dom), "S"))
        vals.append(lv)
        cidx.append(v)
        oidx.append(v if common.is_zero(mn) else E.Add(mn, v, d.dtype))
    cpoint = tuple(E.Range(v, E.IntImm("int32", 1)) for v in cidx)
    opoint = tuple(E.Range(x, E.IntImm("int32", 1)) for x in oidx)
    if reading:
        store = S.BufferStore(cache, E.BufferLoad(orig, tuple(oidx), orig.dtype), tuple(cidx))
        reads, writes = (S.BufferRegion(orig, opoint),), (S.BufferRegion(cache, cpoint),)
    else:
        store = S.BufferStore(orig, E.BufferLoad(cache, tuple(cidx), orig.dtype), tuple(oidx))
        reads, writes = (S.BufferRegion(cache, cpoint),), (S.BufferRegion(orig, opoint),)
    block = S.Block(name, tuple(ivs), reads, writes, store)
    return common.nest(loops, S.BlockRealize(tuple(vals), common.TRUE, block))


def shift_buffer(node, old, new, region):
    """Accesses of `old` become accesses of `new` at index - region min."""
    mins = [mn for mn, _ in region]

    def one(i, m):
        if common.is_zero(m):
            return i
        li, lm = A.to_lin(i, {}), A.to_lin(m, {})
        keys = {A._akey(a) for a, _ in lm.terms}
        if any(A._akey(a) in keys for a, _ in li.terms) or li.const and lm.const:
            # terms or constants cancel: simplify
            return A.simplify(E.Sub(i, m, i.dtype))
        return E.Sub(i, m, i.dtype)

    def sh(idx):
        return tuple(one(i, m) for i, m in zip(idx, mins))

    def fn(y, x):
        if isinstance(y, E.BufferLoad) and y.buffer is old:
            return E.BufferLoad(new, sh(y.indices), y.dtype, y.span)
        if isinstance(y, S.BufferStore) and y.buffer is old:
            return dataclasses.replace(y, buffer=new, indices=sh(y.indices))
        if isinstance(y, S.BufferRegion) and y.buffer is old:
            return S.BufferRegion(new, tuple(E.Range(m, r.extent) for m, r in
                                             zip(sh(tuple(r.min for r in y.region)),
                                                 y.region)))
        return None
    return _ir.rebuild(node, fn)
