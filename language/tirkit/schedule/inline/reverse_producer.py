"""The producer side of reverse_compute_inline: the block that writes the buffer (the innermost
one under a producer that holds blocks), the checks on it (a reduction only under a plain
copy, every position the consumer reads computed, opaque uses outside nested blocks), and
its new predicate (the instances whose consumer iterators are in range)."""
from __future__ import annotations

import dataclasses

from ...ir import expr as E
from ...ir import stmt as S
from ...ir.equality import identical
from .. import _arith as A
from .. import _common as common
from .. import _ir
from .reverse_map import const_like, is_const
from ..analysis import opaque_uses


def leaf_writer(sch, func, prod, consumer):
    """The innermost block under the producer that writes the consumer's buffer."""
    if not _ir.buffer_stores(prod.block.body) or not any(
            isinstance(s, S.BlockRealize) for s in _ir.stmts(prod.block.body)):
        return prod
    buffers = [s.buffer for s in _ir.buffer_stores(prod.block.body)]
    reads = [ld.buffer for ld in _ir.buffer_loads(consumer.body)]
    targets = [b for b in buffers if any(b is r for r in reads)]
    leaves = []
    for other in sch.index(func).order:
        if not any(a is prod.block for a in other.ancestors):
            continue
        if any(isinstance(s, S.BlockRealize) for s in _ir.stmts(other.block.body)):
            continue
        if any(any(s.buffer is t for t in targets) for s in _ir.buffer_stores(other.block.body)):
            leaves.append(other)
    if len(leaves) != 1:
        raise sch.error("reverse_compute_inline/producer-not-single-store",
                        f"the producer '{prod.block.name_hint}' writes the buffer in "
                        f"{len(leaves)} blocks", prod.block, [(consumer, "consumer")])
    return leaves[0]


def check_reduction_producer(sch, pb, blk, store, buf):
    """A reduction producer: sound only when the consumer copies B unchanged and the
    reduction reads B where it writes it."""
    ok = isinstance(store.value, E.BufferLoad) and store.value.buffer is buf and \
        store.value.dtype == store.buffer.dtype
    for node in (pb.body, pb.init):
        for ld in _ir.buffer_loads(node):
            if ld.buffer is buf and not all(identical(a, b) for a, b in
                                            zip(ld.indices, pb.body.indices)):
                ok = False
        for st in _ir.buffer_stores(node):
            if st.buffer is buf and not all(identical(a, b) for a, b in
                                            zip(st.indices, pb.body.indices)):
                ok = False
    if not ok:
        raise sch.error("reverse_compute_inline/producer-not-single-store",
                        f"the producer '{pb.name_hint}' is a reduction and block "
                        f"'{blk.name_hint}' does more than copy '{buf.name}'", pb,
                        [(blk, "consumer")])


def opaque_here(block, buf):
    return bool(opaque_uses(dataclasses.replace(block, body=_strip_nested(block.body)), buf)) \
        if any(isinstance(s, S.BlockRealize) for s in _ir.stmts(block.body)) \
        else bool(opaque_uses(block, buf))


def _strip_nested(stmt):
    return _ir.rebuild(stmt, lambda y, x: S.SeqStmt(()) if isinstance(y, S.BlockRealize)
                       else None)


def check_covered(sch, blk, pb, sub, pbounds):
    """The producer must reach every instance of the consumer (TVM's coverage check)."""
    for iv in blk.iter_vars:
        e = sub.get(id(iv.var))
        if e is None:
            continue
        b = A.bound_of(e, pbounds)
        lo, ext = iv.dom.min, iv.dom.extent
        if b is None or not (isinstance(lo, E.IntImm) and isinstance(ext, E.IntImm)):
            continue
        if b[0] > lo.value or b[1] < lo.value + ext.value - 1:
            raise sch.error("reverse_compute_inline/not-covered", f"the producer "
                            f"'{pb.name_hint}' does not compute every position block "
                            f"'{blk.name_hint}' reads", pb, [(blk, "consumer")])


def new_predicate(blk, sub, pb, realize, pbounds, extra=()):
    """The producer's predicate: its instances whose consumer iterators are in range (and,
    from `extra`, whose store indices are within what the consumer's read can reach)."""
    conds = []
    pdoms = {id(iv.var): iv.dom for iv in pb.iter_vars}
    ranges = [(sub[id(iv.var)], iv.dom.min, iv.dom.extent) for iv in blk.iter_vars]
    ranges += [(e, const_like(base, e), const_like(span, e)) for e, base, span in extra]
    for e, lo, ext in ranges:
        if isinstance(e, E.Var) and id(e) in pdoms and identical(pdoms[id(e)].min, lo) and \
                identical(pdoms[id(e)].extent, ext):
            continue                # the producer's iterator over the same domain
        if isinstance(lo, E.IntImm) and isinstance(ext, E.IntImm):
            hi = const_like(lo.value + ext.value, lo)
        else:
            hi = ext if is_const(lo, 0) else E.Add(lo, ext, lo.dtype)
        b = A.bound_of(e, pbounds)
        if not (b is not None and isinstance(lo, E.IntImm) and b[0] >= lo.value):
            conds.append(E.LE(lo, A.simplify(e, pbounds), "bool"))
        if not (b is not None and isinstance(hi, E.IntImm) and b[1] < hi.value):
            conds.append(A.simplify(E.LT(e, hi, "bool"), pbounds))
    binding = {id(iv.var): v for iv, v in zip(pb.iter_vars, realize.iter_values)}
    new = []
    for c in conds:
        c = _ir.substitute(c, binding)
        c = E.LE(c.a, A.simplify(c.b), "bool") if isinstance(c, E.LE) else _lt_div(A.simplify(c))
        if not common.is_true(c):
            new.append(c)
    if len(new) >= 2:
        new[0] = _lt_and_mod(new[0], new[1])
    out = realize.predicate
    for c in new:
        if any(identical(c, x) for x in common.conjuncts(out)):
            continue
        out = common.and_(out, c)
    return out


def _lt_div(c):
    """`x // a < b` is `x < a * b` (a > 0)."""
    if isinstance(c, E.LT) and isinstance(c.a, E.FloorDiv) and isinstance(c.b, E.IntImm) \
            and isinstance(c.a.b, E.IntImm) and c.a.b.value > 0:
        return E.LT(A.simplify(c.a.a), const_like(c.a.b.value * c.b.value, c.b), "bool")
    return c


def _lt_and_mod(c, d):
    """`x < a and x % b < r` with b dividing a: x < a - b + r (the largest x has x % b = b - 1)."""
    if isinstance(c, E.LT) and isinstance(d, E.LT) and isinstance(c.b, E.IntImm) and \
            isinstance(d.b, E.IntImm) and isinstance(d.a, E.FloorMod) and \
            isinstance(d.a.b, E.IntImm) and d.a.b.value > 0 and identical(d.a.a, c.a) and \
            c.b.value % d.a.b.value == 0:
        return E.LT(c.a, const_like(c.b.value - d.a.b.value + d.b.value, c.b), "bool")
    return c
