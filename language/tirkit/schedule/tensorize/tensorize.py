"""tensorize: replace a block's computation by a tensor instruction's implementation.

    sch.tensorize(block_or_loop, "x86.avx2.dot_8x4_u8s8s32")

Given a loop, the loop is first blockized. The (outer) block must hold, under loops, one
block that computes what the instruction's `desc` computes: its iterators in order have the
desc's kinds and extents, its update is the desc's (same expression tree, dtypes and casts),
and each operand is accessed at its region's start plus the desc's index, the desc's
dimensions being the region's trailing ones (the others of extent one). The block's body
becomes the instruction's `impl`, its parameters bound to those regions by `T.match_buffer`;
its iterators, regions and init stay. Intrinsics come from `tirkit.tensorize.load()` (the
shipped ones, $TIRKIT_INTRINSICS, or the folders given as `intrinsics`)."""
from __future__ import annotations

import dataclasses

from ...arith import writeback as A
from ...ir import expr as E
from ...ir import stmt as S
from ...tensorize.library import load
from ...tensorize.mapping import compute_isomorphism
from .. import _common as common
from .. import _ir
from ..analysis import realizes_under
from ..registry import primitive


@primitive("tensorize")
def tensorize(sch, block_or_loop, intrin, intrinsics=None):
    from ..state import LoopRV
    lib = load(intrinsics)
    it = lib.get(intrin)
    if it is None:
        raise sch.error("tensorize/unknown-intrinsic", f"no intrinsic named '{intrin}' "
                        f"(known: {', '.join(lib.names())})")
    if isinstance(block_or_loop, LoopRV):
        block = sch.blockize(block_or_loop)
    else:
        block = block_or_loop
    info = sch.block_info(block)
    outer = info.block
    inner = [r for r in realizes_under(outer.body)]
    if len(inner) != 1:
        raise sch.error("tensorize/not-one-block", f"block '{outer.name_hint}' holds "
                        f"{len(inner)} blocks; the instruction computes one", outer)
    r = inner[0]
    d_r = it.update

    def refuse(msg):
        return sch.error("tensorize/mismatch", f"block '{r.block.name_hint}' does not compute "
                         f"what '{it.name}' does: {msg}", r.block, [(outer, "tensorized block")])
    ivs, d_ivs = r.block.iter_vars, d_r.block.iter_vars
    if len(ivs) != len(d_ivs):
        raise refuse(f"{len(ivs)} iterators where it has {len(d_ivs)}")
    for iv, div in zip(ivs, d_ivs):
        if iv.kind != div.kind or not isinstance(iv.dom.extent, E.IntImm) or \
                iv.dom.extent.value != div.dom.extent.value:
            raise refuse(f"iterator '{iv.var.name}' is {iv.kind}[{_ext(iv)}], the "
                         f"instruction's '{div.var.name}' is {div.kind}[{_ext(div)}]")
    if not common.is_true(r.predicate):
        raise refuse("it runs under a predicate")
    bufmap = compute_isomorphism(r.block, d_r.block)
    if isinstance(bufmap, str):
        raise refuse(bufmap)
    regions = {id(x.buffer): x for x in (outer.reads or ()) + (outer.writes or ())}
    vmap = {id(div.var): iv.var for iv, div in zip(ivs, d_ivs)}
    bounds = {id(iv.var): (0, iv.dom.extent.value - 1) for iv in ivs}
    d_params = [it.desc.buffer_of(p) for p in it.desc.params]
    i_params = [it.impl.buffer_of(p) for p in it.impl.params]
    matches = []
    names = _names_in(sch.func(block.func))
    for db, ib in zip(d_params, i_params):
        pb = bufmap.get(id(db))
        if pb is None or id(pb) not in regions:
            raise refuse(f"operand '{db.name}' has no region in block '{outer.name_hint}'")
        reg = regions[id(pb)]
        lead = len(pb.shape) - len(db.shape)
        if lead < 0:
            raise refuse(f"'{pb.name}' has fewer dimensions than '{db.name}'")
        for k, rg in enumerate(reg.region):
            want = 1 if k < lead else db.shape[k - lead].value
            if not E.is_const_int(rg.extent, want):
                raise refuse(f"the region of '{pb.name}' has extent {_txt(rg.extent)} in "
                             f"dimension {k}; the instruction takes {want}")
        p_acc = _accesses(r.block, pb)
        d_acc = _accesses(d_r.block, db)
        for pidx, didx in zip(p_acc, d_acc * len(p_acc)):
            for k, e in enumerate(pidx):
                want = reg.region[k].min if k < lead else \
                    E.Add(reg.region[k].min, _ir.substitute(didx[k - lead], vmap), e.dtype)
                if not _same(e, want, bounds):
                    raise refuse(f"'{pb.name}' is accessed at `{_txt(e)}` in dimension {k}, "
                                 f"not at `{_txt(want)}` (the access isomorphism fails)")
        name = _fresh(ib.name, names)
        data = E.Var(name, "handle", E.PointerType(ib.dtype, pb.scope))
        strides = tuple(E.Var(f"{name}_s{k}", st.dtype) if isinstance(st, E.Var) else st
                        for k, st in enumerate(ib.strides))
        view = dataclasses.replace(ib, name=name, data=data, scope=pb.scope, strides=strides)
        matches.append((ib, view, S.MatchBufferRegion(view, reg)))
    root = it.impl.body.block if isinstance(it.impl.body, S.BlockRealize) else None
    body = _fresh_lets(root.body if root is not None else it.impl.body)
    for ib, view, _ in matches:
        body = _ir.replace_buffer(body, ib, view)
        body = _ir.substitute(body, {id(a): b for a, b in zip(ib.strides, view.strides)
                                     if a is not b})
    # the impl's own allocations (the tensor-core fragments), renamed apart
    allocs = []
    for ab in (root.alloc_buffers if root is not None else ()):
        name = _fresh(ab.name, names)
        nb = dataclasses.replace(ab, name=name, data=E.Var(name, "handle",
                                                          E.PointerType(ab.dtype, ab.scope)))
        body = _ir.replace_buffer(body, ab, nb)
        allocs.append(nb)
    new = dataclasses.replace(outer, body=body, alloc_buffers=outer.alloc_buffers +
                              tuple(allocs), match_buffers=tuple(m for _, _, m in matches))
    sch.replace(block.func, outer, new)
    return None


