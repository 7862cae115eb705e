"""Shutdown and exit: the process ends within a second of `exit`, whatever analysis runs.

Analyses run on worker threads, and Python waits for those at interpreter exit: after
`exit` in the middle of checking a large file the process lingered for the rest of the
check (many seconds).  On `exit` the process ends at once (every message was flushed as
it was sent); when the client closes the connection instead, queued analyses are dropped
and a daemon watchdog ends the process after `GRACE_S` if a running one still holds it.
Logs are flushed; the exit code is 0 after a `shutdown` request and 1 without, as the
protocol asks.
"""
from __future__ import annotations

import logging
import os
import sys
import threading

from lsprotocol import types as T

GRACE_S = 0.5


def stop_work(server) -> None:
    """Cancel the analyses not yet started; those running finish or die with the process."""
    for pool in (server.executor, server.rules_executor, server.parse_pool):
        try:
            pool.shutdown(wait=False, cancel_futures=True)
        except Exception as e:
            logging.getLogger("tirkit_lsp").info("stopping the analysis pool: %s", e)


def leave(code: int) -> None:
    """End the process now, logs flushed."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
        logging.shutdown()
    finally:
        os._exit(code)


def leave_soon(code: int, grace: float = GRACE_S) -> None:
    """End the process with `code` after `grace` seconds unless it has ended by then."""
    timer = threading.Timer(grace, leave, args=(code,))
    timer.daemon = True
    timer.start()


def exit_code(server) -> int:
    return 0 if server.shutdown_requested else 1


def setup(server) -> None:
    def on_shutdown(params):
        server.shutdown_requested = True

    def on_exit(params):
        # every message was written and flushed when it was sent: nothing is left to do
        leave(exit_code(server))

    server.feature(T.SHUTDOWN)(on_shutdown)
    server.feature(T.EXIT)(on_exit)
