"""Integer arithmetic for index expressions: affine canonical form (`affine`), rewrite
tables (`simplify`), interval analysis with symbolic end points (`interval`) and
quasi-affine iterator-map detection (`iter_map`)."""
from .affine import Aff, Atom
from .interval import Analyzer
from .iter_map import IterMap, Split, Fused, Failure, detect

__all__ = ["Aff", "Atom", "Analyzer", "IterMap", "Split", "Fused", "Failure", "detect"]
