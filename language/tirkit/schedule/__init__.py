"""Schedule primitives: checked IR-to-IR transformations with a replayable trace.

    sch = tirkit.Schedule(module)
    i, j, k = sch.get_loops(sch.get_block("C"))
    i0, i1 = sch.split(i, [None, 32])
    print(tirkit.to_script(sch.mod)); print(sch.trace.as_python())
"""
from .errors import ScheduleError
from .registry import PRIMITIVES, load
from .state import BlockRV, LoopRV, Schedule
from .trace import Trace

__all__ = ["Schedule", "ScheduleError", "BlockRV", "LoopRV", "Trace", "PRIMITIVES", "load"]
