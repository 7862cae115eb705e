"""The layering is a checked contract: `lint-imports` (import-linter, configured in
pyproject.toml) must keep every contract."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _lint_imports():
    exe = shutil.which("lint-imports", path=os.path.dirname(sys.executable)) or \
        shutil.which("lint-imports")
    assert exe, "lint-imports is not installed: pip install -e '.[test]' (import-linter)"
    return subprocess.run([exe, "--no-cache"], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)


def test_import_contracts_are_kept():
    r = _lint_imports()
    assert r.returncode == 0, (
        "an import breaks the layering in pyproject.toml [tool.importlinter] (a lower layer "
        "importing a higher one, the core importing the server, or a private module or name "
        "used from another package):\n" + r.stdout[-4000:] + r.stderr[-2000:])
    assert "0 broken" in r.stdout, r.stdout[-2000:]


def test_every_schedule_primitive_is_in_the_independence_contract():
    from importlinter.api import read_configuration

    from tirkit.schedule.registry import MODULES
    contracts = read_configuration(str(ROOT / "pyproject.toml"))["contracts_options"]
    listed = next(c["modules"] for c in contracts if c["id"] == "schedule-primitives")
    assert sorted(listed) == sorted(f"tirkit.schedule.{m}" for m in MODULES)
