"""Targets: the table, lookup by name, the file pragma, the CLI flag."""
import json
import subprocess
import sys
from pathlib import Path

from tirkit import target as T

ROOT = Path(__file__).resolve().parent.parent


def test_table_and_aliases():
    sm80, sm90 = T.get("cuda-sm80"), T.get("sm_90")
    assert sm80.max_threads_per_block == 1024 and sm80.max_thread_dims == (1024, 1024, 64)
    assert sm80.shared_static == 48 * 1024 and sm80.shared_optin == 163 * 1024
    assert sm90.shared_optin == 227 * 1024 and sm90.warp_size == 32
    assert sm80.max_grid_dims[0] == 2**31 - 1
    assert T.get("cpu").kind == "cpu" and T.get("CUDA") is sm80 and T.get("nope") is None


def test_pragma():
    assert T.from_pragma("x = 1\n# tirkit: target=cuda-sm90\n") == "cuda-sm90"
    assert T.from_pragma("#tirkit:target = llvm") == "llvm"
    assert T.from_pragma("s = '# tirkit target'") is None


def test_resolution_order():
    text = "# tirkit: target=cuda-sm90\n"
    assert T.resolve(None, text, True).name == "cuda-sm90"
    assert T.resolve("cuda-sm80", text, True).name == "cuda-sm80"
    assert T.resolve(None, "", True).name == T.DEFAULT_CUDA
    assert T.resolve("llvm", "", True).name == T.DEFAULT_CUDA     # threads need a GPU
    assert T.resolve(None, "", False).name == "llvm"


def test_cli_target_flag(tmp_path):
    src = (ROOT.parent / "shared" / "examples" / "invalid" / "shared_memory_limit.py")
    if not src.exists():
        src = Path("/work/shared/examples/invalid/shared_memory_limit.py")
    text = src.read_text().replace("(256, 4096)", "(256, 192)").replace(
        "T.grid(256, 4096)", "T.grid(256, 192)")
    f = tmp_path / "k.py"
    f.write_text(text)     # 192 KB of shared memory: over sm80's limits, and sm90's 48 KB
    env = {"PYTHONPATH": f"{ROOT / 'language'}:{ROOT / 'server'}"}
    for target in ("cuda-sm80", "cuda-sm90"):
        r = subprocess.run([sys.executable, "-m", "tirkit.cli", "check", "--format", "json",
                            "--target", target, str(f)], capture_output=True, text=True,
                           env=env, timeout=60)
        out = json.loads(r.stdout)
        assert [d["code"] for d in out] == ["thread/shared-memory-limit"]
        assert target in out[0]["message"] and r.returncode == 1
