"""The dataset writer: JSON lines that survive an interrupted write and a killed collection."""
import json
import os
import signal
import subprocess
import sys
import time

from tirkit.cost import dataset

from conftest import server_env


def test_torn_last_line_is_skipped_and_healed(tmp_path):
    p = tmp_path / "d.jsonl"
    dataset.append(p, {"workload": "w", "index": 0, "seconds": 1.0})
    dataset.append(p, {"workload": "w", "index": 1, "seconds": 2.0})
    with open(p, "a") as fh:                      # a write cut short by a kill
        fh.write('{"workload": "w", "index": 2, "sec')
    assert [r["index"] for r in dataset.read(p)] == [0, 1]
    assert dataset.counts(p) == {"w": 2}
    dataset.append(p, {"workload": "w", "index": 2, "seconds": 3.0})
    lines = p.read_text().splitlines()
    assert len(lines) == 3 and all(json.loads(x) for x in lines)
    assert [r["seconds"] for r in dataset.read(p)] == [1.0, 2.0, 3.0]


def test_killed_collection_resumes_without_gaps_or_duplicates(tmp_path):
    p = tmp_path / "d.jsonl"
    env = dict(server_env(), TIRKIT_CACHE_DIR=str(tmp_path / "kernels"))
    cmd = [sys.executable, "-m", "tirkit.cli", "cost", "collect", str(p),
           "--workloads", "gemv_512", "--per-workload", "5", "--no-features"]
    proc = subprocess.Popen(cmd, env=env, stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and proc.poll() is None:
        if p.exists() and len(dataset.read(p)) >= 2:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    first = dataset.read(p)
    assert 2 <= len(first) < 5 or proc.returncode == 0
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    recs = dataset.read(p)
    assert [r["index"] for r in recs] == [0, 1, 2, 3, 4]
    assert recs[:len(first)] == first
    for r in recs:
        assert r["workload"] == "gemv_512" and r["seconds"] > 0
        assert "def gemv_512_512" in r["script"]
    assert recs[0]["trace"] == ""                 # record 0 is the unscheduled kernel
    assert any("sch." in r["trace"] for r in recs[1:])
