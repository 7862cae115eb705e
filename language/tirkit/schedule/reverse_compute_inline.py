"""reverse_compute_inline: fold a consumer `D[g(v)] = f(B[v...])` into the producer of B.

Refused: a consumer that has an init, writes several buffers or is not a single store,
reads B at anything but distinct iterators that cover all of its own, reads several
producers' buffers that are not ready, or whose producer is not a single store; a buffer B
that is an output of the function or is read opaquely."""
from __future__ import annotations

import dataclasses

from ..ir import expr as E
from ..ir import stmt as S
from . import _arith as A
from . import _common as C
from . import _inline as I
from . import _ir
from .analysis import opaque_uses, output_buffers, producers, refresh_regions
from .registry import primitive


@primitive("reverse_compute_inline")
def reverse_compute_inline(sch, block):
    info = sch.block_info(block)
    blk = info.block
    func = sch.func(block.func)
    if blk.init is not None:
        raise sch.error("reverse_compute_inline/has-init", f"block '{blk.name_hint}' has an "
                        "init (it is a reduction)", blk)
    store = I.single_store(sch, blk, "reverse_compute_inline")
    scope = I.scope_of(sch, block.func, info)
    prods = producers(sch, block.func, info)
    if len(prods) != 1:
        raise sch.error("reverse_compute_inline/producers", f"block '{blk.name_hint}' has "
                        f"{len(prods)} producer blocks; exactly one is needed", blk)
    prod = prods[0]
    pb = prod.block
    pstore = pb.body
    if not isinstance(pstore, S.BufferStore) or pb.init is not None:
        raise sch.error("reverse_compute_inline/producer-not-single-store",
                        f"the producer '{pb.name_hint}' is not a single buffer store",
                        pb, [(blk, "consumer")])
    buf = pstore.buffer
    if any(buf is o for o in output_buffers(func)):
        raise sch.error("reverse_compute_inline/writes-output", f"'{buf.name}' is an output "
                        "of the function", pb, [(blk, "consumer")])
    loads = [ld for ld in _ir.buffer_loads(store) if ld.buffer is buf]
    if not loads:
        raise sch.error("reverse_compute_inline/no-load", f"block '{blk.name_hint}' reads "
                        f"'{buf.name}' only opaquely", blk)
    idx = loads[0].indices
    if any(not all(a is b for a, b in zip(ld.indices, idx)) for ld in loads):
        raise sch.error("reverse_compute_inline/several-indices", f"block '{blk.name_hint}' "
                        f"reads '{buf.name}' at several places", blk)
    if not I.distinct_iter_indices(blk, idx) or len(idx) != len(blk.iter_vars):
        raise sch.error("reverse_compute_inline/not-bijective", f"block '{blk.name_hint}' "
                        f"does not read '{buf.name}' at exactly its iterators", blk)
    if not I.distinct_iter_indices(pb, pstore.indices):
        # stored at expressions of its iterators: fine when the consumer covers the buffer
        for cv, d in zip(idx, buf.shape):
            civ = next(iv for iv in blk.iter_vars if iv.var is cv)
            if not (isinstance(civ.dom.min, E.IntImm) and civ.dom.min.value == 0 and
                    _same_extent(civ.dom.extent, d)):
                raise sch.error("reverse_compute_inline/not-injective", f"the producer "
                                f"'{pb.name_hint}' does not store at its iterators and block "
                                f"'{blk.name_hint}' reads only part of '{buf.name}'", pb)
    for other in sch.index(block.func).order:
        if other.block is blk or other.block is pb or \
                any(a is other.block for a in info.ancestors):
            continue
        if any(ld.buffer is buf for ld in _ir.buffer_loads(other.block)) or \
                opaque_uses(other.block, buf):
            raise sch.error("reverse_compute_inline/other-readers", f"block "
                            f"'{other.block.name_hint}' also reads '{buf.name}'",
                            other.block, [(blk, "consumer")])
    if not (isinstance(info.realize.predicate, E.IntImm) and info.realize.predicate.value):
        raise sch.error("reverse_compute_inline/predicate", f"block '{blk.name_hint}' has a "
                        "predicate", blk)
    # consumer iterator idx[k] takes the producer's store index k
    vmap = {id(v): p for v, p in zip(idx, pstore.indices)}
    new_value = _ir.rebuild(store.value, lambda y, x: pstore.value
                            if isinstance(y, E.BufferLoad) and y.buffer is buf else None)
    new_value = _ir.substitute(new_value, vmap)
    new_indices = tuple(_ir.substitute(i, vmap) for i in store.indices)
    new_store = dataclasses.replace(store, value=new_value, indices=new_indices,
                                    span=pstore.span)
    nb = dataclasses.replace(pb, body=new_store)
    nb = refresh_regions(nb)
    # where the consumer covers less than the producer computes, the producer is predicated
    pred = prod.realize.predicate
    p_ivs = {id(iv.var): (iv, val) for iv, val in zip(pb.iter_vars, prod.realize.iter_values)}
    c_ivs = {id(iv.var): iv for iv in blk.iter_vars}
    bounds = C.loop_bounds(prod.loops)
    for cv, pv in zip(idx, pstore.indices):
        if id(pv) not in p_ivs:
            continue
        civ = c_ivs[id(cv)]
        piv, val = p_ivs[id(pv)]
        clo, cext = civ.dom.min, civ.dom.extent
        plo, pext = piv.dom.min, piv.dom.extent
        if not all(isinstance(x, E.IntImm) for x in (clo, cext, plo, pext)):
            continue
        if clo.value + cext.value < plo.value + pext.value:
            pred = C.and_(pred, A.simplify(E.LT(val, C.int32(clo.value + cext.value),
                                                "bool"), bounds))
        if clo.value > plo.value:
            pred = C.and_(pred, A.simplify(E.GE(val, clo, "bool"), bounds))
    new_realize = dataclasses.replace(prod.realize, block=nb, predicate=pred)
    mapping = {}
    I.removal(info, mapping)
    mapping[id(prod.realize)] = new_realize
    I.rewrite_scope(sch, block.func, scope, mapping, drop=buf)


def _same_extent(a, b):
    if isinstance(a, E.IntImm) and isinstance(b, E.IntImm):
        return a.value == b.value
    return a is b