def _accesses(blk, buf):
    out = []
    for x in _ir.stmts(blk.body):
        if isinstance(x, S.BufferStore) and x.buffer is buf:
            out.append(x.indices)
    out += [ld.indices for ld in _ir.buffer_loads(blk.body) if ld.buffer is buf]
    return out


def _same(a, b, bounds):
    d = A.simplify(E.Sub(a, b, a.dtype), bounds)
    return E.is_const_int(d, 0)


def _ext(iv):
    return _txt(iv.dom.extent)


def _txt(e):
    from ...ir.text import expr_text
    return expr_text(e)


def _names_in(func):
    names = {b.name for _, b in func.buffer_map}
    for x in _ir.stmts(func.body):
        if isinstance(x, S.Block):
            names.update(b.name for b in x.alloc_buffers)
            names.update(m.buffer.name for m in x.match_buffers)
    return names


def _fresh(base, names):
    name, k = base, 0
    while name in names:
        k += 1
        name = f"{base}_{k}"
    names.add(name)
    return name


def _fresh_lets(body):
    """The impl's body with its let variables renamed apart (one definition each, per use)."""
    vmap = {}
    for x in _ir.stmts(body):
        if isinstance(x, S.LetStmt):
            vmap[id(x.var)] = E.Var(x.var.name, x.var.dtype)

    def fn(y, x):
        if isinstance(x, E.Var) and id(x) in vmap:
            return vmap[id(x)]
        if isinstance(x, S.LetStmt) and id(x.var) in vmap:
            return dataclasses.replace(y, var=vmap[id(x.var)])
        return None
    return _ir.rebuild(body, fn)
