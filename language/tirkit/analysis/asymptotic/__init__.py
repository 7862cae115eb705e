"""Asymptotic cost of sparse loop nests: task sets as conjunctive queries (`query.py`), the
cost of a program (`model.py`), the frontier of undominated programs (`frontier.py`), and
the bridge from a sparse iteration of the IR (`iteration.py`)."""
from .frontier import frontier, universe
from .model import Kernel, Program, Tensor, program_cost, programs
from .query import Cost, cost_at_most, equivalent, strictly_less

__all__ = ["frontier", "universe", "Kernel", "Program", "Tensor", "program_cost", "programs", "Cost",
           "cost_at_most", "equivalent", "strictly_less"]
