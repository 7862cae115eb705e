"""`tirkit tune` end to end: progress, the tuned script beside the original (it checks clean
and runs correctly), the trace, the database and --resume."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import ROOT, server_env
from tune_util import MATMUL

pytest.importorskip("llvmlite")


def tirkit(*args, cwd):
    return subprocess.run([sys.executable, "-m", "tirkit.cli", *args], cwd=cwd, env=server_env(),
                          capture_output=True, text=True, timeout=300)


def test_tune_writes_the_tuned_script_and_trace(tmp_path):
    src = tmp_path / "mm.py"
    src.write_text(MATMUL)
    p = tirkit("tune", "mm.py", "--kernel", "mm", "--trials", "4", "--log", "tune.log",
               cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "4/4 trials, best " in p.stderr and "GFLOP/s" in p.stderr
    assert "4 measured, 0 failed" in p.stdout
    assert src.read_text() == MATMUL                        # the original is left alone
    tuned = tmp_path / "mm.tuned.py"
    check = tirkit("check", "--format", "json", "mm.tuned.py", cwd=tmp_path)
    assert check.returncode == 0 and json.loads(check.stdout) == []
    run = tirkit("run", "mm.tuned.py", "--check", cwd=tmp_path)
    assert run.returncode == 0 and "C: ok" in run.stdout, run.stdout + run.stderr
    assert tuned.read_text() != MATMUL
    trace = (tmp_path / "mm.mm.trace.py").read_text()
    assert trace.startswith('b0 = sch.get_block(name="C")') and "sch.split(" in trace
    db = (tmp_path / "mm.tune.jsonl").read_text().splitlines()
    assert len(db) == 4
    again = tirkit("tune", "mm.py", "--trials", "2", "--resume", "--write", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert len((tmp_path / "mm.tune.jsonl").read_text().splitlines()) == 6
    assert src.read_text() != MATMUL and "T.Buffer((64, 32)" in src.read_text()


def test_tune_refuses_what_it_cannot_tune(tmp_path):
    (tmp_path / "e.py").write_text(MATMUL.replace("def mm", "def mm2") + "\n" + MATMUL)
    p = tirkit("tune", "e.py", "--trials", "2", cwd=tmp_path)
    assert p.returncode == 1 and "2 kernels; choose one with --kernel (mm2, mm)" in p.stderr
    p = tirkit("tune", "e.py", "--kernel", "nope", cwd=tmp_path)
    assert p.returncode == 1 and "no kernel named nope" in p.stderr
    assert "Traceback" not in p.stderr


def test_tune_a_sound_kernel_of_a_file_with_errors(tmp_path):
    """The kernel named is tuned and written back; the kernel holding an error is left as
    it is (its error not reported: only the kernel named is checked), and is not tuned when
    named."""
    broken = (ROOT / "tests" / "data" / "partial" / "undefined_beside_sound.py").read_text()
    broken = broken[broken.index("@T.prim_func"):broken.index("@T.prim_func\ndef sound")]
    text = MATMUL + "\n\n" + broken.rstrip() + "\n"
    (tmp_path / "e.py").write_text(text)
    p = tirkit("tune", "e.py", "--kernel", "undefined", cwd=tmp_path)
    assert p.returncode == 1 and "e.py: 'undefined' has errors: not tuned" in p.stderr
    p = tirkit("tune", "e.py", "--trials", "2", cwd=tmp_path)    # no kernel named: refused
    assert p.returncode == 1 and "not tuned" in p.stderr and "trials" not in p.stderr
    p = tirkit("tune", "e.py", "--kernel", "mm", "--trials", "2", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "name 'Q' is not defined" not in p.stderr      # the other kernel's: not checked
    tuned = (tmp_path / "e.tuned.py").read_text()
    assert tuned.endswith(broken.rstrip() + "\n")
    assert tuned.split("@T.prim_func\ndef undefined")[0] != MATMUL + "\n\n"
    assert "Traceback" not in p.stderr


def test_tune_for_a_cuda_target_needs_a_gpu_here(tmp_path):
    from tirkit.codegen.cuda.runtime import available
    if available() is None:
        pytest.skip("a GPU can run kernels here: the CUDA search would run")
    (tmp_path / "mm.py").write_text(MATMUL)
    p = tirkit("tune", "mm.py", "--target", "cuda", "--trials", "2", cwd=tmp_path)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1
    assert "--target cuda-sm80 measures candidates on a CUDA GPU" in p.stderr
    assert not (tmp_path / "mm.tune.jsonl").exists()
    p = tirkit("tune", "mm.py", "--target", "cuda-sm99", cwd=tmp_path)
    assert p.returncode == 2 and "unknown target 'cuda-sm99'" in p.stderr
