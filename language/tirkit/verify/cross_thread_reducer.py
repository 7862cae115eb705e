"""thread/invalid-reducer: a reduction across threadIdx whose update is not a reducer.

A block whose reduction iterator is fed by a `threadIdx.*` loop is lowered to a
cross-thread reduction (`LowerCrossThreadReduction`): its update must match a commutative
reducer (`+`, `*`, `min`, `max`, ...) so that the threads' partial results can be combined
in any order.  An update that subtracts, divides or takes a remainder with the accumulator
(`B[i] = B[i] - A[i, k]`) matches none, and TVM's compile stops there.  So does an update
of several buffers (let-bound values, then their stores) that is no reducer's combination
as `analysis/reducers.py` reads them (argmax, argmin, a pair of sums: TVM's registry), such
as stores where one reads what another stored.  Reported on the (first) store; the thread
loop is a related location."""
from __future__ import annotations

from ..analysis.reducers import match_updates, update_shape
from ..diagnostics import error
from ..ir import expr as E
from ..ir import stmt as S
from . import register
from ._common import binding_scope, block_label, func_accesses

_NOT_REDUCERS = {E.Sub: "-", E.Div: "/", E.FloorDiv: "//", E.FloorMod: "%", E.Mod: "%"}


def _thread_feeding(fa, r):
    """The threadIdx loop that feeds a reduction iterator of the block, or None."""
    from ..arith import Analyzer
    b = r.block
    _, loops, _ = binding_scope(fa, r)
    by_var = {lp.var: lp for lp in loops if lp.kind == "thread_binding" and
              (lp.thread_tag or "").startswith("threadIdx")}
    if not by_var:
        return None
    an = Analyzer()
    for iv, v in zip(b.iter_vars, r.iter_values):
        if iv.kind != "R":
            continue
        for var in an.to_aff(v).all_vars():
            if var in by_var:
                return by_var[var]
    return None


def _same_load(x, store):
    return isinstance(x, E.BufferLoad) and x.buffer is store.buffer and \
        len(x.indices) == len(store.indices) and \
        all(a == b for a, b in zip(x.indices, store.indices))


def _stores_of(body) -> list:
    """The stores of an update of several buffers (reducers.update_shape: let-bound values,
    then their stores, or two stores or more), or [] for a body of another shape."""
    shape = update_shape(body)
    if shape is None or (len(shape[1]) < 2 and not shape[0]):
        return []
    return shape[1]


def _several(b, lp):
    stores = _stores_of(b.body)
    span = (stores[0].span or b.name_span) if stores else None
    if span is None or match_updates(b.body) is not None:
        return None
    names = ", ".join(dict.fromkeys(f"`{x.buffer.name}`" for x in stores))
    rel = [(lp.span, f"`{lp.var.name}` is bound to {lp.thread_tag} here")] if lp.span else []
    return error("thread/invalid-reducer",
                 f"{block_label(b)} reduces across {lp.thread_tag}, but its update of {names} "
                 "is not the combination of a commutative reducer (argmax, argmin, a pair of "
                 "sums): the threads' partial results cannot be combined", span, rel)


@register("thread/invalid-reducer", fast=True)
def check_cross_thread_reducer(func, ctx):
    fa = func_accesses(func, ctx)
    out = []
    for r in fa.realizes:
        b = r.block
        if not any(iv.kind == "R" for iv in b.iter_vars) or \
                not isinstance(b.body, (S.BufferStore, S.LetStmt, S.SeqStmt)):
            continue
        lp = _thread_feeding(fa, r)
        if lp is None:
            continue
        if not isinstance(b.body, S.BufferStore):
            d = _several(b, lp)
            out += [d] if d is not None else []
            continue
        st = b.body
        op = _NOT_REDUCERS.get(type(st.value))
        if op is None or not (_same_load(st.value.a, st) or _same_load(st.value.b, st)):
            continue
        span = st.span or b.name_span
        if span is None:
            continue
        rel = [(lp.span, f"`{lp.var.name}` is bound to {lp.thread_tag} here")] if lp.span else []
        out.append(error("thread/invalid-reducer",
                         f"{block_label(b)} reduces across {lp.thread_tag}, but its update "
                         f"`{st.buffer.name} = ... {op} ...` is not a commutative reducer "
                         f"(+, *, min, max): the threads' partial results cannot be combined",
                         span, rel))
    return out
