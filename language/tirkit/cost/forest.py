"""A trained XGBoost tree ensemble evaluated with numpy, for predicting a few kernels at a time.

XGBoost's own prediction (`Booster.inplace_predict`) costs about 0.3 ms a call whatever the
number of rows (0.29 ms for one row, 0.89 ms for a hundred, on the shipped 300 trees): its
fixed cost is most of what a hover's prediction would spend in two boosters.  The trees
themselves are small (depth 6), so this module walks all of them at once, one numpy step per
level, and a call for one kernel takes a few tens of microseconds.  The arithmetic is
XGBoost's: float32 inputs and thresholds, `x < threshold` goes to the left child, a missing
value (NaN) takes the node's default direction, and the leaves are added to the base
margin one tree after another in float32 (tests/cost/test_forest.py compares the two on the
shipped model and on freshly trained trees).  Training, saving and loading stay XGBoost's;
a Forest is derived from a Booster and replaced with it.
"""
from __future__ import annotations

import json

import numpy as np


class Forest:
    """The trees of one XGBoost booster (a single output, numeric splits), as padded arrays
    of shape (trees, nodes): each node's feature, threshold, children and default direction;
    a leaf is its own child both ways and holds its value in `value`."""

    __slots__ = ("feature", "threshold", "left", "right", "default_left", "value", "depth",
                 "num_features", "_left", "_right")

    def __init__(self, trees: list, num_features: int):
        n_trees = len(trees)
        width = max((len(t["left_children"]) for t in trees), default=1)
        shape = (max(n_trees, 1), width)
        self.feature = np.zeros(shape, dtype=np.intp)
        self.threshold = np.zeros(shape, dtype=np.float32)
        self.left = np.zeros(shape, dtype=np.intp)
        self.right = np.zeros(shape, dtype=np.intp)
        self.default_left = np.zeros(shape, dtype=bool)
        self.value = np.zeros(shape, dtype=np.float32)
        self.num_features = num_features
        depth = 0
        for i, t in enumerate(trees):
            if any(t.get("split_type", ())) or t.get("categories_nodes"):
                raise ValueError("categorical splits are not supported")
            left = np.asarray(t["left_children"], dtype=np.intp)
            right = np.asarray(t["right_children"], dtype=np.intp)
            cond = np.asarray(t["split_conditions"], dtype=np.float32)
            leaf = left < 0
            own = np.arange(len(left))
            n = len(left)
            self.feature[i, :n] = np.where(leaf, 0, t["split_indices"])
            self.threshold[i, :n] = cond
            self.left[i, :n] = np.where(leaf, own, left)
            self.right[i, :n] = np.where(leaf, own, right)
            self.default_left[i, :n] = np.asarray(t["default_left"], dtype=bool)
            self.value[i, :n] = np.where(leaf, cond, 0.0)
            self.left[i, n:] = self.right[i, n:] = np.arange(n, width)
            depth = max(depth, _depth(left, right))
        self.depth = depth
        offset = (np.arange(shape[0]) * width)[:, None]
        self._left = (self.left + offset).ravel()       # children as flat indices
        self._right = (self.right + offset).ravel()

    @classmethod
    def from_booster(cls, booster) -> "Forest":
        model = json.loads(booster.save_raw("json"))
        learner = model["learner"]
        param = learner["learner_model_param"]
        if int(param.get("num_class", "0") or 0) > 1 or int(param.get("num_target", "1")) > 1:
            raise ValueError("only single-output boosters are supported")
        gb = learner["gradient_booster"]
        if gb.get("name") != "gbtree":
            raise ValueError(f"unsupported booster {gb.get('name')!r}")
        return cls(gb["model"]["trees"], int(param["num_feature"]))

    def margin(self, X, start) -> np.ndarray:
        """Each row's base margin (`start`) plus its leaf in every tree, as XGBoost's
        `inplace_predict(X, predict_type="margin", base_margin=start)` computes it."""
        X = np.ascontiguousarray(X, dtype=np.float32)
        if X.ndim != 2 or X.shape[1] != self.num_features:
            raise ValueError(f"expected rows of {self.num_features} features, got {X.shape}")
        n, width = len(X), self.feature.shape[1]
        flat = X.ravel()
        # nodes as flat indices into the (trees, nodes) arrays, one per (row, tree)
        node = np.tile(np.arange(self.feature.shape[0]) * width, n)
        at = np.repeat(np.arange(n) * self.num_features, self.feature.shape[0])
        missing = bool(np.isnan(flat).any())
        feature, threshold = self.feature.ravel(), self.threshold.ravel()
        left, right = self._left, self._right
        for _ in range(self.depth):
            x = flat.take(at + feature.take(node))
            go_left = x < threshold.take(node)
            if missing:
                go_left = np.where(np.isnan(x), self.default_left.ravel().take(node), go_left)
            node = np.where(go_left, left.take(node), right.take(node))
        leaves = self.value.ravel().take(node).reshape(n, -1)
        total = np.asarray(start, dtype=np.float32).reshape(n, 1)
        # one tree after another in float32, as XGBoost adds them (cumsum is sequential)
        return np.cumsum(np.concatenate([total, leaves], axis=1), axis=1,
                         dtype=np.float32)[:, -1].astype(np.float64)


def _depth(left, right) -> int:
    """Edges on the longest path from the root (0 for a single leaf)."""
    depth, level = 0, [0]
    while True:
        nxt = [c for n in level for c in (left[n], right[n]) if c >= 0]
        if not nxt:
            return depth
        depth, level = depth + 1, nxt
