"""What the cost model's boosters are trained to: the weights of the regression's samples,
and the pack-sum objective (TVM MetaSchedule's shape of the loss, with a pairwise term on
pairs drawn within each workload), whose gradients XGBoost takes from here."""
from __future__ import annotations

import numpy as np


RANK_WEIGHT = 1.0                       # the pairwise term's weight against the squared error
RANK_PAIRS = 8                          # pairs drawn per kernel
RANK_GAP = 0.1                          # log2 seconds: pairs closer than ~7% are noise


def speed_weights(ylog, groups) -> np.ndarray:
    """Each kernel's speed relative to the fastest of its group (a workload: 1 for the
    fastest, 0.5 for one twice as slow), scaled so that a group's weights average 1: every
    workload weighs by its number of kernels, as unweighted, and XGBoost's regularization,
    which is in units of weight, keeps its strength."""
    codes = group_codes(groups)
    n = codes.max() + 1 if len(codes) else 0
    best = np.full(n, np.inf)
    np.minimum.at(best, codes, ylog)
    speed = np.exp2(best[codes] - ylog)
    mean = np.bincount(codes, speed, n) / np.bincount(codes, minlength=n)
    return speed / mean[codes]


def pairs(groups, ylog, rng):
    """(faster, slower) kernel pairs drawn within each group, at least RANK_GAP apart."""
    codes = group_codes(groups)
    a_all, b_all = [], []
    for g in np.unique(codes):
        idx = np.flatnonzero(codes == g)
        if len(idx) < 2:
            continue
        a = rng.choice(idx, len(idx) * RANK_PAIRS)
        b = rng.choice(idx, len(idx) * RANK_PAIRS)
        keep = ylog[a] + RANK_GAP < ylog[b]
        a_all.append(a[keep])
        b_all.append(b[keep])
    if not a_all:
        return np.zeros(0, int), np.zeros(0, int)
    return np.concatenate(a_all), np.concatenate(b_all)


def packsum_objective(seg, ylog, n, groups=None):
    """Squared error of log2 of the pack-sum, plus RANK_WEIGHT times a pairwise logistic loss
    on pairs of kernels of one group (a workload), so that the order within a workload, which
    the search and the editor use, weighs as much as the absolute time."""
    drawn = pairs(groups, ylog, np.random.default_rng(0)) if RANK_WEIGHT and groups is not None \
        else None

    def obj(preds, dtrain):
        share = np.exp2(np.clip(preds, -60, 30))
        total = np.bincount(seg, weights=share, minlength=n)
        lp = np.log2(np.maximum(total, 1e-300))
        w = share / total[seg]
        gk = lp - ylog                        # d loss / d lp per kernel
        hk = np.ones(n)
        if drawn is not None and len(drawn[0]):
            fa, sl = drawn
            z = lp[fa] - lp[sl]               # want the faster one predicted lower
            sig = 1.0 / (1.0 + np.exp(-z))
            scale = RANK_WEIGHT * n / len(fa)
            gk = gk + scale * (np.bincount(fa, sig, n) - np.bincount(sl, sig, n))
            hk = hk + scale * (np.bincount(fa, sig * (1 - sig), n)
                               + np.bincount(sl, sig * (1 - sig), n))
        grad = gk[seg] * w
        hess = np.maximum(hk[seg] * w, 1e-3)  # an upper bound of the Gauss-Newton w * w
        return grad, hess
    return obj


def group_codes(groups) -> np.ndarray:
    """Each sample's group as an integer 0..n-1 (groups compared as text)."""
    _, codes = np.unique(np.asarray([str(g) for g in groups]), return_inverse=True)
    return codes
