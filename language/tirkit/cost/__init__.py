"""The learned cost model: per-store features, a measured dataset, an XGBoost model.

    from tirkit.cost import features, model
    features.extract(func)                  # (n_stores, len(features.NAMES)) float32 rows
    m = model.CostModel.default()           # the shipped model (predicts without xgboost)
    m.predict([func])                       # predicted seconds

Modules: `features` (per-store features), `dataset` (JSON lines, resumable), `workloads` (the
kernels the model is trained on), `sampler` (random valid schedules), `measure` (compile and
time), `collect` (the collection loop), `model` (CostModel), `objectives` (what its boosters
are trained to), `forest` (their trees walked with numpy), `train` (training and held-out
scores), `predict` (what the editor shows), `cli` (`tirkit cost ...`).
"""
