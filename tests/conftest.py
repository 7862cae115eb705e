import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
for p in (ROOT / "language", ROOT / "server"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

SHARED = ROOT.parent / "shared"
if not SHARED.exists():
    SHARED = Path(os.environ.get("TIRKIT_SHARED", "/work/shared"))
EXAMPLES = SHARED / "examples"


def server_env() -> dict:
    """The environment for a tirkit process started by a test: this checkout's language/ and
    server/ first on PYTHONPATH."""
    env = dict(os.environ)
    paths = [str(ROOT / "language"), str(ROOT / "server")]
    if env.get("PYTHONPATH"):
        paths.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(paths)
    return env


def pytest_collection_modifyitems(config, items):
    try:
        import tvm  # noqa: F401
        have_tvm = True
    except Exception:
        have_tvm = False
    if not have_tvm:
        skip = pytest.mark.skip(reason="apache-tvm is not installed")
        for item in items:
            if "oracle" in item.keywords:
                item.add_marker(skip)
