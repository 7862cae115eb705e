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


def _trained_with_missing_values(rng):
    X = rng.normal(size=(400, 9)).astype(np.float32)
    y = X[:, 0] * X[:, 4] - X[:, 2] + rng.normal(0, 0.1, 400)
    X[rng.random(X.shape) < 0.2] = np.nan
    return [xgb.train({"max_depth": d, "eta": 0.3, "nthread": 1, "seed": 0},
                      xgb.DMatrix(X, label=y), num_boost_round=n) for d, n in ((4, 25), (3, 10))]


def test_a_stored_forest_reads_back_array_for_array():
    import json
    rng = np.random.default_rng(11)
    forest = Forest.from_boosters(_trained_with_missing_values(rng))
    doc = json.loads(json.dumps(forest.to_doc()))        # as a model file holds it
    back = Forest.from_doc(doc)
    for name in Forest.__slots__:
        a, b = getattr(forest, name), getattr(back, name)
        assert np.array_equal(a, b, equal_nan=isinstance(a, np.ndarray) and a.dtype.kind == "f")
    T = rng.normal(size=(30, 9)).astype(np.float32)
    T[rng.random(T.shape) < 0.2] = np.nan
    starts = [rng.normal(size=30), np.zeros(30)]
    for got, want in zip(back.margins(T, starts), forest.margins(T, starts)):
        assert np.array_equal(got, want)
    # arrays that do not make a forest are refused, not walked out of bounds
    n = len(forest.feature)
    bad_child = dict(doc, child=doc["child"][:-8])       # cut short
    past_end = forest.to_doc()
    past_end["roots"] = [n + 5]
    wide = dict(doc, num_features=3)                     # splits on features 3..8
    shallow = dict(doc, depth=doc["depth"] - 1)          # the walk would stop on a split
    for broken in (bad_child, past_end, wide, shallow,
                   {k: v for k, v in doc.items() if k != "cond"}):
        with pytest.raises(ValueError, match="not a stored forest"):
            Forest.from_doc(broken)


def test_the_shipped_model_predicts_without_xgboost():
    """A model file carries its Forest: loading it and predicting a few kernels, or many,
    needs no xgboost (a hover's first prediction skips its import), with XGBoost's margins."""
    import json
    import subprocess
    import sys
    code = (
        "import sys, json; sys.modules['xgboost'] = None\n"          # import xgboost fails
        "import tirkit\n"
        "from tirkit.cost import model as M\n"
        "from tirkit.cost.workloads import WORKLOADS\n"
        "fs = [tirkit.parse(WORKLOADS[n]()).module.prim_funcs()[0][1]\n"
        "      for n in ('gmm_64_256', 'c1d_96', 'softmax_256')]\n"
        "m = M.CostModel.default()\n"
        "one = [float(m.predict([f])[0]) for f in fs]\n"
        "many = [float(x) for x in m.predict(fs * 7)]\n"            # more than FEW_ROWS
        "print(json.dumps([one, many]))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    one, many = json.loads(out.stdout)
    funcs = [tirkit.parse(WORKLOADS[n]()).module.prim_funcs()[0][1]
             for n in ("gmm_64_256", "c1d_96", "softmax_256")]
    model = M.CostModel.load(M.DEFAULT_PATH)
    model.few_rows = 0                                   # XGBoost's own prediction here
    want = model.predict(funcs).tolist()
    assert one == want and many == want * 7
    assert len(set(want)) == 3


def test_a_loaded_model_predicts_alike_from_many_threads():
    """Threads predicting through the stored Forest while others make the model decode its
    boosters (a call of more than FEW_ROWS kernels) all get XGBoost's numbers."""
    from concurrent.futures import ThreadPoolExecutor
    funcs = [tirkit.parse(WORKLOADS[n]()).module.prim_funcs()[0][1]
             for n in ("gmm_64_256", "c1d_96", "softmax_256")]
    rows = M.featurize(funcs)
    want = M.CostModel.load(M.DEFAULT_PATH).predict_rows(rows * 7)[:3]
    model = M.CostModel.load(M.DEFAULT_PATH)              # its boosters not yet decoded
    jobs = [rows if i % 2 else rows * 7 for i in range(16)]
    with ThreadPoolExecutor(8) as pool:
        got = list(pool.map(model.predict_rows, jobs))
    for g in got:
        assert np.array_equal(g[:3], want) and np.array_equal(g, np.tile(want, len(g) // 3))
