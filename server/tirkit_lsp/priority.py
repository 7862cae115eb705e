"""Interactive requests first: the rules step aside between functions while one is answered.

The rules of a large file run for seconds on a worker thread, and Python threads take turns
at the interpreter lock: a hover arriving meanwhile waits for its share of each turn at
every step, several times its own cost.  Requests the user waits for (`INTERACTIVE`) mark
themselves in flight; the rules call `pause()` between functions and, while a request is
in flight, wait there, so the request runs alone.  A wait lasts at most `SLICE_S`, and the
rules then run at least as long before they wait again: a request that itself waits for the
rules (code actions reading diagnostics) is slowed, never starved.
"""
from __future__ import annotations

import threading
import time

from lsprotocol import types as T

INTERACTIVE = frozenset({
    T.TEXT_DOCUMENT_HOVER, T.TEXT_DOCUMENT_COMPLETION, T.TEXT_DOCUMENT_SIGNATURE_HELP,
    T.TEXT_DOCUMENT_DEFINITION, T.TEXT_DOCUMENT_DOCUMENT_HIGHLIGHT, T.TEXT_DOCUMENT_REFERENCES,
    T.TEXT_DOCUMENT_CODE_ACTION, T.TEXT_DOCUMENT_INLAY_HINT, T.TEXT_DOCUMENT_DOCUMENT_SYMBOL,
    T.TEXT_DOCUMENT_PREPARE_CALL_HIERARCHY, T.CALL_HIERARCHY_INCOMING_CALLS,
    T.CALL_HIERARCHY_OUTGOING_CALLS,
})
SLICE_S = 0.02


class RequestsFirst:
    """Requests in flight, and the rules' pause point."""

    def __init__(self, slice_s: float = SLICE_S):
        self.slice_s = slice_s
        self._cond = threading.Condition()
        self._in_flight = 0
        self._resume_until = 0.0      # the rules run, without waiting, until then

    def begin(self) -> None:
        with self._cond:
            self._in_flight += 1

    def end(self) -> None:
        with self._cond:
            self._in_flight -= 1
            if self._in_flight == 0:
                self._cond.notify_all()

    def pause(self) -> None:
        """Called by the rules between functions: wait while a request is in flight (at most
        one slice, then run at least one slice before the next wait)."""
        if not self._in_flight:               # the common case, without the lock
            return
        with self._cond:
            now = time.monotonic()
            if now < self._resume_until:
                return
            self._cond.wait_for(lambda: self._in_flight == 0, timeout=self.slice_s)
            waited = time.monotonic() - now
            self._resume_until = now + waited + max(waited, 0.001)
