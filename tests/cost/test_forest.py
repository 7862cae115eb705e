"""Trees walked with numpy give XGBoost's own margins, bit for bit."""
import numpy as np
import pytest

import tirkit
from tirkit.cost import model as M
from tirkit.cost.forest import Forest
from tirkit.cost.workloads import WORKLOADS

xgb = pytest.importorskip("xgboost")


def _xgboost_margin(booster, X, start):
    return booster.inplace_predict(X, predict_type="margin",
                                   base_margin=np.asarray(start, np.float32)).astype(np.float64)


def test_trained_trees_with_missing_values_agree():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(600, 12)).astype(np.float32)
    y = 2 * X[:, 0] - np.abs(X[:, 3]) + X[:, 5] * X[:, 7] + rng.normal(0, 0.1, 600)
    X[rng.random(X.shape) < 0.15] = np.nan          # learned default directions both ways
    booster = xgb.train({"max_depth": 5, "eta": 0.3, "nthread": 1, "seed": 0},
                        xgb.DMatrix(X, label=y, base_margin=np.full(600, 0.5, np.float32)),
                        num_boost_round=40)
    forest = Forest.from_booster(booster)
    assert forest.depth == 5 and forest.num_features == 12
    assert forest.default_left.any() and not forest.default_left.all()
    T = rng.normal(size=(50, 12)).astype(np.float32)
    T[rng.random(T.shape) < 0.2] = np.nan
    start = rng.normal(size=50)
    got, want = forest.margin(T, start), _xgboost_margin(booster, T, start)
    assert np.array_equal(got, want)
    assert np.ptp(got) > 1.0                          # the trees do separate the rows
    # a row exactly on a threshold goes right, as in XGBoost
    node = forest.roots[0]                            # the first tree's root: a split
    assert not np.isnan(forest.threshold[node])
    edge = np.zeros((1, 12), np.float32)
    edge[0, forest.feature[node]] = forest.threshold[node]
    assert np.array_equal(forest.margin(edge, [0.0]), _xgboost_margin(booster, edge, [0.0]))


def test_rows_of_the_wrong_width_are_refused():
    booster = xgb.train({"max_depth": 2, "nthread": 1},
                        xgb.DMatrix(np.eye(4, dtype=np.float32), label=[1, 2, 3, 4]), 2)
    with pytest.raises(ValueError, match="4 features"):
        Forest.from_booster(booster).margin(np.zeros((1, 3), np.float32), [0.0])


def test_shipped_model_predicts_a_kernel_alone_as_in_a_batch():
    model = M.CostModel.default()
    assert model is not None and model.objective == "ensemble"
    funcs = [tirkit.parse(WORKLOADS[name]()).module.prim_funcs()[0][1]
             for name in ("gmm_64_256", "c1d_96", "softmax_256", "rowsum_1024", "pool_max_32")]
    rows = M.featurize(funcs) * 6                    # more rows than FEW_ROWS: XGBoost's path
    assert len(rows) > M.FEW_ROWS
    batch = model.predict_rows(rows)
    alone = np.array([model.predict_rows([r])[0] for r in rows])
    assert np.array_equal(alone, batch)
    P = M.pooled(rows)
    for booster, start in ((model.booster, P[:, -1]), (model.ranker, -P[:, -1])):
        assert np.array_equal(Forest.from_booster(booster).margin(P, start),
                              _xgboost_margin(booster, P, start))
    # both boosters walked at once, one margin each
    joined = Forest.from_boosters([model.booster, model.ranker])
    assert joined.bounds == [0, 300, 600]
    for got, booster, start in zip(joined.margins(P, [P[:, -1], -P[:, -1]]),
                                   (model.booster, model.ranker), (P[:, -1], -P[:, -1])):
        assert np.array_equal(got, _xgboost_margin(booster, P, start))
