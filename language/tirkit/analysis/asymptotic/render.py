"""Readable asymptotic costs: `O(nnz(B)·K + I)`.

A task set prints as a product of its connected parts: a dimension (`K`), a tensor's
nonzeros (`nnz(B)`), the nonzeros of a tensor projected on the indices the loops bound
(`nnz(B[i,:])`-style, written `nnz(B|i)`), or a join of tensors (`nnz(B⋈C)`)."""
from __future__ import annotations

from .query import Cost, Query


def render_query(q: Query) -> str:
    head = set(q.head)
    dim_names = {d for _, d in q.dims}
    tensors = [(rel, args) for rel, args in q.atoms if not (len(args) == 1 and rel in dim_names)]
    # connected parts: tensor atoms sharing a variable
    parts = []
    for rel, args in sorted(tensors):
        vs = set(args)
        merged = [p for p in parts if p[1] & vs]
        for p in merged:
            parts.remove(p)
        names = sorted({rel}.union(*[p[0] for p in merged]))
        parts.append((set(names), vs.union(*[p[1] for p in merged]), [(rel, args)] +
                      [a for p in merged for a in p[2]]))
    covered = set()
    factors = []
    for names, vs, atoms in parts:
        covered |= vs
        label = "⋈".join(sorted(names))
        hidden = vs - head
        if hidden and len(atoms) == 1:
            rel, args = atoms[0]
            shown = ",".join(a if a in head else ":" for a in args)
            factors.append(f"nnz({rel}[{shown}])")
        else:
            factors.append(f"nnz({label})")
    dims = dict(q.dims)
    free = [dims[v] for v in q.head if v not in covered]
    powers = {}
    for d in free:
        powers[d] = powers.get(d, 0) + 1
    for d in sorted(powers):
        factors.append(d if powers[d] == 1 else f"{d}^{powers[d]}")
    return "·".join(factors) if factors else "1"


def render(cost: Cost) -> str:
    terms = sorted((render_query(q) for q in cost.simplified().terms),
                   key=lambda s: (-s.count("·") - s.count("nnz"), s))
    return "O(" + " + ".join(terms) + ")"


__all__ = ["render", "render_query"]
