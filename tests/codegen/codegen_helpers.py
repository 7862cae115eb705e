"""Shared helpers of the code generator tests.  Importing it points the kernel cache at a
private temporary folder (unless TIRKIT_CACHE_DIR is already set)."""
import os
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"
if not SHARED.exists():
    SHARED = Path(os.environ.get("TIRKIT_SHARED", "/work/shared"))
EXAMPLES = SHARED / "examples"

os.environ.setdefault("TIRKIT_CACHE_DIR", tempfile.mkdtemp(prefix="tirkit-test-kernels-"))
