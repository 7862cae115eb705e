"""Trained XGBoost tree ensembles evaluated with numpy, for predicting a few kernels at a time.

XGBoost's own prediction (`Booster.inplace_predict`) has a large fixed cost per call whatever
the number of rows (0.29 ms for one row, 0.89 ms for a hundred, on the shipped 300 trees, on
a Zen 4 host; the shipped ensemble's two boosters 1.7 ms for one row on a Zen 1 host): most
of what a hover's prediction would spend.  The trees themselves are small (depth 6), so this
module walks all of them at once, those of both boosters of an ensemble in the same walk,
one numpy step per level, and a call for one kernel takes 0.17 ms for the ensemble's 600
trees on the Zen 1 host.  The arithmetic is XGBoost's: float32 inputs and thresholds,
`x < threshold` goes to the left child, a missing value (NaN) takes the node's default
direction, and the leaves are added to the base margin one tree after another in float32
(tests/cost/test_forest.py compares the two on the shipped model and on freshly trained
trees).  Training stays XGBoost's; a Forest is derived from boosters and replaced with them.
A model file keeps its boosters' Forest beside them (`to_doc` / `from_doc`), so that a
hover's first prediction after loading needs neither xgboost's import nor the layout.
"""
from __future__ import annotations

import base64
import json

import numpy as np


