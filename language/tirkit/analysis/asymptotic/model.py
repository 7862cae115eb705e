"""The asymptotic cost of a loop nest over sparse tensors (Ahrens, Kjolstad, Amarasinghe,
PLDI 2022): an einsum-like kernel, the programs that compute it (a loop order and, for each
level of each sparse input, a protocol), and each program's task sets.

Levels have formats `u` (uncompressed), `c` (compressed) and `h` (hashed).  A loop over index
x visits, for each task of the loops around it, either every coordinate of x's dimension, or
only the coordinates where the inputs it *steps* on x are nonzero (their intersection: the
kernel is a product); an input read by *locate* is probed at the coordinate (constant time
for `u` and `h`).  A sparse input whose levels the loop order visits out of storage order
is first transposed into a workspace in the concordant order (its cost: its nonzeros).  The
program's cost is the sum of the task sets of its loops, the transpositions, and the cost
every program pays (reading each sparse input, each dimension)."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from itertools import permutations, product

from .query import Cost, query

STEP, LOCATE = "step", "locate"


@dataclass(frozen=True)
class Tensor:
    name: str
    idxs: tuple              # index names, in storage (level) order
    formats: tuple           # "u" / "c" / "h" per level
    hollow: bool = True      # a sparse (fiber) tensor; a plain dense array is not

    @property
    def order(self):
        return len(self.idxs)


@dataclass(frozen=True)
class Kernel:
    """`output[...] += product of inputs` over every index."""
    output: Tensor
    inputs: tuple
    dims: tuple              # ((index, dimension name), ...)

    @property
    def indices(self):
        seen = []
        for t in (self.output,) + tuple(self.inputs):
            for x in t.idxs:
                if x not in seen:
                    seen.append(x)
        return tuple(seen)

    def dim(self, x):
        return dict(self.dims)[x]


@dataclass(frozen=True)
class Program:
    order: tuple             # loop indices, outermost first
    protocols: tuple         # per input: per level STEP / LOCATE (dense inputs: LOCATE)


def _existential(name, k):
    return f"{name}·{k}"


def tensor_atom(t: Tensor, known: set, tag: str):
    """T(args) with the indices not in `known` hidden as existential variables."""
    args, dims = [], []
    for k, x in enumerate(t.idxs):
        v = x if x in known else _existential(f"{tag}{t.name}", k)
        args.append(v)
        dims.append((v, x))
    return (t.name, tuple(args)), dims


def concordant(t: Tensor, order) -> bool:
    pos = [order.index(x) for x in t.idxs]
    return pos == sorted(pos)


def needs_transpose(t: Tensor, protos, order, located_any_order=False) -> bool:
    """A sparse input the loops visit out of storage order is transposed first (Pigeon's
    concordization).  With `located_any_order`, only one whose compressed or hashed level is
    stepped before an outer level of it is bound: a level that is only located (searched, as
    tirkit's lowering does) needs no particular order."""
    if not t.hollow or concordant(t, order):
        return False
    if not located_any_order:
        return True
    for k, (x, f, p) in enumerate(zip(t.idxs, t.formats, protos)):
        if p == STEP and f in ("c", "h") and any(order.index(y) > order.index(x)
                                                 for y in t.idxs[:k]):
            return True
    return False


def program_cost(kernel: Kernel, prog: Program, sunk=True, located_any_order=False,
                 coiterate="intersection") -> Cost:
    """The program's cost.  `located_any_order`: only stepped levels need storage order
    (tirkit's lowering searches located ones); `coiterate="union"`: several stepped levels
    of one loop are each walked in full.  The formats matter here (a stepped dense level
    does not filter its loop): this is the cost of tirkit's lowering of one sparse
    iteration; the frontier of Pigeon's spaces walks the program's statements (walk.py)."""
    order = prog.order
    dimof = dict(kernel.dims)
    terms = []
    levels = []                       # per input: its levels (index, format, protocol)
    for t, protos in zip(kernel.inputs, prog.protocols):
        lv = list(zip(t.idxs, t.formats, protos))
        if needs_transpose(t, protos, order, located_any_order):
            lv.sort(key=lambda z: order.index(z[0]))
            # transposed into a workspace in loop order (same formats, level by level)
            lv = [(x, f, p) for (x, _, p), (_, f, _) in
                  zip(lv, zip(t.idxs, t.formats, protos))]
            atom, dvars = tensor_atom(t, set(t.idxs), "")
            terms.append(_q(t.idxs, [atom], dvars, dimof))
        levels.append(lv)
    atoms, dvars = [], []          # what the tasks reaching the current depth satisfy
    for d, x in enumerate(order):
        known = set(order[:d + 1])
        stepped = []
        for t, lv in zip(kernel.inputs, levels):
            for k, (y, f, p) in enumerate(lv):
                if y == x and p == STEP and f in ("c", "h") and t.hollow:
                    prefix = {z for z, _, _ in lv[:k + 1]}
                    stepped.append(tensor_atom(t, prefix & known, f"d{d}"))
        if coiterate == "union" and len(stepped) > 1:
            # each stepped level is walked in full (a merge): one task set per level
            for atom, dv in stepped:
                terms.append(_q(order[:d + 1], atoms + [atom], dvars + dv, dimof))
        for atom, dv in stepped:
            atoms.append(atom)
            dvars += dv
        terms.append(_q(order[:d + 1], atoms, dvars, dimof))
    cost = Cost(tuple(terms))
    return cost + sunk_cost(kernel) if sunk else cost


def _q(head, atoms, dvars, dimof):
    dims = {v: dimof[x] for v, x in dvars}
    dims.update({x: dimof[x] for x in head})
    return query(head, atoms, dims)


@lru_cache(maxsize=256)
def sunk_cost(kernel: Kernel) -> Cost:
    """What every program pays: reading each sparse input, and each dimension."""
    dimof = dict(kernel.dims)
    terms = []
    for t in kernel.inputs:
        if t.hollow:
            atom, dv = tensor_atom(t, set(t.idxs), "")
            terms.append(_q(t.idxs, [atom], dv, dimof))
    for x in kernel.indices:
        terms.append(_q((x,), [], [], dimof))
    return Cost(tuple(terms))


def programs(kernel: Kernel):
    """Every program of minimum nesting depth: each loop order, and for each level of each
    sparse input a protocol (step or locate)."""
    per_input = []
    for t in kernel.inputs:
        if t.hollow:
            per_input.append(list(product((LOCATE, STEP), repeat=t.order)))
        else:
            per_input.append([(LOCATE,) * t.order])
    for order in permutations(kernel.indices):
        for protos in product(*per_input):
            yield Program(order, tuple(protos))


__all__ = ["Tensor", "Kernel", "Program", "program_cost", "programs", "sunk_cost",
           "concordant", "needs_transpose", "STEP", "LOCATE"]
