"""Programmatic dependent launch (PTX `griddepcontrol`, sm_90 and later):
`T.ptx.griddepcontrol.wait()` waits until the grids this one depends on have completed and
their memory is visible; `T.ptx.griddepcontrol.launch_dependents()` lets the grids that
depend on this one start early.  A kernel run alone, as the thread interpreter runs it,
depends on no grid and has no dependents: both do nothing there."""
from __future__ import annotations

from ..errors import UNSUPPORTED, fail

OPS = {"ptx.griddepcontrol.wait": "griddepcontrol.wait",
       "ptx.griddepcontrol.launch_dependents": "griddepcontrol.launch_dependents"}


def check(call):
    if call.args:
        fail(UNSUPPORTED, f"T.{call.op} takes no arguments", call)


def call_c(call) -> str:
    check(call)
    return f'asm volatile("{OPS[call.op]};\\n" ::: "memory")'
