"""Programs that precompute part of a product into a workspace (Pigeon's `where`).

For `out += X * Y * Z`, a sub-product `w += X * Y` is computed by a producer nest and read
by a consumer nest `out += w * Z`; each index either stays an outer loop around both, or is
pushed inside, where it loops in the consumer, the producer, or both (if they use it).  The
workspace is indexed by the pushed indices both use.  Among all such programs (and the plain
nests) only those of minimum nesting depth are kept; every loop group is permuted, every
sparse input level and every workspace level gets a protocol.

Costs follow model.py with Pigeon's semantics: the outer loops coiterate the levels stepped
in either nest; the producer and consumer loops continue from there; a stepped workspace
level iterates the workspace's pattern (the projection of the producer's sparse factors); the
workspace's storage, dense where located and compressed where stepped, is paid per outer
task."""
from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations, permutations, product

from .model import LOCATE, STEP, Kernel, concordant, sunk_cost, tensor_atom, _q
from .query import Cost


@dataclass(frozen=True)
class WorkspaceProgram:
    outer: tuple             # loops around producer and consumer, outermost first
    consumer: tuple          # the consumer's own loops
    producer: tuple          # the producer's own loops
    pair: tuple              # positions of the inputs the producer multiplies
    workspace: tuple         # the workspace's indices, in the consumer's loop order
    protocols: tuple         # per input: per level STEP / LOCATE
    workspace_protocols: tuple

    @property
    def depth(self):
        return len(self.outer) + max(len(self.consumer), len(self.producer))


def _structures(kernel: Kernel):
    idx = kernel.indices
    out_idx = set(kernel.output.idxs)
    n = len(kernel.inputs)
    for pair in combinations(range(n), 2):
        if n < 3:
            return                    # the whole product is no sub-product
        rest = [t for q, t in enumerate(kernel.inputs) if q not in pair]
        ip = set().union(*[set(kernel.inputs[q].idxs) for q in pair])
        ic = out_idx.union(*[set(t.idxs) for t in rest])
        for r in range(len(idx) + 1):
            for js in combinations(idx, r):
                inner = set(js)
                outer = tuple(x for x in idx if x not in inner)
                cons = tuple(x for x in idx if x in inner & ic)
                prod_ = tuple(x for x in idx if x in inner & ip)
                ws = tuple(x for x in idx if x in (set(cons) | set(prod_)) & ip & ic)
                yield pair, outer, cons, prod_, ws


def workspace_programs(kernel: Kernel, depth=None):
    """Every workspace program of nesting depth `depth` (default: the least one reached)."""
    structs = list(_structures(kernel))
    if not structs:
        return
    least = min(len(o) + max(len(c), len(p)) for _, o, c, p, _ in structs)
    depth = least if depth is None else depth
    per_input = [list(product((LOCATE, STEP), repeat=t.order)) if t.hollow else
                 [(LOCATE,) * t.order] for t in kernel.inputs]
    for pair, outer, cons, prod_, ws in structs:
        if len(outer) + max(len(cons), len(prod_)) != depth:
            continue
        for o in permutations(outer):
            for c in permutations(cons):
                for p in permutations(prod_):
                    order = o + c
                    w = tuple(sorted(ws, key=order.index))
                    for protos in product(*per_input):
                        for wp in product((LOCATE, STEP), repeat=len(w)):
                            yield WorkspaceProgram(o, c, p, pair, w, protos, wp)


def least_workspace_depth(kernel: Kernel):
    structs = list(_structures(kernel))
    return min((len(o) + max(len(c), len(p)) for _, o, c, p, _ in structs), default=None)


def workspace_cost(kernel: Kernel, prog: WorkspaceProgram, sunk=True) -> Cost:
    dimof = dict(kernel.dims)
    terms = []
    cons_order = prog.outer + prog.consumer
    prod_order = prog.outer + prog.producer
    inputs = range(len(kernel.inputs))
    consumer_inputs = [q for q in inputs if q not in prog.pair]
    levels = {}
    for q, t in enumerate(kernel.inputs):
        order = prod_order if q in prog.pair else cons_order
        lv = list(zip(t.idxs, t.formats, prog.protocols[q]))
        if t.hollow and not concordant(t, order):
            lv.sort(key=lambda z: order.index(z[0]))
            lv = [(x, "c" if p == STEP else "u", p) for x, _, p in lv]
            atoms, dv = [], []
            for k, (x, f, p) in enumerate(lv):
                if f == "c":
                    a, d = tensor_atom(t, {z for z, _, _ in lv[:k + 1]}, f"t{k}")
                    atoms.append(a)
                    dv += d
            terms.append(_q(tuple(x for x, _, _ in lv), atoms, dv, dimof))
        levels[q] = lv

    def pattern(known, tag):
        """The workspace's nonzeros, as the producer's sparse factors."""
        atoms, dv = [], []
        for q in prog.pair:
            t = kernel.inputs[q]
            if t.hollow:
                a, d = tensor_atom(t, known, tag)
                atoms.append(a)
                dv += d
        return atoms, dv

    def stepped(x, qs, order, d):
        known = set(order[:d + 1])
        out = []
        for q in qs:
            t = kernel.inputs[q]
            for k, (y, f, p) in enumerate(levels[q]):
                if y == x and p == STEP and t.hollow:
                    a, dv = tensor_atom(t, {z for z, _, _ in levels[q][:k + 1]} & known,
                                        f"d{d}q{q}")
                    out.append(([a], dv))
        return out

    def walk(order, start, atoms, dvars, step_fn):
        for d in range(start, len(order)):
            st = step_fn(order[d], order, d)
            for a, dv in st:            # each stepped level walked in full
                terms.append(_q(order[:d + 1], atoms + a, dvars + dv, dimof))
            for a, dv in st:
                atoms = atoms + a
                dvars = dvars + dv
            terms.append(_q(order[:d + 1], atoms, dvars, dimof))
        return atoms, dvars

    outer_atoms, outer_dv = walk(prog.outer, 0, [], [],
                                 lambda x, o, d: stepped(x, list(inputs), o, d))
    n = len(prog.outer)
    walk(prod_order, n, outer_atoms, outer_dv, lambda x, o, d: stepped(x, prog.pair, o, d))

    def consumer_step(x, order, d):
        st = stepped(x, consumer_inputs, order, d)
        for k, (y, p) in enumerate(zip(prog.workspace, prog.workspace_protocols)):
            if y == x and p == STEP:
                st.append(pattern(set(prog.workspace[:k + 1]) | set(prog.outer), f"d{d}w"))
        return st
    walk(cons_order, n, outer_atoms, outer_dv, consumer_step)
    atoms, dv = list(outer_atoms), list(outer_dv)
    for k, (y, p) in enumerate(zip(prog.workspace, prog.workspace_protocols)):
        if p == STEP:
            a, d = pattern(set(prog.workspace[:k + 1]) | set(prog.outer), f"s{k}")
            atoms += a
            dv += d
    terms.append(_q(prog.outer + prog.workspace, atoms, dv, dimof))
    cost = Cost(tuple(terms))
    return cost + sunk_cost(kernel) if sunk else cost


__all__ = ["WorkspaceProgram", "workspace_programs", "workspace_cost",
           "least_workspace_depth"]
