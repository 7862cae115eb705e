"""`tirkit tensorize` on the example, then `tirkit check` and `tirkit run --check` on the
result; `--list` names every intrinsic with its mapping or reason."""
import shutil
import subprocess
import sys

from util import EXAMPLE

EXE = [sys.executable, "-m", "tirkit.cli"]


def test_tensorize_then_check_and_run(tmp_path):
    f = tmp_path / "mm.py"
    shutil.copy(EXAMPLE / "matmul_u8s8s32.py", f)
    r = subprocess.run(EXE + ["tensorize", str(f), "--block", "C", "--list"],
                       capture_output=True, text=True)
    assert r.returncode == 0
    # an intrinsic this host lacks is listed with "(not on this target)": which ones depends
    # on the host, so the names are compared without it
    lines = {k.replace(" (not on this target)", ""): v for k, v in
             (x.split(": ", 1) for x in r.stdout.strip().split("\n"))}
    assert lines["x86.avx2.dot_8x4_u8s8s32"].startswith("`vj` by 8")
    assert lines["x86.vnni.dot_16x4_u8s8s32"].startswith("`vj` by 16")
    r = subprocess.run(EXE + ["tensorize", str(f), "--block", "C", "--write"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "estimated" in r.stderr and "sch.blockize(" in r.stderr
    r = subprocess.run(EXE + ["check", str(f)], capture_output=True, text=True)
    assert r.returncode == 0 and "0 errors, 0 other" in r.stdout + r.stderr
    r = subprocess.run(EXE + ["run", "--check", str(f)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "C: ok (mismatches 0)" in r.stdout


def test_unknown_block_and_intrinsic(tmp_path):
    f = EXAMPLE / "matmul_u8s8s32.py"
    r = subprocess.run(EXE + ["tensorize", str(f), "--block", "D"], capture_output=True,
                       text=True)
    assert r.returncode == 2 and "no block 'D'" in r.stderr
    r = subprocess.run(EXE + ["tensorize", str(f), "--block", "C", "--intrin", "nope"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "no intrinsic named 'nope'" in r.stderr
