"""Shared helpers of the code generator tests.  Importing it points the kernel cache at a
private temporary folder (unless TIRKIT_CACHE_DIR is already set)."""
import os
import tempfile

from conftest import EXAMPLES  # noqa: F401 - the shared examples, for the codegen tests

os.environ.setdefault("TIRKIT_CACHE_DIR", tempfile.mkdtemp(prefix="tirkit-test-kernels-"))
