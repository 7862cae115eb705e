"""Errors of the code generator: a TirkitError carrying diagnostics that name IR nodes."""
from __future__ import annotations

from ..diagnostics import Diagnostic, Span, TirkitError

THREAD_BINDING = "codegen/thread-binding"   # a GPU thread binding reached the CPU backend
UNSUPPORTED = "codegen/unsupported"         # a construct the CPU backend does not lower
ARGUMENT = "codegen/argument"               # an argument that does not fit the kernel
OUT_OF_BOUNDS = "bounds/out-of-bounds"      # a run met an access outside a buffer
DIVISION_BY_ZERO = "arith/division-by-zero"  # a checked run met an integer division by 0
RACE = "thread/race"                        # the thread interpreter met a data race


def _span(node) -> Span:
    s = getattr(node, "span", None)
    return s if s is not None else Span(1, 1, 1, 2)


def fail(code: str, message: str, node=None, related=()):
    raise TirkitError([Diagnostic(code, "error", message, _span(node), list(related))])
