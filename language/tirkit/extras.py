"""Optional extras: whether one is installed, and what a command says when it is not.

    if (status := missing("run", "llvmlite", "run")) is not None:
        return status            # printed "tirkit run needs llvmlite: pip install 'tirkit[run]'"
"""
from __future__ import annotations

import importlib.util
import sys


def installed(module: str) -> bool:
    """Whether `module` can be imported (without importing it)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def missing(command: str, module: str, extra: str) -> int | None:
    """None when `module` is installed; else the message of `tirkit COMMAND` on standard
    error (what to install) and the exit status 2."""
    if installed(module):
        return None
    print(f"tirkit {command} needs {module}: pip install 'tirkit[{extra}]'", file=sys.stderr)
    return 2
