"""TVM 0.27 MetaSchedule's XGBModel with its own PerStoreFeature extractor, trained on the
same measured kernels as tirkit's model (each scheduled kernel parsed into TVM from its
script), for `cost_model_eval.py --tvm`.

    preds = tvm_fold(train_records, {workload: records}, parsed)   # {workload: seconds}

`parsed` (a dict, kept by the caller across folds) holds each script parsed into TVM once.

XGBModel learns a normalised throughput per workload (best time / time, pack-sum over
stores); its score orders kernels of one workload, so the predicted "seconds" returned here
are 1 / score (only the order is evaluated). Kernels TVM cannot parse are given the worst
score (counted, printed).
"""
from __future__ import annotations

import re
import sys

import numpy as np

_IMPORT = re.compile(r"^from tvm\.script import \w+ as \w+\n", re.M)


def to_tirx(script: str) -> str:
    s = _IMPORT.sub("", script)
    s = s.replace("@T.prim_func\n", "@T.prim_func(s_tir=True)\n")
    return s.replace("T.block(", "T.sblock(")


def _tvm():
    import tvm
    from tvm.s_tir import meta_schedule as ms
    return tvm, ms


def _target():
    import tvm
    from tirkit.codegen.llvm.engine import host_target
    return tvm.target.Target(host_target())


def _mod(script):
    tvm, _ = _tvm()
    try:
        func = tvm.script.from_source(to_tirx(script))
    except Exception:
        return None
    if isinstance(func, tvm.IRModule):
        return func
    return tvm.IRModule({"main": func.with_attr("global_symbol", "main")})


def _candidate(mod):
    tvm, ms = _tvm()
    from tvm.s_tir import Schedule
    sch = Schedule(mod)
    return ms.MeasureCandidate(sch, ms.arg_info.ArgInfo.from_prim_func(mod["main"]))


def _context(mod, target):
    _, ms = _tvm()
    return ms.TuneContext(mod=mod, target=target, task_name="t", num_threads=1)


def tvm_fold(train_recs, held, parsed=None):
    tvm, ms = _tvm()
    parsed = {} if parsed is None else parsed

    def mod_of(r):
        key = (r["workload"], r["index"], r["func"])
        if key not in parsed:
            parsed[key] = _mod(r["script"])
        return parsed[key]

    target = _target()
    model = ms.cost_model.XGBModel(extractor=ms.feature_extractor.PerStoreFeature(),
                                   num_warmup_samples=0, adaptive_training=True,
                                   num_tuning_cores=1)
    by_w = {}
    for r in train_recs:
        by_w.setdefault(r["workload"], []).append(r)
    failed = 0
    for n, (w, rs) in enumerate(by_w.items()):
        # TVM's adaptive training (retrain when the data grew 20%), and always after the last
        model.adaptive_training = n < len(by_w) - 1
        base = mod_of(rs[0])
        cands, results = [], []
        for r in rs:
            m = mod_of(r)
            if m is None:
                failed += 1
                continue
            cands.append(_candidate(m))
            results.append(ms.runner.RunnerResult(run_secs=[float(r["seconds"])],
                                                  error_msg=None))
        if cands:
            model.update(_context(base, target), cands, results)
    out = {}
    for w, rs in held.items():
        base = mod_of(rs[0])
        mods = [mod_of(r) for r in rs]
        ok = [i for i, m in enumerate(mods) if m is not None]
        failed += len(rs) - len(ok)
        score = np.full(len(rs), 1e-9)
        if ok:
            s = model.predict(_context(base, target), [_candidate(mods[i]) for i in ok])
            score[ok] = np.maximum(np.asarray(s), 1e-9)
        out[w] = 1.0 / score
    if failed:
        print(f"tvm: {failed} kernels TVM could not parse", file=sys.stderr)
    return out
