"""The learned cost model: XGBoost over the per-store features, predicting seconds.

    model = CostModel.default()             # the model shipped in the package (or None)
    model.predict([func, ...])              # numpy array of predicted seconds, one per kernel
    model = CostModel(); model.fit(funcs, seconds)
    model.update(more_funcs, more_seconds)  # add measured samples and refit
    model.save(path); CostModel.load(path); model.machine

Objectives (`objective=`):
- "packsum": each store row gets a score f, the kernel's predicted time is the sum
  of 2**f over its stores (TVM MetaSchedule's pack-sum), and the loss is the squared error of
  log2 of that sum against log2 of the measured time, plus a pairwise logistic loss on pairs
  of kernels of one workload that are more than ~7% apart (RankNet's, on the same log2 sums).
  Gradients are written in `objectives` (an XGBoost custom objective); the predicted time
  is in seconds for any kernel.
- "regression": one row per kernel (its store rows pooled:
  sum and max of each feature, and the busiest store's row), squared error on log2 seconds,
  each kernel weighted by its speed relative to the fastest kernel of its group (Ansor's
  weighting: the search and the editor's ordering need the fast kernels ranked right more
  than the slow ones). The trees start from the cycle estimate (`tirkit.cost.cycles`, log2
  of its seconds as XGBoost's base margin) and learn its error.
- "pairwise": the same pooled rows with XGBoost's `rank:pairwise` inside each group (a
  workload), also starting from the cycle estimate; its score orders kernels of one
  workload, and a linear fit turns scores into log2 seconds.
- "ensemble" (the default, DEFAULT_OBJECTIVE): both of the last two, trained on the same
  rows; the prediction is the weighted mean of their log2 seconds (`BLEND` the ranker's
  share). The ranker's errors are partly independent of the regression's: held out, the
  mean picks the fastest kernel better than the regression alone and keeps its rank
  correlation, which the ranker alone loses (docs/cost-model.md).
"""
from __future__ import annotations

import base64
import gzip
import json
import os
import threading
from typing import NamedTuple, Optional

import numpy as np

from ..extras import installed
from . import cycles as C
from . import features as F
from .forest import Forest
from .objectives import group_codes, packsum_objective, speed_weights

FORMAT = "tirkit-cost-model"
DEFAULT_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data",
                            "default_model.json.gz")
DEFAULT_OBJECTIVE = "ensemble"      # the best on held-out workloads (docs/cost-model.md)
OBJECTIVES = ("packsum", "regression", "pairwise", "ensemble")
BLEND = 0.25                        # the pairwise ranker's share of an ensemble's log2 seconds
PARAMS = {"max_depth": 6, "eta": 0.1, "lambda": 10, "min_child_weight": 2, "subsample": 0.9,
          "colsample_bytree": 0.9, "nthread": 1, "verbosity": 0, "seed": 0}
ROUNDS = 300
UPDATE_ROUNDS = 30
FEW_ROWS = 16       # up to this many rows a call walks the trees with numpy (`forest`): faster


def _xgb():
    try:
        import xgboost
    except ImportError as e:          # the `cost` extra is not installed
        raise ImportError(f"the cost model needs xgboost ({e}): pip install 'tirkit[cost]'") \
            from None
    return xgboost


def featurize(funcs) -> list:
    return [F.extract(f) for f in funcs]


_BUSY = F.INDEX["loop.outer_product"]
_LAUNCH = F.INDEX["kernel.launch_row"]
_CYCLES = F.INDEX["cycles.thread"]


def estimate(rows_list) -> np.ndarray:
    """log2 of each kernel's cycle estimate in seconds (`cycles.seconds`: the sum over its
    rows and one call)."""
    return np.log2(np.maximum([C.seconds(r, _CYCLES) for r in rows_list], 1e-9))


def pooled(rows_list) -> np.ndarray:
    """One row per kernel: the sum and the max of each feature over its stores, the row of
    its busiest store (the most executions), whose features pooling would take apart, and
    the kernel's cycle estimate (`estimate`)."""
    n = len(F.NAMES)
    out = np.zeros((len(rows_list), 3 * n + 1), dtype=np.float32)
    for i, r in enumerate(rows_list):
        if len(r):
            out[i, :n] = r.sum(axis=0)
            out[i, n:2 * n] = r.max(axis=0)
            busy = np.where(r[:, _LAUNCH] > 0, -np.inf, r[:, _BUSY])
            out[i, 2 * n:3 * n] = r[int(np.argmax(busy))]
    out[:, 3 * n] = estimate(rows_list)
    return out


