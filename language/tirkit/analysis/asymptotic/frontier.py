"""The frontier: programs no other program beats asymptotically for every input."""
from __future__ import annotations

from .model import Program, program_cost, programs
from .query import strictly_less
from .workspace import least_workspace_depth, workspace_cost, workspace_programs

PIGEON = {"widen": True, "coiterate": "union"}


def universe(kernel):
    """Every program of minimum nesting depth: the plain loop nests (depth: the number of
    indices) and those that precompute a sub-product into a workspace (workspace.py)."""
    plain = len(kernel.indices)
    ws = least_workspace_depth(kernel)
    if ws is None or ws >= plain:
        yield from programs(kernel)
    if ws is not None and ws <= plain:
        yield from workspace_programs(kernel, ws)


def cost_of(kernel, prog, semantics=PIGEON):
    if isinstance(prog, Program):
        return program_cost(kernel, prog, **semantics)
    return workspace_cost(kernel, prog)


def frontier(kernel, candidates=None, semantics=PIGEON):
    """[(program, cost)] of the undominated programs among `candidates` (default: the
    universe of minimum depth); programs of equivalent cost are all kept.  The default
    semantics are Pigeon's: a stepped level filters its loop whatever its format (a dense
    level is widened to a hashed one), several stepped levels are each walked in full, and a
    transposition workspace takes the formats its protocols need."""
    progs = list(candidates if candidates is not None else universe(kernel))
    costs = [cost_of(kernel, p, semantics).simplified() for p in progs]
    # programs of the same cost structure are compared once per group
    groups = {}
    for p, c in zip(progs, costs):
        groups.setdefault(frozenset(c.terms), []).append((p, c))
    # a skyline: each group against the undominated ones found so far
    front = []                       # [(key, cost)]
    for key, c in ((k, m[0][1]) for k, m in groups.items()):
        if any(strictly_less(d, c) for _, d in front):
            continue
        front = [(k2, d) for k2, d in front if not strictly_less(c, d)] + [(key, c)]
    keep = []
    for key, _ in front:
        keep.extend(groups[key])
    return keep


__all__ = ["frontier", "universe", "cost_of", "PIGEON"]
