"""Task sets by walking a program's statements (the analysis of Pigeon, PLDI 2022).

A program is a tree of loops (`Loop`), assignments of a product (`Assign`) and a workspace
computed before it is used (`With`: the producer fills the workspace, the consumer reads it).
Every read access lists its indices in loop order (a transposed input is read concordantly:
transposition costs the input's nonzeros, which every program pays anyway) and a protocol per
index; a plain array has none.

Walking the tree with the loop indices bound so far and a guard (what the tasks reaching this
point satisfy):

- a loop over x where no read steps x (stepped: protocol `step`, its earlier indices bound)
  visits every coordinate of x: one task set `{bound | guard}`, then its body;
- a loop over x that steps reads S coiterates them: each stepped read is walked in full
  (`{bound | guard ∧ nonzero(read)}` per read), and for every subset T of S the body runs where
  the reads of T are nonzero and the others are zero: a product with a zero factor does
  nothing, a loop or a workspace consumer around nothing is nothing, but a consumer whose
  producer does nothing still runs (its workspace is then empty);
- an assignment is one task set `{bound | guard}`; assigning the workspace records its pattern,
  the guard with every index but the workspace's hidden (the workspace is reused across the
  loops around it, so its pattern forgets them);
- a stepped workspace level coiterates that pattern; an empty workspace's pattern is false."""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from itertools import product

from .model import LOCATE, STEP, Kernel, Program, concordant
from .query import Cost, query

WORKSPACE = "w"


@dataclass(frozen=True)
class Access:
    tensor: str
    idxs: tuple              # in loop (concordant) order
    protocols: tuple = ()    # per index STEP / LOCATE; () for a plain array or a write


@dataclass(frozen=True)
class Assign:
    lhs: Access
    rhs: tuple               # the factors, Access or ZERO


@dataclass(frozen=True)
class Loop:
    idx: str
    body: object


@dataclass(frozen=True)
class With:
    cons: object
    prod: object


ZERO = "0"
PASS = "pass"


@lru_cache(maxsize=65536)
def _task_set(head, atoms, dims):
    return query(head, atoms, dict(dims))


def _accesses(node):
    if isinstance(node, Loop):
        yield from _accesses(node.body)
    elif isinstance(node, With):
        yield from _accesses(node.prod)
        yield from _accesses(node.cons)
    elif isinstance(node, Assign):
        yield from (a for a in node.rhs if isinstance(a, Access))


def _zeroed(node, gone):
    """`node` with the reads in `gone` zero, and what a zero annihilates removed."""
    if isinstance(node, Loop):
        body = _zeroed(node.body, gone)
        return PASS if body == PASS else Loop(node.idx, body)
    if isinstance(node, With):
        cons = _zeroed(node.cons, gone)
        return PASS if cons == PASS else With(cons, _zeroed(node.prod, gone))
    if isinstance(node, Assign):
        return PASS if any(a in gone for a in node.rhs) else node
    return node


