"""compute_inline: inline a block that computes `B[v...] = f(v...)` into every load of B.

Refused: a block that writes an output of the function, has an init (a reduction), is not
a single store whose indices are distinct iterators or constants, reads what it writes, or
whose buffer is used opaquely by another block (intrinsic argument, match_buffer, pointer).
An identity copy `X[I] = Y[I]` that these rules refuse (indices that are expressions, say
after `transform_layout`, or an opaque use such as a tensorized block's match_buffer) is
inlined by putting Y in X's place everywhere (copy_inline.py)."""
from __future__ import annotations

import dataclasses

from ...ir import expr as E
from ...ir import stmt as S
from . import common as inlining
from . import copy_inline
from .. import _ir
from ..analysis import opaque_uses, output_buffers, refresh_regions
from ..registry import primitive


@primitive("compute_inline")
def compute_inline(sch, block):
    info = sch.block_info(block)
    blk = info.block
    func = sch.func(block.func)
    if blk.init is not None:
        raise sch.error("compute_inline/has-init", f"block '{blk.name_hint}' has an init "
                        "(it is a reduction)", blk)
    store = inlining.single_store(sch, blk, "compute_inline")
    buf = store.buffer
    if any(buf is o for o in output_buffers(func)):
        raise sch.error("compute_inline/writes-output", f"block '{blk.name_hint}' writes "
                        f"'{buf.name}', an output of the function", blk)
    injective = inlining.distinct_iter_indices(blk, store.indices, allow_const=True)
    src = copy_inline.identity_source(store)
    if src is not None and (not injective or _used_opaquely(sch, block, info, buf)):
        copy_inline.inline_copy(sch, block, info, store, src)
        return None
    if not injective:
        raise sch.error("compute_inline/not-injective", f"block '{blk.name_hint}' does not "
                        f"store into '{buf.name}' at its iterators", blk)
    if any(ld.buffer is buf for ld in _ir.buffer_loads(store.value)):
        raise sch.error("compute_inline/self-read", f"block '{blk.name_hint}' reads the "
                        f"buffer '{buf.name}' it writes", blk)
    scope = inlining.scope_of(sch, block.func, info)
    others = [i for i in sch.index(block.func).order if i.block is not blk and i.scope is scope]
    for other in others:
        if any(s.buffer is buf for s in _ir.buffer_stores(other.block.body)):
            raise sch.error("compute_inline/several-writers", f"block '{other.block.name_hint}'"
                            f" also writes '{buf.name}'", other.block, [(blk, "inlined block")])
        if opaque_uses(other.block, buf):
            raise sch.error("compute_inline/opaque-access", f"block '{other.block.name_hint}' "
                            f"reads '{buf.name}' opaquely", other.block, [(blk, "inlined block")])
    pos = {id(v): k for k, v in enumerate(store.indices) if isinstance(v, E.Var)}
    params = [iv.var for iv in blk.iter_vars if id(iv.var) in pos]
    value = store.value
    for iv in blk.iter_vars:
        if id(iv.var) not in pos and _ir.uses_var(value, iv.var):
            raise sch.error("compute_inline/not-injective", f"block '{blk.name_hint}' "
                            f"computes with iterator '{iv.var.name}', which does not index "
                            f"'{buf.name}'", blk)

    def inline(y, x):
        if isinstance(y, E.BufferLoad) and y.buffer is buf:
            vmap = {id(p): y.indices[pos[id(p)]] for p in params}
            return _ir.substitute(value, vmap)
        if isinstance(y, S.Block) and y is not x and x is not None:
            # a nested block whose body changed: its declared regions follow the body
            return _keep_opaque_reads(x, refresh_regions(y))
        return None

    mapping = {}
    inlining.removal(info, mapping)
    for other in others:
        pred = other.realize.predicate
        in_pred = any(ld.buffer is buf for ld in _ir.buffer_loads(pred))
        if not in_pred and not any(ld.buffer is buf for ld in _ir.buffer_loads(other.block)):
            continue
        nb = _ir.rebuild(other.block, inline)
        # only the outermost blocks: nested ones were rebuilt with their parent
        if _nested_in_others(other, others):
            continue
        nb = _keep_opaque_reads(other.block, refresh_regions(nb))
        if in_pred:         # a `T.where` that reads the buffer computes it too
            mapping[id(other.realize)] = dataclasses.replace(
                other.realize, predicate=_ir.rebuild(pred, inline), block=nb)
        else:
            mapping[id(other.block)] = nb
    inlining.rewrite_scope(sch, block.func, scope, mapping, drop=buf)


def _used_opaquely(sch, block, info, buf) -> bool:
    """Whether another block of the function uses the buffer opaquely (value inlining
    refuses that; an identity copy is inlined by copy_inline instead)."""
    return any(opaque_uses(o.block, buf) for o in sch.index(block.func).order
               if o.block is not info.block)


def _nested_in_others(info, infos):
    return any(isinstance(a, S.Block) and any(a is o.block for o in infos)
               for a in info.ancestors)


def _keep_opaque_reads(old, new):
    """Declared reads of buffers the body still uses opaquely (a pointer, an intrinsic
    argument) are kept: inference from loads alone does not see them."""
    if old.reads is None or new.reads is None:
        return new
    seen = [r.buffer for r in new.reads]
    kept = tuple(r for r in old.reads if not any(r.buffer is b for b in seen)
                 and opaque_uses(new, r.buffer))
    return dataclasses.replace(new, reads=kept + new.reads) if kept else new
