"""`from tirkit.script import ir as I`: `@I.ir_module` classes embedded in Python.

    @I.ir_module
    class Module:
        @T.prim_func
        def main(...): ...

`Module` is then a `tirkit.ir.stmt.IRModule`, built when the class is defined; errors raise
`tirkit.TirkitError` carrying the diagnostics.
"""
from __future__ import annotations

import sys

from ._embed import Placeholder, build


def ir_module(cls):
    """Build the decorated class (its `@T.prim_func` methods) into an IRModule."""
    frame = sys._getframe(1)
    g = frame.f_globals                  # the module defining the class
    where = (frame.f_code.co_filename, frame.f_lineno)
    del frame
    tir_mod, me = sys.modules.get("tirkit.script.tir"), sys.modules[__name__]
    imports = [f"from tirkit.script import ir as {k}" for k, v in g.items() if v is me]
    imports += [f"from tirkit.script import tir as {k}" for k, v in g.items()
                if tir_mod is not None and v is tir_mod]
    if not imports:
        imports = ["from tirkit.script import ir as I", "from tirkit.script import tir as T"]
    result, _ = build(cls, "\n".join(imports), scope=g, where=where)
    return result.module


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return Placeholder("I." + name)
