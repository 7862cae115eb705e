"""Tensorization: tensor instructions described in TVMScript (`library`), where they apply to
a block (`mapping`), and the schedule that applies them (`plan`; the primitives `tensorize`,
`transform_layout` and `auto_tensorize` live in the schedule package)."""
from .library import Intrinsic, Library, load
from .mapping import Mapping, NotFeasible, find_mapping, mappings

__all__ = ["Intrinsic", "Library", "load", "Mapping", "NotFeasible", "find_mapping", "mappings"]