def _stack(rows_list):
    """(all store rows, the kernel index of each row)."""
    lens = [max(1, len(r)) for r in rows_list]
    X = np.zeros((sum(lens), len(F.NAMES)), dtype=np.float32)
    seg = np.repeat(np.arange(len(rows_list)), lens)
    at = 0
    for r, n in zip(rows_list, lens):
        if len(r):
            X[at:at + n] = r
        at += n
    return X, seg


class _Trees(NamedTuple):
    """A model's trained trees, replaced whole (under the model's lock) and never changed."""
    booster: object                   # packsum, regression or pairwise trees (None: untrained)
    ranker: object                    # an ensemble's pairwise trees (its booster: regression)
    calibration: Optional[tuple]      # pairwise trees: (slope, intercept), score to log2 s
    raw: Optional[tuple]              # a loaded model's boosters as stored (base64 text), not
                                      # yet decoded: xgboost is imported when they are needed
    forest: object                    # their Forest; None until built, False if it cannot be

    @property
    def trained(self) -> bool:
        return self.booster is not None or self.raw is not None


_UNTRAINED = _Trees(None, None, None, None, None)


class CostModel:
    def __init__(self, objective=DEFAULT_OBJECTIVE, params=None, rounds=ROUNDS, machine=None):
        if objective not in OBJECTIVES:
            raise ValueError(f"unknown objective {objective!r}")
        self.objective = objective
        self.params = dict(PARAMS, **(params or {}))
        self.rounds = rounds
        self.machine = machine
        self._trees = _UNTRAINED
        self.offset = 0.0                 # packsum: the margin every store row starts from
        self.samples = 0
        self._rows: list = []             # feature rows of the samples this model was fit on
        self._y: list = []
        self._groups: list = []
        self._prior = None                # a loaded model's (booster, ranker): updates start there
        self._prior_samples = 0
        self._extra: tuple = ([], [], [])  # (rows, seconds, groups) measured since loading
        self.few_rows = FEW_ROWS          # calls of up to this many rows walk the trees (0: never)
        self._lock = threading.Lock()

    @property
    def booster(self):
        return self._decoded(self._state()).booster

    @property
    def ranker(self):
        return self._decoded(self._state()).ranker

    @property
    def calibration(self):
        return self._state().calibration

    @property
    def trained(self) -> bool:
        return self._state().trained

    def _state(self) -> _Trees:
        with self._lock:
            return self._trees

    def _replace(self, old: _Trees, new: _Trees) -> _Trees:
        """Put `new` in place of `old` unless the model was retrained meanwhile."""
        with self._lock:
            if self._trees is old:
                self._trees = new
        return new

    def _decoded(self, t: _Trees) -> _Trees:
        """`t` with a loaded model's boosters decoded (this imports xgboost)."""
        if t.raw is None:
            return t
        return self._replace(t, t._replace(booster=_booster(t.raw[0]), ranker=_booster(t.raw[1]),
                                           raw=None))

    def _forest(self, t: _Trees):
        """The Forest of `t`'s boosters (both of an ensemble), built on first use (about
        0.1 s each) unless the model file had it; None for trees Forest does not take
        (categorical splits)."""
        if t.forest is None:
            d = self._decoded(t)
            boosters = (d.booster, d.ranker) if self.objective == "ensemble" else (d.booster,)
            try:
                forest = Forest.from_boosters(boosters)
            except ValueError:
                forest = False
            with self._lock:
                if self._trees is t or self._trees is d:
                    self._trees = d._replace(forest=forest)
            return forest or None
        return t.forest or None

    # ---- training --------------------------------------------------------------------------
    def fit(self, funcs, seconds, groups=None, rows=None):
        """Train from scratch on kernels and their measured seconds (`rows`: their features,
        when already extracted; `groups`: workload labels, used by the pairwise objective)."""
        rows = rows if rows is not None else featurize(funcs)
        self._rows = list(rows)
        self._y = [float(s) for s in seconds]
        self._groups = list(groups) if groups is not None else [0] * len(self._rows)
        self._train(self._rows, self._y, self._groups, None, self.rounds)
        return self

    def update(self, funcs, seconds, groups=None, rows=None):
        """Add measured samples and refit: from scratch on everything this model was fit on,
        or, for a loaded model (its training set is not kept), with UPDATE_ROUNDS more rounds
        from the loaded trees on every sample measured since loading.  Each refit starts
        again from the loaded trees, so the first batch of a search weighs no more than the
        last (rounds added batch after batch, each fitted to its own few samples, would)."""
        rows = rows if rows is not None else featurize(funcs)
        groups = list(groups) if groups is not None else [0] * len(rows)
        if self._rows or not self.trained:
            self._rows += list(rows)
            self._y += [float(s) for s in seconds]
            self._groups += groups
            self._train(self._rows, self._y, self._groups, None, self.rounds)
        else:
            if self._prior is None:
                self._prior, self._prior_samples = (self.booster, self.ranker), self.samples
            er, ey, eg = self._extra
            er += list(rows)
            ey += [float(s) for s in seconds]
            eg += groups
            self._train(er, ey, eg, self._prior, UPDATE_ROUNDS)
        return self

    def _train(self, rows, y, groups, base, rounds):
        """`base`: the (booster, ranker) the trees continue from, or None."""
        xgb = _xgb()
        ylog = np.log2(np.maximum(np.asarray(y, dtype=np.float64), 1e-9))
        prior, prior_ranker = base or (None, None)
        ranker, calibration = None, self.calibration
        if self.objective == "packsum":
            X, seg = _stack(rows)
            if base is None:
                self.offset = float(np.median(ylog)) - 1.0
            d = xgb.DMatrix(X, base_margin=np.full(len(X), self.offset, dtype=np.float32))
            booster = xgb.train(self.params, d, num_boost_round=rounds,
                                obj=packsum_objective(seg, ylog, len(rows), groups),
                                xgb_model=prior)
        else:
            P = pooled(rows)
            if self.objective == "pairwise":
                booster, calibration = self._rank(P, ylog, groups, rounds, prior)
            else:
                params = dict(self.params, objective="reg:squarederror")
                d = xgb.DMatrix(P, label=ylog, weight=speed_weights(ylog, groups),
                                base_margin=P[:, -1])
                booster = xgb.train(params, d, num_boost_round=rounds, xgb_model=prior)
                if self.objective == "ensemble":
                    ranker, calibration = self._rank(P, ylog, groups, rounds, prior_ranker)
        with self._lock:
            self._trees = _Trees(booster, ranker, calibration, None, None)
            self.samples = self._prior_samples + len(rows) if base is not None else len(rows)
        if self.machine is None:
            from .measure import host
            self.machine = host()

    def _rank(self, P, ylog, groups, rounds, prior):
        """`rank:pairwise` trees within each group, starting from the cycle estimate (its
        score is minus log2 seconds plus the trees' correction), and the linear fit from
        score to log2 seconds."""
        xgb = _xgb()
        codes = group_codes(groups)
        order = np.argsort(codes, kind="stable")
        P, ylog, codes = P[order], ylog[order], codes[order]
        params = dict(self.params, objective="rank:pairwise")
        d = xgb.DMatrix(P, label=-ylog, qid=codes, base_margin=-P[:, -1])
        booster = xgb.train(params, d, num_boost_round=rounds, xgb_model=prior)
        s = _margin(booster, P, -P[:, -1])
        a = np.polyfit(s, ylog, 1) if len(s) > 1 and np.ptp(s) > 0 else (0.0, ylog.mean())
        return booster, (float(a[0]), float(a[1]))

    # ---- prediction ------------------------------------------------------------------------
    def predict(self, funcs) -> np.ndarray:
        """Predicted seconds, one per PrimFunc."""
        return self.predict_rows(featurize(funcs))

    def predict_rows(self, rows_list) -> np.ndarray:
        if not rows_list:
            return np.zeros(0)
        t = self._state()
        if not t.trained:
            raise RuntimeError("the cost model is not trained")
        if self.objective == "packsum":
            X, seg = _stack(rows_list)
            f, = self._margins(t, X, [np.full(len(X), self.offset, dtype=np.float32)])
            out = np.bincount(seg, weights=np.exp2(np.clip(f, -60, 30)),
                              minlength=len(rows_list))
            return out
        P = pooled(rows_list)
        a, b = t.calibration or (0.0, 0.0)
        if self.objective == "pairwise":
            r, = self._margins(t, P, [-P[:, -1]])
            return np.exp2(a * r + b)
        if self.objective == "ensemble":
            s, r = self._margins(t, P, [P[:, -1], -P[:, -1]])
            return np.exp2((1 - BLEND) * s + BLEND * (a * r + b))
        s, = self._margins(t, P, [P[:, -1]])
        return np.exp2(s)

    def _margins(self, t: _Trees, X, starts) -> list:
        """`_margin` of each of `t`'s boosters (the booster; an ensemble's ranker second), by
        walking all their trees at once with numpy for a few rows (a hover's one kernel:
        XGBoost's fixed cost per call is larger than the walk; `tirkit.cost.forest`) or
        without xgboost installed, by XGBoost for more. Both give the same float32 sums."""
        if len(X) <= self.few_rows or not installed("xgboost"):
            forest = self._forest(t)
            if forest is not None:
                return forest.margins(X, starts)
        d = self._decoded(t)
        return [_margin(b, X, s) for b, s in zip((d.booster, d.ranker), starts)]

    # ---- files -----------------------------------------------------------------------------
    def save(self, path):
        """Write the model (gzip-compressed if `path` ends in .gz): its boosters as XGBoost
        stores them, and their Forest, which `load` reads back without xgboost."""
        t = self._state()
        if t.raw is not None:
            booster, ranker = t.raw
        else:
            booster, ranker = (base64.b64encode(bytes(b.save_raw("ubj"))).decode("ascii")
                               if b is not None else "" for b in (t.booster, t.ranker))
        forest = self._forest(t) if t.trained else None
        doc = {"format": FORMAT, "version": 2, "features_version": F.VERSION,
               "feature_names": F.NAMES, "objective": self.objective, "machine": self.machine,
               "samples": self.samples, "params": self.params, "rounds": self.rounds,
               "calibration": t.calibration, "offset": self.offset,
               "booster": booster, "ranker": ranker,
               "forest": forest.to_doc() if forest is not None else None}
        data = json.dumps(doc).encode()
        tmp = str(path) + ".tmp"
        with open(tmp, "wb") as fh:
            fh.write(gzip.compress(data, mtime=0) if str(path).endswith(".gz") else data)
        os.replace(tmp, path)

    @classmethod
    def load(cls, path) -> "CostModel":
        with open(path, "rb") as fh:
            data = fh.read()
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
        doc = json.loads(data)
        if doc.get("format") != FORMAT:
            raise ValueError(f"{path}: not a tirkit cost model")
        if doc.get("features_version") != F.VERSION:
            raise ValueError(f"{path}: trained on features version {doc.get('features_version')},"
                             f" this tirkit computes version {F.VERSION}: retrain it "
                             "(tirkit cost train)")
        m = cls(doc["objective"], doc.get("params"), doc.get("rounds", ROUNDS), doc.get("machine"))
        m.samples = doc.get("samples", 0)
        m.offset = float(doc.get("offset", 0.0))
        booster, ranker = doc["booster"], doc.get("ranker") or ""
        if not isinstance(booster, str) or not isinstance(ranker, str):
            raise ValueError(f"{path}: boosters are not stored as text")
        if m.objective == "ensemble" and bool(booster) != bool(ranker):
            raise ValueError(f"{path}: an ensemble without its ranker")
        forest = None
        if booster and doc.get("forest"):     # version 2 files; version 1 builds it on use
            try:
                forest = Forest.from_doc(doc["forest"])
            except ValueError:                # built again from the boosters when needed
                forest = None
        calibration = tuple(doc["calibration"]) if doc.get("calibration") else None
        m._trees = _Trees(None, None, calibration, (booster, ranker), forest) if booster \
            else _UNTRAINED._replace(calibration=calibration)
        if booster and forest is None:        # nothing to predict by without xgboost
            m._decoded(m._trees)
        return m

    @classmethod
    def default(cls):
        """The model shipped with tirkit (or the one `TIRKIT_COST_MODEL` names); None when
        there is none or its features are of another version. Its stored Forest predicts
        without xgboost; a file without one (version 1) needs xgboost installed."""
        return _default(os.environ.get("TIRKIT_COST_MODEL") or DEFAULT_PATH)


def _booster(text):
    """An XGBoost booster from its base64 text in a model file (None for empty text)."""
    raw = base64.b64decode(text)
    if not raw:
        return None
    b = _xgb().Booster()
    b.load_model(bytearray(raw))
    b.set_param({"nthread": 1})
    return b


def _margin(booster, X, start=None):
    """Raw scores; `start`: each row's base margin."""
    kw = {} if start is None else {"base_margin": np.asarray(start, dtype=np.float32)}
    return np.asarray(booster.inplace_predict(X, predict_type="margin", **kw),
                      dtype=np.float64)


_DEFAULT: dict = {}
_DEFAULT_LOCK = threading.Lock()


def _default(path):
    with _DEFAULT_LOCK:
        try:
            mtime = os.stat(path).st_mtime
        except OSError:
            return None
        hit = _DEFAULT.get(path)
        if hit is not None and hit[0] == mtime:
            return hit[1]
        try:
            model = CostModel.load(path)
        except (ImportError, ValueError, OSError, KeyError):
            model = None
        _DEFAULT.clear()
        _DEFAULT[path] = (mtime, model)
        return model
