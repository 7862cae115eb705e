"""The search on a small matmul: candidates validated before they are measured (a planted
invalid sketch never is), the tuned kernel correct, the trace replays, the database resumes."""
from __future__ import annotations

import numpy as np
import pytest

import tirkit
from tirkit.schedule import Schedule
from tirkit.tune import tune
from tirkit.tune.database import Database
from tirkit.tune.edit import tuned_text
from tirkit.tune.models import RooflineModel
from tirkit.tune.space import design_space
from tirkit.tune.tiles import mutate_tiles, sample_tiles
from tirkit.tune.validate import validate

from tune_util import ParallelReductionSketch, parsed, run_matmul

pytest.importorskip("llvmlite")


def test_perfect_tiles_sampled_and_mutated():
    rng = np.random.default_rng(0)
    seen = set()
    for _ in range(200):
        t = sample_tiles(1024, 4, 64, rng)
        assert int(np.prod(t)) == 1024 and t[-1] <= 64
        m = mutate_tiles(t, 64, rng)
        assert int(np.prod(m)) == 1024 and m[-1] <= 64
        seen.add(tuple(t))
    assert len(seen) > 50


def test_vectorized_tile_is_a_whole_number_of_vector_registers_where_it_can_be():
    rng = np.random.default_rng(0)
    inner = set()
    for _ in range(200):
        t = sample_tiles(1024, 4, 64, rng, multiple=16)
        assert int(np.prod(t)) == 1024 and t[-1] % 16 == 0 and t[-1] <= 64
        for _ in range(20):
            t = mutate_tiles(t, 64, rng, multiple=16)
            assert int(np.prod(t)) == 1024 and t[-1] % 16 == 0 and t[-1] <= 64
        inner.add(t[-1])
    assert inner == {16, 32, 64}
    # an extent the lanes do not divide is tiled as before
    assert {sample_tiles(56, 4, 64, rng, multiple=16)[-1] for _ in range(200)} > {1, 2, 7}
    # the sketches take the lanes of the CPU for the block's dtype (float32: 16 with AVX-512)
    from tirkit.codegen.llvm.peak import enabled_features
    (sk, *_) = design_space(parsed().module, "mm")
    f = enabled_features()
    assert sk.lanes == (16 if "avx512f" in f else 8 if "avx" in f else 4)
    assert all(sk.sample(rng)["tiles"][sk.vectorized][-1] % sk.lanes == 0 for _ in range(50))


def test_design_space_of_conv_inlines_pad_and_fuses_relu():
    from conftest import EXAMPLES
    r = parsed((EXAMPLES / "valid" / "conv2d_nhwc_relu.py").read_text())
    sketches = design_space(r.module, "conv2d_nhwc_relu")
    assert [(s.block, s.write, s.inline) for s in sketches] == [
        ("conv", "cache", ("pad",)), ("conv", "consumer", ("pad",))]
    rng = np.random.default_rng(3)
    for s in sketches:
        sch = s.apply(r.module, s.sample(rng))
        assert validate(sch.mod) == []
        assert "pad" not in tirkit.to_script(sch.mod).split("def ")[1].split("T.block(")[1]


def test_unrolling_keeps_the_register_tile_before_the_inner_reduction_tile():
    r = parsed()
    (sk,) = [s for s in design_space(r.module, "mm") if s.write == "cache"]
    # i: S3 = 8 rows; j: 48 vectorized; k: R1 = 32. Budget 64: the 8 rows, not the 32 k steps
    d = {"tiles": [[2, 2, 2, 8], [1, 1, 1, 48], [1, 32]], "wb": 1, "par": 0, "unroll": 1}
    sch = sk.apply(r.module, d)
    kinds = {(f.extent.value, f.kind) for f in _loops(sch.mod["mm"].body)}
    assert (8, "unrolled") in kinds and (48, "vectorized") in kinds
    assert (32, "serial") in kinds and (32, "unrolled") not in kinds
    assert run_matmul(sch.mod) < 1e-5
    # a short R1 still fits beside the register tile
    d["tiles"] = [[2, 2, 2, 8], [1, 1, 1, 48], [8, 4]]
    kinds = {(f.extent.value, f.kind) for f in _loops(sk.apply(r.module, d).mod["mm"].body)}
    assert (8, "unrolled") in kinds and (4, "unrolled") in kinds


