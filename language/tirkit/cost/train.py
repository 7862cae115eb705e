"""Training and held-out evaluation of the cost model from dataset records.

    model = train(records)                  # objective: model.DEFAULT_OBJECTIVE
    scores = evaluate(records, holdout=["gmm_128", ...])   # {"top1", "top5", "spearman", ...}
    user_model()        # the model `tirkit cost train` wrote for this machine, else the shipped one

Scores follow TenSet: for each held-out workload, top-k is the best measured time among the
k kernels the model ranks fastest, divided into the best measured time among all of that
workload's kernels (1.0: the model's top-k holds the best); Spearman is the rank correlation
of predicted and measured times within the workload. Each is the mean over the workloads.
"""
from __future__ import annotations

import functools
import os

import numpy as np

from . import features as F
from .model import DEFAULT_OBJECTIVE, ROUNDS, CostModel


def user_model_path() -> str:
    base = os.environ.get("XDG_DATA_HOME") or os.path.expanduser("~/.local/share")
    return os.path.join(base, "tirkit", "cost_model.json.gz")


def user_model():
    """The model trained on this machine (`tirkit cost train`), else the shipped model;
    None when neither is usable."""
    path = user_model_path()
    if os.path.exists(path):
        from .model import _default
        m = _default(path)
        if m is not None:
            return m
    return CostModel.default()


@functools.lru_cache(maxsize=4096)
def parsed(script):
    import tirkit
    return tirkit.parse(script).module


def rows(record) -> np.ndarray:
    """A record's feature rows: stored ones when of this version, else recomputed."""
    if record.get("features_version") == F.VERSION and record.get("features") is not None:
        r = np.asarray(record["features"], dtype=np.float32)
        return r.reshape(-1, len(F.NAMES)) if r.size else np.zeros((0, len(F.NAMES)), np.float32)
    func = parsed(record["script"])[record["func"]]
    return F.extract(func)


def train(records, objective=DEFAULT_OBJECTIVE, rounds=None, seed=0) -> CostModel:
    model = CostModel(objective, params={"seed": seed}, rounds=rounds or ROUNDS,
                      machine=_machine(records))
    model.fit(None, [r["seconds"] for r in records], groups=[r["workload"] for r in records],
              rows=[rows(r) for r in records])
    return model


def _machine(records):
    ms = sorted({r.get("machine") for r in records if r.get("machine")})
    return "; ".join(ms) if ms else None


def default_holdout(workloads):
    """Every fourth workload (sorted by name), starting with the second: a fixed split."""
    return list(workloads)[1::4]


def scores(pred_by_workload, true_by_workload) -> dict:
    """TenSet top-1/top-5 and mean Spearman over workloads ({workload: array of seconds})."""
    from scipy.stats import spearmanr
    t1, t5, sp = [], [], []
    for w, pred in pred_by_workload.items():
        true = np.asarray(true_by_workload[w], dtype=np.float64)
        pred = np.asarray(pred, dtype=np.float64)
        order = np.argsort(pred, kind="stable")
        best = true.min()
        t1.append(best / true[order[:1]].min())
        t5.append(best / true[order[:5]].min())
        if len(true) > 2 and np.ptp(pred) > 0:
            sp.append(spearmanr(pred, true).statistic)
        else:
            sp.append(0.0)
    return {"top1": float(np.mean(t1)), "top5": float(np.mean(t5)),
            "spearman": float(np.mean(sp)), "workloads": len(t1),
            "per_workload": {w: (a, b, c) for w, a, b, c in zip(pred_by_workload, t1, t5, sp)}}


def evaluate(records, holdout, objective=DEFAULT_OBJECTIVE, rounds=None, model=None) -> dict:
    hold = set(holdout)
    tr = [r for r in records if r["workload"] not in hold]
    te = [r for r in records if r["workload"] in hold]
    m = model or train(tr, objective, rounds)
    by_w: dict = {}
    for r in te:
        by_w.setdefault(r["workload"], []).append(r)
    pred = {w: m.predict_rows([rows(r) for r in rs]) for w, rs in by_w.items()}
    true = {w: [r["seconds"] for r in rs] for w, rs in by_w.items()}
    out = scores(pred, true)
    out["train_kernels"] = len(tr)
    out["model"] = m
    return out
