"""The asymptotic cost of a sparse iteration of the IR (`with T.sp_iter(...)`), and the loop
orders that do asymptotically less work for every input.

The iteration's tensors are its sparse buffers, each level's format that of its axis (`u`,
`c`, `h`); a level indexed by the iterator of its own axis is stepped, any other is located
(tirkit's lowering searches it, which needs no particular order); a sorted compressed level
of the same coordinates as the iterated one is walked with it by merge (stepped too: each
level is walked in full).  The candidate orders are
the permutations of the iterated axes that keep every axis after its parent."""
from __future__ import annotations

from dataclasses import dataclass, replace
from itertools import permutations

from ...ir import expr as E
from ...ir.equality import identical
from ...ir.sparse import SparseBuffer, SparseIteration
from ...ir.visit import walk
from .model import LOCATE, STEP, Kernel, Program, Tensor, program_cost
from .query import strictly_less
from .render import render

CODE = "cost/asymptotically-dominated"
MERGE = "merge"          # stepped with the iterated level when the level's parent is bound


@dataclass(frozen=True)
class Order:
    iteration: SparseIteration        # the iteration with its iterators in this order
    axes: tuple                       # axis names, outermost first
    cost: object                      # Cost, with what every order pays
    text: str                         # readable cost of the loops alone


@dataclass(frozen=True)
class IterationCost:
    current: Order
    better: tuple                     # undominated orders strictly cheaper than the current


def _dimension_names(func):
    names = []
    for a in func.sparse_axes:
        if not any(identical(a.length, b.length) for b, _ in names):
            names.append((a, a.name))
    return names


def _dim(names, axis):
    for a, n in names:
        if identical(a.length, axis.length):
            return n
    return axis.name


def kernel_of(func, it: SparseIteration):
    """(Kernel, protocols) of the iteration, or None when it is not a product the model
    covers (an index that is not an iterator, no sparse buffer written)."""
    var_of = {id(v.var): v for v in it.sp_iter_vars}
    accesses, stores = [], []

    def visit(x):
        if isinstance(x, (E.BufferLoad,)) and isinstance(x.buffer, SparseBuffer):
            accesses.append(x)
        elif type(x).__name__ == "BufferStore" and isinstance(x.buffer, SparseBuffer):
            stores.append(x)
    walk(it.body, visit)
    if not stores:
        return None
    out_buf = stores[0].buffer
    seen, tensors, protocols = set(), [], []
    names = _dimension_names(func)
    out = None
    for acc in stores[:1] + accesses:
        b = acc.buffer
        if id(b) in seen:
            continue
        seen.add(id(b))
        idxs, protos = [], []
        for x, ax in zip(acc.indices, b.axes):
            v = var_of.get(id(x)) if isinstance(x, E.Var) else None
            if v is None:
                return None
            idxs.append(v.var.name)
            protos.append(STEP if v.axis is ax else MERGE if _merged(v.axis, ax) else LOCATE)
        formats = tuple(ax.level_format for ax in b.axes)
        t = Tensor(b.name, tuple(idxs), formats, any(f != "u" for f in formats))
        if b is out_buf:
            out = t
        else:
            tensors.append(t)
            protocols.append(tuple(protos))
    dims = tuple((v.var.name, _dim(names, v.axis)) for v in it.sp_iter_vars)
    return Kernel(out, tuple(tensors), dims), tuple(protocols)


def _merged(a, b) -> bool:
    """Two sorted compressed levels of the same coordinates: the lowering walks them together
    (a merge) when one is iterated and the other read as a factor."""
    return all(x.kind == "sparse_variable" and x.sorted and x.format != "hash" for x in (a, b)) \
        and identical(a.length, b.length)


def _legal(its) -> bool:
    for k, v in enumerate(its):
        p = v.axis.parent
        if p is None:
            continue
        if not any(u.axis is p or (p.kind == "dense_fixed" and identical(u.axis.length,
                                                                         p.length))
                   for u in its[:k]):
            return False
    return True


def _protocols(kernel, protocols, order):
    """The lowering merges a level only where the loops have bound its outer levels."""
    out = []
    for t, protos in zip(kernel.inputs, protocols):
        row = []
        for k, (x, p) in enumerate(zip(t.idxs, protos)):
            if p == MERGE:
                bound = all(order.index(y) < order.index(x) for y in t.idxs[:k])
                p = STEP if bound else LOCATE
            row.append(p)
        out.append(tuple(row))
    return tuple(out)


def _order(kernel, protocols, it, its) -> Order:
    order = tuple(v.var.name for v in its)
    prog = Program(order, _protocols(kernel, protocols, order))
    full = program_cost(kernel, prog, located_any_order=True, coiterate="union")
    bare = program_cost(kernel, prog, sunk=False, located_any_order=True, coiterate="union")
    return Order(replace(it, sp_iter_vars=tuple(its)), tuple(v.axis.name for v in its), full,
                 render(bare))


def iteration_cost(func, it: SparseIteration):
    """IterationCost of one sparse iteration, or None when the model does not cover it."""
    got = kernel_of(func, it)
    if got is None:
        return None
    kernel, protocols = got
    current = _order(kernel, protocols, it, list(it.sp_iter_vars))
    cands = [_order(kernel, protocols, it, list(p)) for p in permutations(it.sp_iter_vars)
             if _legal(p) and list(p) != list(it.sp_iter_vars)]
    cheaper = [c for c in cands if strictly_less(c.cost, current.cost)]
    best = [c for c in cheaper if not any(strictly_less(d.cost, c.cost) for d in cheaper)]
    return IterationCost(current, tuple(best))


def sparse_iterations(func):
    out = []
    walk(func.body, lambda x: out.append(x) if isinstance(x, SparseIteration) else None)
    return out


def iteration_at(func, line):
    """The sparse iteration whose `with T.sp_iter` line is `line`, or that holds it."""
    best = None
    for it in sparse_iterations(func):
        s = it.span
        if s is not None and s.line <= line <= s.end_line:
            if best is None or s.line >= best.span.line:
                best = it
    return best


def reordered(func, it: SparseIteration, order: Order):
    """func with `it` iterating in `order`."""
    from ...ir.visit import rebuild

    def fn(new, old):
        return order.iteration if old is it else None
    return replace(func, body=rebuild(func.body, fn))


__all__ = ["CODE", "IterationCost", "Order", "iteration_cost", "iteration_at", "kernel_of",
           "reordered", "sparse_iterations"]
