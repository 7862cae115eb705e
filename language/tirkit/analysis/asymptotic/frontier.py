"""The frontier: programs no other program beats asymptotically for every input."""
from __future__ import annotations

from .model import program_cost, programs
from .query import strictly_less


PIGEON = {"widen": True, "coiterate": "union"}


def frontier(kernel, candidates=None, semantics=PIGEON):
    """[(program, cost)] of the undominated programs among `candidates` (default: every
    program of minimum depth); programs of equivalent cost are all kept.  The default
    semantics are Pigeon's: a stepped level filters its loop whatever its format (a dense
    level is widened to a hashed one), several stepped levels are each walked in full, and a
    transposition workspace takes the formats its protocols need."""
    progs = list(candidates if candidates is not None else programs(kernel))
    costs = [program_cost(kernel, p, **semantics).simplified() for p in progs]
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


__all__ = ["frontier", "PIGEON"]
