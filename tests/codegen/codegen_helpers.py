"""Shared helpers of the code generator tests."""
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"
if not SHARED.exists():
    SHARED = Path(os.environ.get("TIRKIT_SHARED", "/work/shared"))
EXAMPLES = SHARED / "examples"
