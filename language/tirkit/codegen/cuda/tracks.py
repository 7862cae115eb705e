"""The thread interpreter's race detector keeps, for each element of each buffer a kernel
accesses, its last writer and reader since the last barrier (threads.py reads them): 81
bytes an element, checked against the memory available before they are made."""
from __future__ import annotations

import numpy as np

from ..errors import ARGUMENT, fail
from ..runtime import available_memory, gib


class Track:
    """Per element of one buffer: the last writer and reader since the last barrier."""
    __slots__ = ("w_epoch", "w_tid", "w_node", "r_epoch", "r_tid", "r_node", "written",
                 "w_block", "r_block", "w_clock", "r_clock")

    BYTES = 10 * 8 + 1              # per element: the int64 records below and `written`

    @classmethod
    def of(cls, n, at):
        """The records of n elements; a `codegen/argument` error where they would not fit."""
        have = available_memory()
        if have is not None and cls.BYTES * n > have:
            fail(ARGUMENT, f"the race detector keeps {cls.BYTES} bytes for each element of a "
                 f"buffer the kernel accesses: {gib(cls.BYTES * n)} here, and {gib(have)} is "
                 "available", at)
        return cls(n)

    def __init__(self, n):
        self.w_epoch = np.full(n, -1, np.int64)
        self.w_tid = np.zeros(n, np.int64)
        self.w_node = np.zeros(n, np.int64)
        self.r_epoch = np.full(n, -1, np.int64)
        self.r_tid = np.zeros(n, np.int64)
        self.r_node = np.zeros(n, np.int64)
        self.written = np.zeros(n, bool)
        self.w_block = np.full(n, -1, np.int64)      # global memory: the block that wrote
        self.r_block = np.full(n, -1, np.int64)      # and the block that read, this kernel
        self.w_clock = np.zeros(n, np.int64)         # when (see ThreadInterpreter.clock)
        self.r_clock = np.zeros(n, np.int64)