@dataclass
class _Walk:
    kernel: Kernel
    tensors: dict                                # name -> Tensor (storage order)
    dims: dict                                   # variable -> dimension
    terms: list = field(default_factory=list)
    pattern: object = None                       # workspace: (params, atoms) or False
    fresh: int = 0

    def var(self, dim):
        self.fresh += 1
        v = f"∃·{self.fresh}"
        self.dims[v] = dim
        return v

    def nonzero(self, acc: Access, bound):
        """The atoms saying `acc` is nonzero at the bound indices (the others hidden), or
        None when it is an empty workspace."""
        if acc.tensor == WORKSPACE:
            if not self.pattern:
                return None
            params, atoms = self.pattern
            ren = {p: (p if p in bound else self.var(self.dims[p])) for p in params}
            for _, args in atoms:
                for a in args:
                    if a not in ren:
                        ren[a] = self.var(self.dims[a])
            return [(r, tuple(ren[a] for a in args)) for r, args in atoms]
        t = self.tensors[acc.tensor]
        args = tuple(x if x in bound else self.var(self.dims[x]) for x in t.idxs)
        return [(t.name, args)]

    def emit(self, bound, guard):
        if guard is None:
            return
        # hidden variables named by first use (atoms sorted with them blanked), so that
        # task sets of the same shape are the same query (and share cached comparisons)
        head = set(bound)
        ren = {}
        for _, args in sorted(guard, key=lambda a: (a[0], tuple(x if x in head else "" for x
                                                                  in a[1]))):
            for a in args:
                if a not in head and a not in ren:
                    ren[a] = f"∃{len(ren)}"
        atoms = frozenset((r, tuple(ren.get(a, a) for a in args)) for r, args in guard)
        dims = tuple(sorted((ren.get(v, v), self.dims[v]) for v in list(head) + list(ren)))
        self.terms.append(_task_set(tuple(bound), atoms, dims))

    def stepped(self, node, x, bound):
        out = []
        for a in _accesses(node):
            if a.protocols and x in a.idxs:
                p = a.idxs.index(x)
                if a.protocols[p] == STEP and set(a.idxs[:p]) <= set(bound):
                    out.append(a)
        return out

    def visit(self, node, bound, guard):
        if node == PASS or guard is None:
            return
        if isinstance(node, Assign):
            self.emit(bound, guard)
            if node.lhs.tensor == WORKSPACE:
                params = node.lhs.idxs
                hide = {v: self.var(self.dims[v]) for v in bound if v not in params}
                self.pattern = (params, [(r, tuple(hide.get(a, a) for a in args))
                                         for r, args in guard])
            return
        if isinstance(node, With):
            self.pattern = False
            self.visit(node.prod, bound, guard)
            self.visit(node.cons, bound, guard)
            return
        x = node.idx
        inner = bound + [x]
        steps = self.stepped(node.body, x, bound)
        if not steps:
            self.emit(inner, guard)
            self.visit(node.body, inner, guard)
            return
        preds = [self.nonzero(a, set(inner)) for a in steps]
        for case in product((True, False), repeat=len(steps)):
            gone = {a for a, keep in zip(steps, case) if not keep}
            body = _zeroed(node.body, gone)
            if body == PASS:
                continue
            g = list(guard)
            for p, keep in zip(preds, case):
                if keep:
                    g = None if p is None or g is None else g + p
            self.visit(body, inner, g)
        for p in preds:
            self.emit(inner, None if p is None else list(guard) + p)


def walk_cost(kernel: Kernel, tree) -> Cost:
    """The task sets of `tree` (without what every program pays)."""
    tensors = {t.name: t for t in kernel.inputs}
    dims = {x: kernel.dim(x) for x in kernel.indices}
    w = _Walk(kernel, tensors, dims)
    w.visit(tree, [], [])
    return Cost(tuple(w.terms))


def _read(t, protos, order):
    """A read of input t with its protocols, its indices in the order the loops bind them."""
    pos = sorted(range(t.order), key=lambda k: order.index(t.idxs[k]))
    if not t.hollow:
        return Access(t.name, tuple(t.idxs[k] for k in pos))
    return Access(t.name, tuple(t.idxs[k] for k in pos), tuple(protos[k] for k in pos))


def _nest(order, body):
    for x in reversed(order):
        body = Loop(x, body)
    return body


def plain_tree(kernel: Kernel, prog: Program):
    order = prog.order
    rhs = tuple(_read(t, p, order) for t, p in zip(kernel.inputs, prog.protocols))
    return _nest(order, Assign(Access(kernel.output.name, kernel.output.idxs), rhs))


def workspace_tree(kernel: Kernel, prog):
    """The statement tree of a workspace.WorkspaceProgram."""
    cons_order = prog.outer + prog.consumer
    prod_order = prog.outer + prog.producer
    reads = {}
    for q, (t, p) in enumerate(zip(kernel.inputs, prog.protocols)):
        reads[q] = _read(t, p, prod_order if q in prog.pair else cons_order)
    w_read = Access(WORKSPACE, prog.workspace, tuple(prog.workspace_protocols))
    w_write = Access(WORKSPACE, tuple(sorted(prog.workspace, key=prod_order.index)))
    prod = _nest(prog.producer, Assign(w_write, tuple(reads[q] for q in prog.pair)))
    rest = tuple(reads[q] for q in range(len(kernel.inputs)) if q not in prog.pair)
    cons = _nest(prog.consumer, Assign(Access(kernel.output.name, kernel.output.idxs),
                                       (w_read,) + rest))
    return _nest(prog.outer, With(cons, prod))


__all__ = ["Access", "Assign", "Loop", "With", "walk_cost", "plain_tree", "workspace_tree",
           "WORKSPACE", "LOCATE", "concordant"]
