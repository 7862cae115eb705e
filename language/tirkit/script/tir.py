"""`from tirkit.script import tir as T`: TVMScript kernels embedded in Python.

    @T.prim_func
    def add(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        for i in range(16):
            B[i] = A[i] + T.float32(1)

`add` is then a `tirkit.ir.stmt.PrimFunc`, built when the module is imported; a kernel with
errors raises `tirkit.TirkitError`, whose `.diagnostics` say what and where.
"""
from __future__ import annotations

from ._embed import Placeholder, build, in_class_body


def prim_func(func=None, *, private=False, s_tir=False, check_well_formed=True):
    """Build the decorated function into a PrimFunc (its source is read, not run)."""
    def deco(f):
        if in_class_body(2):
            return f              # part of an @I.ir_module class: built with the class
        _, kernel = build(f, f"from tirkit.script import tir as {_alias(f)}", func=f)
        return kernel.functions[0][1]
    if func is None:
        return deco
    if in_class_body(1):
        return func
    _, kernel = build(func, f"from tirkit.script import tir as {_alias(func)}", func=func)
    return kernel.functions[0][1]


def _alias(f) -> str:
    """The name this module has where f is defined (`T` unless imported otherwise)."""
    import sys
    g = getattr(f, "__globals__", {})
    me = sys.modules[__name__]
    for k, v in g.items():
        if v is me:
            return k
    return "T"


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return Placeholder("T." + name)
