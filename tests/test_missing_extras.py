"""Without an optional extra, the command that needs it says what to install and exits 2,
with no traceback. The extra is made unimportable for a child Python by a `sitecustomize` on
PYTHONPATH that makes importing it fail as a missing module does."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import tirkit

KERNEL = '''\
from tvm.script import tir as T


@T.prim_func
def add_one(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi] + T.float32(1)
'''


def _run(tmp_path, hidden, *args):
    shim = tmp_path / "shim"
    shim.mkdir(exist_ok=True)
    (shim / "sitecustomize.py").write_text(textwrap.dedent(f'''\
        import sys

        HIDDEN = {tuple(hidden)!r}


        class Hide:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in HIDDEN:
                    raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
                return None


        sys.meta_path.insert(0, Hide())
        '''))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(shim)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env,
                          timeout=120, stdin=subprocess.DEVNULL)


def test_the_shim_really_hides_the_module(tmp_path):
    r = _run(tmp_path, ["llvmlite"], "-c", "import llvmlite")
    assert r.returncode == 1 and "ModuleNotFoundError: No module named 'llvmlite'" in r.stderr


def test_run_and_bench_without_llvmlite(tmp_path):
    src = tmp_path / "k.py"
    src.write_text(KERNEL)
    for cmd in ("run", "bench"):
        r = _run(tmp_path, ["llvmlite"], "-m", "tirkit.cli", cmd, str(src))
        assert r.returncode == 2, (cmd, r.returncode, r.stderr)
        assert "pip install 'tirkit[run]'" in r.stderr
        assert "Traceback" not in r.stderr + r.stdout
    r = _run(tmp_path, ["llvmlite"], "-m", "tirkit.cli", "check", str(src))
    assert r.returncode == 0, r.stderr           # checking needs no extra


def test_server_without_pygls(tmp_path):
    for args in (["-m", "tirkit_lsp"], ["-m", "tirkit.cli", "lsp"]):
        r = _run(tmp_path, ["pygls"], *args)
        assert r.returncode == 2, (args, r.returncode, r.stderr)
        assert "pip install 'tirkit[lsp]'" in r.stderr
        assert "Traceback" not in r.stderr + r.stdout


def test_version():
    r = subprocess.run([sys.executable, "-m", "tirkit.cli", "--version"], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == f"tirkit {tirkit.__version__}"
