"""Task sets as conjunctive queries, and asymptotic domination between them.

A task set is `{(x1, ..., xn) | atoms}`: its head variables are the loop indices the tasks
are distinguished by, its atoms are relations over variables, either a dimension `I(x)` (x
ranges over I) or a tensor's nonzero pattern `B(x, y)` (B has a nonzero at x, y).  Variables
not in the head are existential (`B(i, y)` with y hidden: row i of B is not empty).  Every
variable carries its dimension, so a tensor atom implies the dimension atoms of its places.

p is asymptotically at most q (p ⪯ q) for every input when there is a homomorphism h from q
to p (every atom of q maps onto an atom of p) whose image of q's head covers p's head: each
task of p then maps to a distinct task of q.  For sums (unions) of task sets, P ⪯ Q when every
term of P is ⪯ some term of Q (sums and maxima agree asymptotically).  With dimension atoms
only this reduces to comparing exponent vectors of the dense monomials."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True)
class Query:
    head: tuple                # variable names, in loop order
    atoms: frozenset           # {(relation, (var, ...))}; a dimension is a unary relation
    dims: tuple                # ((var, dimension), ...) for every variable

    def __hash__(self):
        # queries key every cache here: their hash is computed once
        h = self.__dict__.get("_hash")
        if h is None:
            h = hash((self.head, self.atoms, self.dims))
            object.__setattr__(self, "_hash", h)
        return h

    def dim_of(self, v):
        return dict(self.dims)[v]


def query(head, atoms, dims) -> Query:
    """A task set; the dimension atom of every variable is added, so `B(i, j)` says i ∈ I."""
    dims = dict(dims)
    used = {v for _, args in atoms for v in args} | set(head)
    full = set(atoms) | {(dims[v], (v,)) for v in used}
    return core(Query(tuple(head), frozenset(full), tuple(sorted((v, dims[v]) for v in used))))


@lru_cache(maxsize=65536)
def _core_cached(q: "Query") -> "Query":
    return _core(q)


def _homomorphisms(q: Query, p: Query, head_cover: bool, start=None):
    """Search for h: vars(q) -> vars(p) mapping q's atoms onto p's, extending `start`; with
    head_cover, h(head q) must include head p."""
    by_rel = {}
    for rel, args in p.atoms:
        by_rel.setdefault(rel, []).append(args)
    atoms = sorted(q.atoms, key=lambda a: (len(by_rel.get(a[0], ())), -len(a[1])))
    target = set(p.head)

    def go(k, h):
        if k == len(atoms):
            return not head_cover or target <= {h[v] for v in q.head if v in h}
        rel, args = atoms[k]
        for cand in by_rel.get(rel, ()):
            if len(cand) != len(args):
                continue
            new = dict(h)
            ok = True
            for a, b in zip(args, cand):
                if new.get(a, b) != b:
                    ok = False
                    break
                new[a] = b
            if ok and go(k + 1, new):
                return True
        return False
    # head variables of q that no atom names still need an image; every variable has a
    # dimension atom, so each is named
    return go(0, dict(start or {}))


@lru_cache(maxsize=1 << 18)
def at_most(p: Query, q: Query) -> bool:
    """|p| ⪯ |q| for every input (up to constant factors), assuming every dimension and
    every tensor is nonempty: q's variables may map onto witnesses of that (so that
    `nnz(B) ⪯ nnz(B)·K`)."""
    # q's head covers p's only if it has at least as many variables of each dimension
    need = _head_dims(p)
    have = _head_dims(q)
    if any(have.get(d, 0) < n for d, n in need.items()):
        return False
    return _homomorphisms(q, _with_witnesses(p, q), head_cover=True)


def _head_dims(q: Query) -> dict:
    dims = dict(q.dims)
    out = {}
    for v in q.head:
        out[dims[v]] = out.get(dims[v], 0) + 1
    return out


def _with_witnesses(p: Query, q: Query) -> Query:
    dims = dict(q.dims)
    extra = set()
    dim_names = {d for _, d in q.dims}
    for rel, args in q.atoms:
        if len(args) == 1 and rel in dim_names:
            extra.add((rel, (f"∃{rel}",)))
        else:
            ws = tuple(f"∃{rel}.{k}" for k in range(len(args)))
            extra.add((rel, ws))
            extra |= {(dims[a], (w,)) for a, w in zip(args, ws)}
    return Query(p.head, p.atoms | frozenset(extra), p.dims)


def core(q: Query) -> Query:
    """The query without atoms that others imply (a smaller equivalent body): the canonical
    form that printing and comparison use."""
    return _core_cached(q)


def _core(q: Query) -> Query:
    atoms = set(q.atoms)
    changed = True
    while changed:
        changed = False
        for a in sorted(atoms, key=lambda x: (len(x[1]), x)):
            rest = frozenset(atoms - {a})
            rest_vars = {v for _, args in rest for v in args}
            if not set(q.head) <= rest_vars:
                continue
            smaller = Query(q.head, rest, q.dims)
            # the smaller body maps into the larger one, fixing the head
            if _fixing_head(smaller, Query(q.head, frozenset(atoms), q.dims)):
                atoms = set(rest)
                changed = True
                break
    used = {v for _, args in atoms for v in args}
    return Query(q.head, frozenset(atoms), tuple(x for x in q.dims if x[0] in used))


def _fixing_head(small: Query, big: Query) -> bool:
    """Whether big's body maps into small's with the head fixed (then small implies big)."""
    return _homomorphisms(big, small, head_cover=False, start={v: v for v in big.head})


@dataclass(frozen=True)
class Cost:
    """A sum of task sets: the work of a program."""
    terms: tuple

    def simplified(self) -> "Cost":
        """Only the terms no other term bounds (one of each equivalent group)."""
        keep = []
        for t in self.terms:
            if any(at_most(t, u) for u in keep):
                continue
            keep = [u for u in keep if not at_most(u, t)] + [t]
        return Cost(tuple(keep))

    def __add__(self, other):
        return Cost(self.terms + other.terms)


def cost_at_most(p: Cost, q: Cost) -> bool:
    """P ⪯ Q: every term of P is bounded by some term of Q."""
    return all(any(at_most(t, u) for u in q.terms) for t in p.terms)


def strictly_less(p: Cost, q: Cost) -> bool:
    return cost_at_most(p, q) and not cost_at_most(q, p)


def equivalent(p: Cost, q: Cost) -> bool:
    return cost_at_most(p, q) and cost_at_most(q, p)


__all__ = ["Query", "query", "at_most", "core", "Cost", "cost_at_most", "strictly_less",
           "equivalent"]
