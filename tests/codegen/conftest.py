import pytest


@pytest.fixture(autouse=True)
def _private_kernel_cache(tmp_path_factory, monkeypatch):
    """Compiled kernels go to a cache private to the test session."""
    monkeypatch.setenv("TIRKIT_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "kernels"))


import sys  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