def test_unroll_budget_is_a_decision():
    r = parsed()
    (sk,) = [s for s in design_space(r.module, "mm") if s.write == "cache"]
    # S3 i = 4 and R1 k = 4 fill a budget of 16; S2 stays rolled
    d = {"tiles": [[4, 2, 2, 4], [1, 1, 2, 48], [8, 4]], "wb": 0, "par": 0, "unroll": 16}
    kinds = _kinds(sk.apply(r.module, d))
    assert kinds == {"i_2": "serial", "j_2": "serial", "k_1": "unrolled",
                     "i_3": "unrolled", "j_3": "vectorized"}
    assert run_matmul(sk.apply(r.module, d).mod) < 1e-5
    # R1 = 8 would take it to 32: left rolled under 16, unrolled under 64
    d["tiles"][2] = [4, 8]
    assert _kinds(sk.apply(r.module, d))["k_1"] == "serial"
    d["unroll"] = 64
    assert _kinds(sk.apply(r.module, d))["k_1"] == "unrolled"
    # budget 0 unrolls nothing; a mutation of the budget picks one of MetaSchedule's steps
    d["unroll"] = 0
    assert not [f for f in _loops(sk.apply(r.module, d).mod["mm"].body) if f.kind == "unrolled"]
    rng = np.random.default_rng(0)
    seen = set()
    for _ in range(200):
        m = sk.mutate(d, rng)
        seen.add(m["unroll"])
    assert seen == {0, 16, 64}


def _kinds(sch):
    return {f.loop_var.name: f.kind for f in _loops(sch.mod["mm"].body)
            if f.loop_var.name in ("i_2", "j_2", "k_1", "i_3", "j_3")}


def _loops(stmt):
    from tirkit.ir import stmt as S
    from tirkit.ir.visit import walk
    out = []
    walk(stmt, lambda x: out.append(x) if isinstance(x, S.For) else None or True)
    return out


def test_search_measures_only_valid_candidates_and_the_result_runs():
    r = parsed()
    lines = []
    planted = ParallelReductionSketch(design_space(r.module, "mm")[0])
    res = tune(r.module, "mm", trials=8, batch=4, population=8, generations=1, seed=0,
               model=RooflineModel(), extra_sketches=[planted], log=lines.append,
               min_seconds=0.01, repeat=3)
    st = res.stats
    assert st.measured == 8 and st.failed == 0
    # the planted sketch was generated, picked, and filtered by validation
    assert st.invalid >= 1
    invalid_lines = [ln for ln in lines if ln.startswith("invalid (not measured): planted")]
    assert len(invalid_lines) == st.invalid
    assert all("loop-nest/reduction-on-parallel" in ln for ln in invalid_lines)
    measured = [rec.candidate for rec in res.records]
    assert all(c.sketch is not planted for c in measured)
    assert not ({c.key for c in measured} & res.invalid_keys)
    assert all(rec.seconds > 0 for rec in res.records)
    # the four fastest were measured twice more; the best has the lowest median of three
    assert st.confirmed == 4
    again = [ln for ln in lines if ln.startswith("measured again: ")]
    assert len(again) == 4
    medians = [float(ln.split(" median ")[1].split(" ms")[0]) for ln in again]
    assert all(len(ln.split(" of ")[1].split(", ")) == 3 for ln in again)
    fastest4 = sorted(rec.seconds for rec in res.records)[:4]
    assert res.best.key in {rec.candidate.key for rec in res.records
                            if rec.seconds in fastest4}
    assert res.best_seconds * 1e3 == pytest.approx(min(medians), rel=1e-2)
    assert "the fastest 4 measured again" in st.line()
    # the best schedule: valid, correct on random inputs, and its trace replays
    assert validate(res.module) == []
    assert run_matmul(res.module) < 1e-5
    replay = res.best.schedule.trace.apply(Schedule(r.module, "mm"))
    assert tirkit.structural_equal(replay.mod["mm"], res.module["mm"])
    # the tuned file checks clean
    text = tuned_text(r, "mm", res.module)
    assert [d.code for d in tirkit.check(text) if d.severity == "error"] == []
    assert "T.parallel" in text or "T.vectorized" in text


