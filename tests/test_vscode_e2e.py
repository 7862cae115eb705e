"""The VS Code extension in a real VS Code: code-server + headless Chromium, offline.

Needs what `bash vscode-extension/scripts/e2e-setup.sh` installs (Node, Debian's Chromium,
code-server 4.100.3 under ~/.cache/tirkit-e2e, the extension's npm packages); each test skips
with the reason when a piece is missing.  The e2e run happens inside `unshare -n` with only
loopback up, which proves it needs no network.  Screenshots land in .artifacts/vscode-e2e/.
The kernels it opens are this checkout's own (tests/data/vscode_e2e), and the extension runs
in its default settings: the full rule set's diagnostics appear when a file is saved.
"""
from __future__ import annotations

import importlib.util
import os
import pkgutil
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import server_env

ROOT = Path(__file__).resolve().parent.parent
EXT = ROOT / "vscode-extension"
CS_VERSION = "4.100.3"
CS_DIR = Path(os.environ.get("TIRKIT_E2E_HOME", Path.home() / ".cache" / "tirkit-e2e")) / f"code-server-{CS_VERSION}"
CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = ROOT / ".artifacts" / "vscode-e2e"
SETUP = "bash vscode-extension/scripts/e2e-setup.sh"
DATA = ROOT / "tests" / "data" / "vscode_e2e"


def _need_node_modules():
    if shutil.which("node") is None:
        pytest.skip(f"node is not installed (run: {SETUP})")
    for pkg in ("typescript", "@vscode/vsce", "vscode-languageclient", "playwright-core"):
        if not (EXT / "node_modules" / pkg / "package.json").is_file():
            pytest.skip(f"vscode-extension/node_modules lacks {pkg} (run: {SETUP})")


def _npm(*args, timeout=120) -> subprocess.CompletedProcess:
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip(f"npm is not installed (run: {SETUP})")
    return subprocess.run([npm, "--prefix", str(EXT), *args], capture_output=True, text=True,
                          timeout=timeout, cwd=EXT)


def _codes(path: Path, fast_only: bool) -> list:
    """[(1-based line, code)] the core reports on `path`: the on-change (fast) rule set, or
    every rule (what a save adds)."""
    import tirkit
    from tirkit.verify import run_rules
    return sorted((d.span.line, d.code)
                  for d in run_rules(tirkit.parse(path.read_text(), str(path)),
                                     fast_only=fast_only))


def _has_schedule_actions() -> bool:
    """The core has schedule primitives and the server a code-action feature module."""
    sys.path[:0] = [str(ROOT / "language"), str(ROOT / "server")]
    try:
        if importlib.util.find_spec("tirkit.schedule") is None:
            return False
        feats = importlib.util.find_spec("tirkit_lsp.features")
        if feats is None or not feats.submodule_search_locations:
            return False
        return any("action" in m.name for m in pkgutil.iter_modules(feats.submodule_search_locations))
    except Exception:
        return False
    finally:
        del sys.path[:2]


def _netns_prefix() -> list:
    """`unshare -n` with loopback up, when this machine allows it (root, util-linux)."""
    if shutil.which("unshare") and shutil.which("ip"):
        probe = subprocess.run(["unshare", "-n", "ip", "link", "set", "lo", "up"],
                               capture_output=True, timeout=10)
        if probe.returncode == 0:
            return ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$@"', "sh"]
    pytest.skip("cannot create a network namespace (`unshare -n` needs root): the e2e test "
                "must prove it runs offline")


def test_extension_unit_tests():
    """The extension's configuration handling, under node's test runner."""
    _need_node_modules()
    r = _npm("test")
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert "# fail 0" in r.stdout
    passed = [ln for ln in r.stdout.splitlines() if ln.startswith("# pass ")]
    assert passed and int(passed[0].split()[-1]) >= 15, passed


@pytest.mark.slow
def test_vscode_end_to_end():
    _need_node_modules()
    if not os.access(CHROMIUM, os.X_OK):
        pytest.skip(f"Debian's chromium is not installed (run: {SETUP})")
    if not (CS_DIR / ".complete").is_file():
        pytest.skip(f"code-server {CS_VERSION} is not installed in {CS_DIR} (run: {SETUP})")
    if importlib.util.find_spec("pygls") is None:
        pytest.skip("pygls is not installed: the language server cannot run")
    netns = _netns_prefix()
    invalid, valid, on_save = (DATA / "reduction_on_parallel.py", DATA / "matmul.py",
                               DATA / "uncovered_read.py")
    # the kernels show what each step needs: a fast rule's error, and one only a save finds
    assert _codes(invalid, True) == [(9, "loop-nest/reduction-on-parallel")]
    assert _codes(on_save, True) == [] and _codes(on_save, False) == [(14, "dataflow/uncovered-read")]
    assert _codes(valid, False) == []

    # Build the .vsix from the current sources, offline (no npm ci: node_modules is there).
    vsix = ARTIFACTS / "tirkit.vsix"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    r = _npm("run", "compile")
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    r = _npm("exec", "--", "vsce", "package", "--allow-missing-repository", "--skip-license",
             "-o", str(vsix))
    assert r.returncode == 0 and vsix.is_file(), r.stdout[-2000:] + r.stderr[-2000:]

    schedule = "yes" if _has_schedule_actions() else "auto"
    cmd = [*netns, "node", str(EXT / "e2e" / "run.mjs"),
           "--code-server", str(CS_DIR), "--vsix", str(vsix), "--python", sys.executable,
           "--invalid", str(invalid), "--valid", str(valid), "--on-save", str(on_save),
           "--artifacts", str(ARTIFACTS), "--schedule-actions", schedule]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=240, env=server_env(),
                       cwd=ROOT)
    print(r.stdout)
    (ARTIFACTS / "run.log").write_text(r.stdout + r.stderr)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    out = r.stdout
    assert "FAIL" not in out
    for check in ("install .vsix", "error squiggle", "Problems entry", "on-save diagnostics",
                  "status bar", "hover on kernel name",
                  "hover on block", "schedule trace command", "format kernels",
                  "canonical form command", "project target", "target setting",
                  "missing server message"):
        assert f"PASS {check}" in out, check
    if schedule == "yes":
        assert "PASS schedule action edits the file" in out
    for shot in ("01-diagnostics.png", "02-hover.png"):
        assert (ARTIFACTS / shot).stat().st_size > 10_000, shot
