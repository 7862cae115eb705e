"""Programs that precompute part of a product into a workspace (Pigeon's `where`).

For `out += X * Y * Z`, a sub-product `w += X * Y` is computed by a producer nest and read
by a consumer nest `out += w * Z`; each index either stays an outer loop around both, or is
pushed inside, where it loops in the consumer, the producer, or both (if they use it).  The
workspace is indexed by the pushed indices both use.  The sub-product may also be stored
without summing (`w = X * Y`): then the consumer loops over every pushed index and the
workspace is indexed by the pushed indices of X and Y.  Among all such programs (and the plain
nests) only those of minimum nesting depth are kept; every loop group is permuted, every
sparse input level and every workspace level gets a protocol.

Their costs come from walking their statements (walk.py): the outer loops coiterate the
levels stepped in either nest, the producer runs before the consumer, and a stepped workspace
level iterates the pattern the producer wrote."""
from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations, permutations, product

from .model import LOCATE, STEP, Kernel


@dataclass(frozen=True)
class WorkspaceProgram:
    outer: tuple             # loops around producer and consumer, outermost first
    consumer: tuple          # the consumer's own loops
    producer: tuple          # the producer's own loops
    pair: tuple              # positions of the inputs the producer multiplies
    workspace: tuple         # the workspace's indices, in the consumer's loop order
    protocols: tuple         # per input: per level STEP / LOCATE
    workspace_protocols: tuple
    reduce: bool = True      # `w += X * Y` (the producer sums); False: `w = X * Y`

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
                yield pair, outer, cons, prod_, ws, True
                # `w = X * Y`: the consumer loops over every pushed index, the workspace is
                # indexed by those of the pair
                yield pair, outer, js, prod_, prod_, False


def workspace_programs(kernel: Kernel, depth=None):
    """Every workspace program of nesting depth `depth` (default: the least one reached)."""
    structs = list(_structures(kernel))
    if not structs:
        return
    least = min(len(o) + max(len(c), len(p)) for _, o, c, p, _, _ in structs)
    depth = least if depth is None else depth
    per_input = [list(product((LOCATE, STEP), repeat=t.order)) if t.hollow else
                 [(LOCATE,) * t.order] for t in kernel.inputs]
    for pair, outer, cons, prod_, ws, reduce in structs:
        if len(outer) + max(len(cons), len(prod_)) != depth:
            continue
        for o in permutations(outer):
            for c in permutations(cons):
                for p in permutations(prod_):
                    order = o + c
                    w = tuple(sorted(ws, key=order.index))
                    for protos in product(*per_input):
                        for wp in product((LOCATE, STEP), repeat=len(w)):
                            yield WorkspaceProgram(o, c, p, pair, w, protos, wp, reduce)


def least_workspace_depth(kernel: Kernel):
    structs = list(_structures(kernel))
    return min((len(o) + max(len(c), len(p)) for _, o, c, p, _, _ in structs), default=None)


__all__ = ["WorkspaceProgram", "workspace_programs", "least_workspace_depth"]
