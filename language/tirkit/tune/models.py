"""The cost model the search ranks candidates with.

    model = default_model()         # the learned model when it is available, else the roofline
    model.predict(funcs)            # numpy array: predicted seconds per PrimFunc
    model.update(funcs, seconds)    # online: measured candidates refine the model

The protocol is `tirkit.cost.model.CostModel`'s (`predict`, `update`); `RooflineModel` is the
analytic stand-in: the roofline time of a kernel does not depend on its schedule, so it ranks
every candidate alike and the search then rests on measurement (and its random share).
"""
from __future__ import annotations

import numpy as np


class RooflineModel:
    name = "roofline"

    def predict(self, funcs) -> np.ndarray:
        from ..analysis.cost import kernel_costs, roofline_seconds
        out = []
        for f in funcs:
            t = roofline_seconds(kernel_costs(f).total, "llvm")
            out.append(t if t is not None else 0.0)
        return np.asarray(out, dtype=np.float64)

    def update(self, funcs, seconds) -> None:
        return None


def default_model():
    """The learned model (`tirkit.cost`) when it is installed, else the roofline."""
    try:
        from ..cost.model import CostModel
    except ImportError:
        return RooflineModel()
    return CostModel.default()


__all__ = ["RooflineModel", "default_model"]