def test_cancel_returns_what_was_measured():
    r = parsed()
    calls = []

    def progress(done, total, best, gflops):
        calls.append(done)
    res = tune(r.module, "mm", trials=20, batch=2, population=6, generations=1,
               model=RooflineModel(), progress=progress, cancelled=lambda: len(calls) >= 1,
               min_seconds=0.01, repeat=3)
    assert res.cancelled and calls == [2] and len(res.records) == 2


def test_database_resume_starts_from_the_first_run(tmp_path):
    r = parsed()
    db = Database(str(tmp_path / "mm.tune.jsonl"))
    # confirm=0: each best is the fastest recorded time, none measured again at the end
    kw = dict(batch=4, population=8, generations=1, model=RooflineModel(), min_seconds=0.01,
              repeat=3, confirm=0)
    first = tune(r.module, "mm", trials=4, database=db, seed=0, **kw)
    recs = db.records(first.workload)
    assert len(recs) == 4 and all(rec["seconds"] > 0 for rec in recs)
    assert all(rec["trace"].startswith("b0 = sch.get_block") for rec in recs)
    second = tune(r.module, "mm", trials=4, database=db, seed=0, resume=True, **kw)
    assert len(second.records) == 4                 # four new ones, none measured twice
    assert not ({c.candidate.key for c in first.records} &
                {c.candidate.key for c in second.records})
    assert second.best_seconds == min(rec["seconds"] for rec in db.records(first.workload))
    assert second.best_seconds <= first.best_seconds
    assert len(db.records(first.workload)) == 8
    assert db.records("another workload") == []


def test_learned_model_ranks_and_is_updated_online():
    pytest.importorskip("xgboost")
    from tirkit.tune.models import LearnedModel, default_model
    r = parsed()
    model = default_model()
    assert isinstance(model, LearnedModel)
    samples0 = model.model.samples
    res = tune(r.module, "mm", trials=8, batch=4, population=8, generations=1, model=model,
               min_seconds=0.01, repeat=3)
    assert res.stats.measured == 8 and model.model.booster is not None
    assert model.model.samples >= samples0 + 8 or model.model.samples == 8
    funcs = [rec.candidate.func for rec in res.records]
    pred = model.predict(funcs)
    assert pred.shape == (8,) and np.all(np.isfinite(pred)) and np.all(pred > 0)
    secs = np.array([rec.seconds for rec in res.records])
    # fitted on log2 seconds of these runs: its predictions are of their magnitude
    assert secs.min() / 4 < np.median(pred) < secs.max() * 4


