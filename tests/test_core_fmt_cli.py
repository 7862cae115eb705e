"""`tirkit fmt` and `tirkit check`: comments kept, non-kernel text untouched, CLI formats."""
import json
import os
import subprocess
import sys
from pathlib import Path

import tirkit
from tirkit.cli import main as cli_main
from tirkit.script.format import format_text

ROOT = Path(__file__).resolve().parent.parent

MESSY = '''"""A module with a kernel among ordinary Python."""
import numpy as np
from tvm.script import tir as T

SCALE   =  3   # odd spacing that fmt must leave alone


def helper( x ):
    return x+1   # not a kernel


@T.prim_func
def scale(A: T.Buffer((8,), "float32"),
          B: T.Buffer((8,), "float32")):
    # scale every element
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi]*T.float32(3)   # the product


if __name__ == "__main__":
    print( helper(2) )
'''


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "language"), str(ROOT / "server"),
                                         env.get("PYTHONPATH", "")])
    return env


def _cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "tirkit.cli", *args], capture_output=True,
                          text=True, env=_env(), cwd=cwd, timeout=60)


def test_fmt_keeps_comments_and_leaves_other_text_byte_identical():
    new, skipped = format_text(MESSY, "m.py")
    assert skipped == []
    assert new != MESSY
    old_lines, new_lines = MESSY.split("\n"), new.split("\n")
    # everything before and after the kernel is untouched, byte for byte
    start = old_lines.index("@T.prim_func")
    end = old_lines.index('if __name__ == "__main__":')
    assert new_lines[:start] == old_lines[:start]
    tail = len(old_lines) - end
    assert new_lines[-tail:] == old_lines[-tail:]
    kernel = "\n".join(new_lines[start:len(new_lines) - tail])
    assert "    # scale every element\n    for i in range(8):" in kernel
    assert "B[vi] = A[vi] * T.float32(3)  # the product" in kernel
    assert 'def scale(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):' in kernel
    # formatting is idempotent and the program is the same
    assert format_text(new, "m.py")[0] == new
    assert tirkit.structural_equal(tirkit.parse(new).module, tirkit.parse(MESSY).module)


def test_fmt_leaves_a_kernel_with_errors_alone():
    bad = MESSY.replace("B[vi] = A[vi]", "B[vi] = Q[vi]")
    new, skipped = format_text(bad, "m.py")
    assert skipped == ["scale"]
    assert new == bad


def test_fmt_cli_check_and_rewrite(tmp_path):
    f = tmp_path / "k.py"
    f.write_text(MESSY)
    assert cli_main(["fmt", "--check", str(f)]) == 1
    assert f.read_text() == MESSY
    assert cli_main(["fmt", str(f)]) == 0
    formatted = f.read_text()
    assert formatted != MESSY
    assert cli_main(["fmt", "--check", str(f)]) == 0
    assert [p.name for p in tmp_path.iterdir()] == ["k.py"]      # no temporary file left


def test_check_text_format_has_location_code_and_caret(tmp_path):
    f = tmp_path / "bad.py"
    f.write_text(MESSY.replace("B[vi] = A[vi]", "B[vi] = Q[vi]"))
    r = _cli("check", str(f))
    assert r.returncode == 1
    first = r.stdout.splitlines()[0]
    line = MESSY.split("\n").index("            B[vi] = A[vi]*T.float32(3)   # the product") + 1
    col = MESSY.split("\n")[line - 1].index("A[vi]") + 1
    assert first.startswith(f"{f}:{line}:{col}: error: ")
    assert first.endswith("[name/undefined]")
    src, caret = r.stdout.splitlines()[1:3]
    assert "B[vi] = Q[vi]" in src
    assert caret.rstrip().endswith("^") and caret.index("^") == src.index("Q")
    assert "Traceback" not in r.stderr


def test_check_json_format(tmp_path):
    good = tmp_path / "good.py"
    good.write_text(MESSY)
    bad = tmp_path / "bad.py"
    bad.write_text(MESSY.replace("A[vi]*T.float32(3)", "A[vi, vi]*T.float32(3)"))
    r = _cli("check", "--format", "json", str(tmp_path))
    assert r.returncode == 1
    out = json.loads(r.stdout)
    assert {d["file"] for d in out} == {str(bad)}
    (d,) = [d for d in out if d["code"] == "type/mismatch"]
    assert set(d) >= {"file", "line", "column", "end_line", "end_column", "severity", "code",
                      "message"}
    assert d["severity"] == "error"
    assert MESSY.split("\n")[d["line"] - 1].strip().startswith("B[vi] = A[vi]")
    r = _cli("check", "--format", "json", str(good))
    assert r.returncode == 0
    assert json.loads(r.stdout) == []


def test_check_reads_non_utf8_and_missing_files_without_traceback(tmp_path):
    f = tmp_path / "latin1.py"
    f.write_bytes(MESSY.encode() + b"\n# caf\xe9\n")
    r = _cli("check", str(f), str(tmp_path / "missing.py"))
    assert r.returncode == 1
    assert "Traceback" not in r.stderr + r.stdout
    assert "[syntax]" in r.stdout
