"""reverse_compute_inline: fold a consumer `D[g(v)] = f(B[L(v)])` into the producer of B.

The consumer's read indices L must be an affine iterator map of its iterators that can be
inverted: each index a sum of pieces `(x // lower) % extent * scale` of its iterators (or of
a fused `i * n + j`), the pieces of each iterator tiling it exactly and those of each index
forming a mixed radix number. Each consumer iterator is then an expression of the
producer's store indices; the producer stores `D[g(inv(s))] = f(its value)` and is
predicated to the instances whose consumer iterators lie in the consumer's domain.

Refused: a consumer that has an init, a predicate or a non-spatial iterator, is not a
single store, reads B at several different indices or at a map that is not invertible, or
whose iterators are not all determined; several producers, a producer (the innermost block
that writes B) that is not a single store, has a non-spatial iterator, or does not cover
what the consumer reads, a producer with an init unless the consumer copies B unchanged; a
buffer B that is an output of the function, has other readers (they would be left reading a
buffer nothing writes) or is read opaquely."""
from __future__ import annotations

import dataclasses

from ...ir import expr as E
from ...ir import stmt as S
from ...ir.equality import identical
from ...ir.visit import child_fields
from .. import _common as common
from . import common as inlining
from .. import _ir
from .reverse_map import dom_bounds, invert
from .reverse_producer import (check_covered, check_reduction_producer, leaf_writer,
                                       new_predicate, opaque_here)
from ..analysis import output_buffers, producers, refresh_regions
from ..registry import primitive


@primitive("reverse_compute_inline")
def reverse_compute_inline(sch, block):
    info = sch.block_info(block)
    blk = info.block
    func = sch.func(block.func)
    if blk.init is not None:
        raise sch.error("reverse_compute_inline/has-init", f"block '{blk.name_hint}' has an "
                        "init (it is a reduction)", blk)
    store = inlining.single_store(sch, blk, "reverse_compute_inline")
    scope = inlining.scope_of(sch, block.func, info)
    prods = producers(sch, block.func, info)
    if len(prods) != 1:
        raise sch.error("reverse_compute_inline/producers", f"block '{blk.name_hint}' has "
                        f"{len(prods)} producer blocks; exactly one is needed", blk)
    prod = leaf_writer(sch, block.func, prods[0], blk)
    pb = prod.block
    pstore = pb.body
    if not isinstance(pstore, S.BufferStore):
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
    if any(not all(identical(a, b) for a, b in zip(ld.indices, idx)) for ld in loads):
        raise sch.error("reverse_compute_inline/several-indices", f"block '{blk.name_hint}' "
                        f"reads '{buf.name}' at several places", blk)
    if pb.init is not None:
        check_reduction_producer(sch, pb, blk, store, buf)
    for other in sch.index(block.func).order:
        if other.block is blk or other.block is pb or \
                any(a is other.block for a in info.ancestors) or \
                any(a is other.block for a in prod.ancestors):
            continue
        if any(ld.buffer is buf for ld in _ir.buffer_loads(other.block, include_nested=False)) \
                or opaque_here(other.block, buf):
            raise sch.error("reverse_compute_inline/other-readers", f"block "
                            f"'{other.block.name_hint}' also reads '{buf.name}'",
                            other.block, [(blk, "consumer")])
    if not common.is_true(info.realize.predicate):
        raise sch.error("reverse_compute_inline/predicate", f"block '{blk.name_hint}' has a "
                        "predicate", blk)
    for b, what in ((pb, "producer"), (blk, "consumer")):
        if any(iv.kind != "S" for iv in b.iter_vars):
            raise sch.error("reverse_compute_inline/not-complete", f"the {what} "
                            f"'{b.name_hint}' has iterators that are not spatial", b)
    sub, extra = invert(sch, blk, idx, pstore.indices, pb, buf)
    pbounds = dom_bounds(pb)
    outer = {}
    for a in prod.ancestors:
        if isinstance(a, S.Block):
            outer.update(dom_bounds(a))
    check_covered(sch, blk, pb, sub, {**outer, **pbounds})

    def resolve(node):
        # the producer's own loads of B (a reduction's update) read what the consumer wrote
        return _ir.rebuild(node, lambda y, x: E.BufferLoad(store.buffer, tuple(
            _ir.substitute(i, sub) for i in store.indices), store.buffer.dtype)
            if isinstance(y, E.BufferLoad) and y.buffer is buf else None)

    def inlined(pst):
        rhs = resolve(pst.value)
        value = _ir.substitute(store.value, sub)
        value = _ir.rebuild(value, lambda y, x: rhs
                            if isinstance(y, E.BufferLoad) and y.buffer is buf else None)
        indices = tuple(_ir.substitute(i, sub) for i in store.indices)
        return dataclasses.replace(store, value=value, indices=indices, span=pst.span)

    new_init = pb.init
    if pb.init is not None:
        new_init = _ir.rebuild(pb.init, lambda y, x: inlined(y)
                               if isinstance(y, S.BufferStore) and y.buffer is buf else None)
    nb = dataclasses.replace(pb, body=inlined(pstore), init=new_init)
    nb = refresh_regions(nb)
    pred = new_predicate(blk, sub, pb, prod.realize, pbounds, extra)
    new_realize = dataclasses.replace(prod.realize, block=nb, predicate=pred)
    mapping = {}
    inlining.removal(info, mapping)
    mapping[id(prod.realize)] = new_realize
    new = _ir.replace_nodes(scope, mapping)
    if new is _ir.REMOVE:
        new = dataclasses.replace(scope, body=S.SeqStmt(()))
    new = _refresh_path(new, new_realize)
    sch.replace(block.func, scope, inlining.drop_alloc(new, buf))


def _refresh_path(root, target):
    """Recompute the declared regions of the blocks between the scope root and `target`."""
    def go(x, top):
        if x is target:
            return x, True
        if isinstance(x, tuple):
            for k, item in enumerate(x):
                n, hit = go(item, top)
                if hit:
                    return x[:k] + (n,) + x[k + 1:], True
            return x, False
        if not isinstance(x, S.Stmt):
            return x, False
        for f in child_fields(type(x)):
            v = getattr(x, f)
            n, hit = go(v, False)
            if hit:
                y = dataclasses.replace(x, **{f: n})
                if isinstance(y, S.Block) and not top:
                    y = refresh_regions(y)
                return y, True
        return x, False
    return go(root, True)[0]
