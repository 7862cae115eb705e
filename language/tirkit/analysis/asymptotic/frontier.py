"""The frontier: programs no other program beats asymptotically for every input."""
from __future__ import annotations

from .model import program_cost, programs
from .query import strictly_less


def frontier(kernel, candidates=None):
    """[(program, cost)] of the undominated programs among `candidates` (default: every
    program of minimum depth); programs of equivalent cost are all kept."""
    progs = list(candidates if candidates is not None else programs(kernel))
    costs = [program_cost(kernel, p).simplified() for p in progs]
    # group programs of the same cost structure so each comparison runs once per group
    groups = {}
    for p, c in zip(progs, costs):
        groups.setdefault(frozenset(c.terms), []).append((p, c))
    reps = [(key, members[0][1]) for key, members in groups.items()]
    keep = []
    for key, c in reps:
        if not any(strictly_less(d, c) for k2, d in reps if k2 != key):
            keep.extend(groups[key])
    return keep


__all__ = ["frontier"]
