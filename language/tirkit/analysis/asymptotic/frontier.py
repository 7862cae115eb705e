"""The frontier: programs no other program beats asymptotically for every input."""
from __future__ import annotations

from .model import Program, programs, sunk_cost
from .query import strictly_less
from .walk import plain_tree, walk_cost, workspace_tree
from .workspace import least_workspace_depth, workspace_programs


def universe(kernel):
    """Every program of minimum nesting depth: the plain loop nests (depth: the number of
    indices) and those that precompute a sub-product into a workspace (workspace.py)."""
    plain = len(kernel.indices)
    ws = least_workspace_depth(kernel)
    if ws is None or ws >= plain:
        yield from programs(kernel)
    if ws is not None and ws <= plain:
        yield from workspace_programs(kernel, ws)


def cost_of(kernel, prog):
    """The cost of a plain program or a workspace program, with what every program pays:
    its statements walked as Pigeon does (walk.py): a stepped level filters its loop whatever
    its format, several stepped levels are each walked in full, transposition is paid by
    reading the input, a workspace's pattern forgets the loops around it."""
    tree = plain_tree(kernel, prog) if isinstance(prog, Program) else workspace_tree(kernel, prog)
    return walk_cost(kernel, tree) + sunk_cost(kernel)


def frontier(kernel, candidates=None):
    """[(program, cost)] of the undominated programs among `candidates` (default: the
    universe of minimum depth); programs of equivalent cost are all kept."""
    progs = list(candidates if candidates is not None else universe(kernel))
    costs = [cost_of(kernel, p).simplified() for p in progs]
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


__all__ = ["frontier", "universe", "cost_of"]