def test_local_runner_loses_only_the_candidate_whose_worker_died():
    import os
    import signal
    import threading
    import time
    from tirkit.tune.runners import LocalRunner

    def workers():
        """The pool's measuring processes (children of this one spawned by multiprocessing,
        not its resource tracker)."""
        me = str(os.getpid())
        out = []
        for d in os.listdir("/proc"):
            if d.isdigit():
                try:
                    with open(f"/proc/{d}/stat") as fh:
                        ppid = fh.read().rsplit(")", 1)[1].split()[1]
                    with open(f"/proc/{d}/cmdline", "rb") as fh:
                        cmd = fh.read()
                except (OSError, IndexError):
                    continue
                if ppid == me and b"spawn_main" in cmd:
                    out.append(int(d))
        return out

    def cpu(pid):
        with open(f"/proc/{pid}/stat") as fh:
            return int(fh.read().rsplit(")", 1)[1].split()[11])

    r = parsed()
    runner = LocalRunner(1)
    killed = []
    progress_seen = []

    def killer():                 # after the first batch, kill the worker while it measures
        while not killed:
            if progress_seen:
                for pid in workers():
                    try:
                        a = cpu(pid)
                        time.sleep(0.2)
                        if cpu(pid) - a >= 3:       # busy (an idle worker uses none)
                            os.kill(pid, signal.SIGKILL)
                            killed.append(pid)
                    except OSError:
                        pass
            time.sleep(0.01)
    th = threading.Thread(target=killer, daemon=True)
    th.start()
    res = tune(r.module, "mm", trials=4, batch=2, population=4, generations=1,
               model=RooflineModel(), runner=runner, min_seconds=0.5, repeat=3,
               progress=lambda *a: progress_seen.append(a))
    runner.close()
    assert killed
    lost = [rec for rec in res.records if rec.seconds is None]
    assert len(lost) == 1 and lost[0].error.startswith("worker lost")
    assert res.stats.measured == 3 and len(res.records) == 4


def test_pack_decision_lays_the_vectorized_operand_out_in_vector_tiles():
    r = parsed()
    (sk,) = [s for s in design_space(r.module, "mm") if s.write == "cache"]
    # B[k, j] is read along j, the vectorized loop: the one operand to pack (A is read along k)
    assert [(p.buffer, p.read) for p in sk.packs] == [("B", 1)]
    d = {"tiles": [[2, 2, 2, 8], [1, 1, 3, 16], [8, 4]], "wb": 0, "par": 1, "unroll": 16,
         "pack": 1}
    sch = sk.apply(r.module, d)
    assert validate(sch.mod) == []
    text = tirkit.to_script(sch.mod)
    assert 'B_reindex = T.alloc_buffer((3, 32, 16), "float32")' in text
    assert "B_reindex[vj // 16, vk, vj % 16]" in text
    # the copy walks B along its rows, 16 lanes at a time, its outer loop parallel
    trace = sch.trace.as_python()
    assert "sch.reorder(l3, l2)" in trace and "factors=[3, 16]" in trace
    assert run_matmul(sch.mod) < 1e-5
    # unpacked, the same tiles read B itself; mutations switch the decision both ways
    d0 = dict(d, pack=0)
    assert "B_reindex" not in tirkit.to_script(sk.apply(r.module, d0).mod)
    rng = np.random.default_rng(5)
    assert {sk.mutate(d, rng)["pack"] for _ in range(300)} == {0, 1}
    assert {sk.sample(rng)["pack"] for _ in range(50)} == {0, 1}
    # a decision written before packing existed reads as unpacked
    old = {k: v for k, v in d.items() if k != "pack"}
    assert "B_reindex" not in tirkit.to_script(sk.apply(r.module, old).mod)


def test_a_block_without_declared_regions_gets_the_same_sketches():
    # T.reads / T.writes left out, as TVMScript allows: the regions are inferred
    from tune_util import MATMUL
    bare = MATMUL.replace("            T.reads(A[vi, vk], B[vk, vj])\n", "") \
        .replace("            T.writes(C[vi, vj])\n", "")
    assert "T.reads" not in bare and "T.writes" not in bare
    declared = design_space(parsed().module, "mm")
    inferred = design_space(parsed(bare).module, "mm")
    assert [(s.name, s.lanes, s.packs) for s in inferred] == \
        [(s.name, s.lanes, s.packs) for s in declared]
    assert [p.buffer for p in inferred[0].packs] == ["B"]
    r = parsed(bare)
    d = dict(inferred[0].sample(np.random.default_rng(2)), pack=1)
    assert run_matmul(inferred[0].apply(r.module, d).mod) < 1e-5
