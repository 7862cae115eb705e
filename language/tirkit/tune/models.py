"""The cost model the search ranks candidates with.

    model = default_model()         # the learned model when xgboost is there, else the roofline
    model.predict(funcs)            # numpy array: predicted seconds per PrimFunc
    model.update(funcs, seconds)    # online: measured candidates refine the model

The protocol is `tirkit.cost.model.CostModel`'s (`predict`, `update`).  `LearnedModel` wraps
one: a private copy of the shipped model (`TIRKIT_COST_MODEL` or the package's file) when
there is one, else an untrained model that the first measured batch trains; every update
refits it with what the search measured (the shipped model itself, which other features
read, is never changed).  Until it is trained it ranks with the roofline.
`RooflineModel` is the analytic stand-in: the roofline time of a kernel does not depend on its
schedule, so it ranks every candidate alike and the search then rests on measurement (and
its random share).
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


class LearnedModel:
    name = "learned (XGBoost, updated online)"

    def __init__(self, model):
        self.model = model
        self.fallback = RooflineModel()

    def predict(self, funcs) -> np.ndarray:
        if not self.model.trained:
            return self.fallback.predict(funcs)
        return np.asarray(self.model.predict(funcs), dtype=np.float64)

    def update(self, funcs, seconds) -> None:
        self.model.update(funcs, seconds)


def default_model():
    """The learned model (`tirkit.cost`, the `cost` extra) when xgboost is installed, else
    the roofline."""
    import os

    from ..extras import installed
    if not installed("xgboost"):
        return RooflineModel()
    from ..cost.model import DEFAULT_PATH, CostModel
    path = os.environ.get("TIRKIT_COST_MODEL") or DEFAULT_PATH
    try:
        return LearnedModel(CostModel.load(path))
    except (OSError, ValueError):           # none shipped, or of another feature version
        return LearnedModel(CostModel())


__all__ = ["RooflineModel", "LearnedModel", "default_model"]