class Forest:
    """The trees of one or more XGBoost boosters (single output, numeric splits), as flat
    arrays over all their nodes: each node's feature, threshold, default direction, first
    child and leaf value.  The nodes are renumbered so that a node's two children are
    neighbours (left, then right): one step of the walk is `child[node] + goes_right`.  A
    leaf is its own child, with a NaN threshold (no row goes right of it) and the default
    direction left (neither does a missing value).  The trees of booster g are
    `trees[bounds[g]:bounds[g + 1]]`; `margins` sums each booster's leaves separately, so one
    walk serves an ensemble."""

    __slots__ = ("feature", "threshold", "child", "default_left", "value", "roots", "bounds",
                 "depth", "num_features")

    def __init__(self, boosters_trees: list, num_features: int):
        feature, cond, child, default_left, roots = [], [], [], [], []
        bounds, depth = [0], 0
        for trees in boosters_trees:
            for t in trees:
                if any(t.get("split_type", ())) or t.get("categories_nodes"):
                    raise ValueError("categorical splits are not supported")
                left, right = t["left_children"], t["right_children"]
                base = len(feature)
                order = [0]                           # breadth first, siblings side by side
                level = [0]                           # each node's edges from the root
                new = {0: base}
                for k, old in enumerate(order):
                    if left[old] >= 0:
                        new[left[old]], new[right[old]] = base + len(order), base + len(order) + 1
                        order += [left[old], right[old]]
                        level += [level[k] + 1] * 2
                depth = max(depth, level[-1])         # breadth first: the last is the deepest
                roots.append(base)
                for old in order:
                    feature.append(int(t["split_indices"][old]))
                    cond.append(float(t["split_conditions"][old]))
                    child.append(new[old] if left[old] < 0 else new[left[old]])
                    default_left.append(bool(t["default_left"][old]))
            bounds.append(len(roots))
        self._set(feature, cond, child, default_left, roots, bounds, depth, num_features)

    def _set(self, feature, cond, child, default_left, roots, bounds, depth, num_features):
        """The arrays from each node's feature, `cond` (a split's threshold, a leaf's value),
        first child (a leaf is its own) and default direction; a leaf's feature, threshold
        and direction are set here (0, NaN, left), whatever was given for them."""
        child = np.asarray(child, dtype=np.intp)
        leaf = child == np.arange(len(child))
        cond = np.asarray(cond, dtype=np.float32)
        self.feature = np.where(leaf, 0, np.asarray(feature, dtype=np.intp)).astype(np.intp)
        self.threshold = np.where(leaf, np.float32(np.nan), cond).astype(np.float32)
        self.value = np.where(leaf, cond, np.float32(0)).astype(np.float32)
        self.child = child
        self.default_left = np.asarray(default_left, dtype=bool) | leaf
        self.roots = np.asarray(roots, dtype=np.intp)
        self.bounds, self.depth, self.num_features = list(bounds), depth, num_features

    @classmethod
    def from_booster(cls, booster) -> "Forest":
        return cls.from_boosters([booster])

    @classmethod
    def from_boosters(cls, boosters) -> "Forest":
        """One Forest over several boosters of the same features (`margins`: one column each)."""
        trees, widths = [], set()
        for booster in boosters:
            model = json.loads(booster.save_raw("json"))
            learner = model["learner"]
            param = learner["learner_model_param"]
            if int(param.get("num_class", "0") or 0) > 1 or int(param.get("num_target", "1")) > 1:
                raise ValueError("only single-output boosters are supported")
            gb = learner["gradient_booster"]
            if gb.get("name") != "gbtree":
                raise ValueError(f"unsupported booster {gb.get('name')!r}")
            trees.append(gb["model"]["trees"])
            widths.add(int(param["num_feature"]))
        if len(widths) != 1:
            raise ValueError(f"boosters of different feature counts: {sorted(widths)}")
        return cls(trees, widths.pop())

    # the stored arrays: each node's feature, its threshold (a split) or value (a leaf), its
    # first child (a leaf is its own) and default direction, in these fixed little-endian types
    _STORED = (("feature", "<i4"), ("cond", "<f4"), ("child", "<i4"), ("default_left", "u1"))

    def to_doc(self) -> dict:
        """The trees as a JSON-able dict (`from_doc` reads it back, array for array)."""
        cond = np.where(np.isnan(self.threshold), self.value, self.threshold)
        arrays = {"feature": self.feature, "cond": cond, "child": self.child,
                  "default_left": self.default_left}
        return {"num_features": self.num_features, "depth": self.depth,
                "bounds": list(self.bounds), "roots": self.roots.tolist(),
                **{name: base64.b64encode(np.asarray(arrays[name]).astype(dtype).tobytes())
                   .decode("ascii") for name, dtype in self._STORED}}

    @classmethod
    def from_doc(cls, doc: dict) -> "Forest":
        """A Forest from `to_doc`'s dict; ValueError if the arrays do not make one."""
        try:
            a = {name: np.frombuffer(base64.b64decode(doc[name]), dtype=dtype)
                 for name, dtype in cls._STORED}
            n = len(a["feature"])
            roots = np.asarray(doc["roots"], dtype=np.intp)
            bounds = [int(b) for b in doc["bounds"]]
            depth, width = int(doc["depth"]), int(doc["num_features"])
        except (KeyError, TypeError, ValueError) as e:
            raise ValueError(f"not a stored forest: {e}") from None
        child = a["child"].astype(np.intp)
        leaf = child == np.arange(n)
        if (any(len(v) != n for v in a.values()) or bounds[0] != 0 or bounds[-1] != len(roots)
                or np.any(np.diff(bounds) < 0) or depth < 0
                or (n and (child.min() < 0 or child.max() >= n
                           or np.any(child[~leaf] + 1 >= n)))
                or np.any(roots < 0) or np.any(roots >= max(n, 1))
                or np.any(a["feature"][~leaf] < 0) or np.any(a["feature"][~leaf] >= width)):
            raise ValueError("not a stored forest: inconsistent arrays")
        at = roots                                    # `depth` steps must reach every leaf
        for _ in range(depth):
            inner = at[~leaf[at]]
            at = np.concatenate([at[leaf[at]], child[inner], child[inner] + 1])
        if not leaf[at].all():
            raise ValueError("not a stored forest: trees deeper than its depth")
        f = cls.__new__(cls)
        f._set(a["feature"], a["cond"], child, a["default_left"], roots, bounds, depth, width)
        return f

    def margin(self, X, start) -> np.ndarray:
        """Each row's base margin (`start`) plus its leaf in every tree, as XGBoost's
        `inplace_predict(X, predict_type="margin", base_margin=start)` computes it (a Forest
        of one booster)."""
        return self.margins(X, [start])[0]

    def margins(self, X, starts) -> list:
        """`margin` for each booster, `starts[g]` the base margins of booster g's rows."""
        X = np.ascontiguousarray(X, dtype=np.float32)
        if X.ndim != 2 or X.shape[1] != self.num_features:
            raise ValueError(f"expected rows of {self.num_features} features, got {X.shape}")
        if len(starts) != len(self.bounds) - 1:
            raise ValueError(f"expected {len(self.bounds) - 1} base margins, got {len(starts)}")
        n, trees = len(X), len(self.roots)
        flat = X.ravel()
        node = np.tile(self.roots, n)                 # one per (row, tree)
        at = np.repeat(np.arange(n) * self.num_features, trees)
        missing = bool(np.isnan(flat).any())
        feature, threshold, child = self.feature, self.threshold, self.child
        for _ in range(self.depth):
            x = flat.take(at + feature.take(node))
            right = x >= threshold.take(node)         # not (x < threshold): XGBoost goes left
            if missing:
                right = np.where(np.isnan(x), ~self.default_left.take(node), right)
            node = child.take(node) + right
        leaves = self.value.take(node).reshape(n, trees)
        out = []
        for g, start in enumerate(starts):
            total = np.asarray(start, dtype=np.float32).reshape(n, 1)
            part = leaves[:, self.bounds[g]:self.bounds[g + 1]]
            # one tree after another in float32, as XGBoost adds them (cumsum is sequential)
            out.append(np.cumsum(np.concatenate([total, part], axis=1), axis=1,
                                 dtype=np.float32)[:, -1].astype(np.float64))
        return out

