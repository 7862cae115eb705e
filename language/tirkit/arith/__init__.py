"""The one arithmetic of tirkit, for index expressions: affine canonical form (`affine`),
rewrite tables (`simplify`), interval analysis with symbolic end points (`interval`),
quasi-affine iterator-map detection (`iter_map`), and the operators' meaning (`alu`: one
table for constant folding and the interpreter).  Two views for the layers above:
`writeback` (simplify and write index expressions back as TVM prints them: the schedule
primitives) and `linear` (plain linear forms of indices: the code generator)."""
from .affine import Aff, Atom
from .interval import Analyzer
from .iter_map import IterMap, Split, Fused, Failure, detect

__all__ = ["Aff", "Atom", "Analyzer", "IterMap", "Split", "Fused", "Failure", "detect"]
