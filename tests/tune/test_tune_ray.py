"""The search on a local Ray cluster started here (two CPUs): the same candidates as the
in-process runner, results of the same kind; a worker killed mid-measurement loses that
candidate only and the search finishes."""
from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from tirkit.tune import tune
from tirkit.tune.models import RooflineModel
from tirkit.tune.runners import InProcessRunner

from tune_util import parsed, run_matmul

ray = pytest.importorskip("ray")
pytest.importorskip("llvmlite")

KW = dict(population=8, generations=1, model=RooflineModel(), min_seconds=0.01, repeat=3,
          seed=5)


@pytest.fixture(scope="module")
def cluster():
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()


def _measuring_workers():
    """PIDs of Ray workers running `measure` now (Ray names a busy worker by its task)."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/cmdline", "rb") as fh:
                cmd = fh.read()
        except OSError:
            continue
        if cmd.startswith(b"ray::measure"):
            out.append(int(d))
    return out


def test_ray_runner_matches_the_local_runner(cluster):
    from tirkit.tune.ray_runner import RayRunner
    r = parsed()
    local = tune(r.module, "mm", trials=4, batch=4, runner=InProcessRunner(), **KW)
    remote = tune(r.module, "mm", trials=4, batch=4, runner=RayRunner(None), **KW)
    assert [rec.candidate.key for rec in sorted(local.records, key=lambda x: x.candidate.key)] \
        == [rec.candidate.key for rec in sorted(remote.records, key=lambda x: x.candidate.key)]
    for res in (local, remote):
        assert res.stats.measured == 4 and res.stats.failed == 0
        assert all(isinstance(rec.seconds, float) and rec.seconds > 0 for rec in res.records)
        assert run_matmul(res.module) < 1e-5


def test_a_killed_worker_loses_one_candidate(cluster):
    from tirkit.tune.ray_runner import RayRunner
    r = parsed()
    killed = []
    stop = threading.Event()

    def killer():
        while not stop.is_set() and not killed:
            pids = _measuring_workers()
            if pids:
                os.kill(pids[0], signal.SIGKILL)
                killed.append(pids[0])
            time.sleep(0.005)
    th = threading.Thread(target=killer)
    th.start()
    try:
        res = tune(r.module, "mm", trials=6, batch=6, runner=RayRunner(None),
                   **{**KW, "min_seconds": 0.3})
    finally:
        stop.set()
        th.join()
    assert len(killed) == 1
    lost = [rec for rec in res.records if rec.seconds is None]
    assert len(lost) == 1 and lost[0].error.startswith("worker lost")
    assert res.stats.failed == 1 and res.stats.measured == 5 and len(res.records) == 6
    assert res.best is not None and run_matmul(res.module) < 1e-5
