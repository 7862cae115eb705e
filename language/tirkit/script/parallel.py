"""Parse a large file's definitions on worker processes while this one lowers them.

A cold open of a large file is mostly lark's parse of each definition (the lowering and the
rules come after, in this process).  Given a process pool (the caller owns it: the language
server makes one of two processes), `Prefetch` sends the definitions that no cache holds to
the pool in batches, in file order, and `parse.py`'s lowering loop asks it for each
definition's parse: a batch's parses arrive pickled (about a tenth of the parse's cost), so
the lowering of the first batches overlaps the parsing of the later ones.  A pool that fails
(a worker killed, a pool shut down) only means the parse happens here, as without a pool.
"""
from __future__ import annotations

import copyreg
import io
import logging
import pickle

from lark import Token

from ..syntax.indenter import TOKEN_TYPES
from ..syntax.parser import ChunkParse, parse_chunk

# below this many characters of definitions not parsed yet, a file is parsed here alone
MIN_CHARS = 200_000
BATCH_CHARS = 60_000

log = logging.getLogger("tirkit")


def worker_init(owner: int) -> None:
    """A worker's initializer.  Its standard streams go to /dev/null: a worker must not hold
    its owner's (a language server's stdout is its protocol, and the client waits for the
    end of that stream after `exit`) nor write into them.  It ends when its owner (the
    process that made the pool, pid `owner`) does, however that ended: a pool's orderly
    shutdown needs the owner alive, and a worker forked by a fork server is that server's
    child, which lives as long as any worker does."""
    import os
    import threading
    import time
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)

    def watch():
        while process_alive(owner):
            time.sleep(0.25)
        os._exit(0)

    threading.Thread(target=watch, name="tirkit-owner-watch", daemon=True).start()


def process_alive(pid: int) -> bool:
    """Whether process `pid` runs (an ended process that its parent has not reaped yet, a
    zombie, does not)."""
    import os
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:            # a process of another user took the number
        return False
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:                    # no /proc: signal 0 is the best we know
        return True


def _token(type_, value, start_pos, line, column, end_line, end_column, end_pos):
    return Token(type_, value, start_pos, line, column, end_line, end_column, end_pos)


def _reduce_token(t):
    # lark's tokens pickle without their end (line, column, offset); the CST needs it
    return _token, (t.type, t.value, t.start_pos, t.line, t.column, t.end_line, t.end_column,
                    t.end_pos)


def parse_batch(texts: tuple) -> bytes:
    """In a worker: the parse of each text (never raises, as parse_chunk), pickled with
    every token's full position."""
    out = io.BytesIO()
    pickler = pickle.Pickler(out, pickle.HIGHEST_PROTOCOL)
    table = dict(copyreg.dispatch_table)
    table.update((t, _reduce_token) for t in TOKEN_TYPES)
    pickler.dispatch_table = table
    pickler.dump([parse_chunk(t) for t in texts])
    return out.getvalue()


class Prefetch:
    """The parses of `texts` (dedented definitions), computed by `pool` in batches."""

    def __init__(self, pool, texts: list):
        self._where: dict = {}                 # text -> (batch index, index in the batch)
        self._futures: list = []
        self._done: dict = {}                  # batch index -> list of ChunkParse | None
        batch, size = [], 0
        for t in texts:
            if t in self._where:
                continue
            self._where[t] = (len(self._futures), len(batch))
            batch.append(t)
            size += len(t)
            if size >= BATCH_CHARS:
                self._submit(pool, batch)
                batch, size = [], 0
        if batch:
            self._submit(pool, batch)

    def _submit(self, pool, batch) -> None:
        try:
            self._futures.append(pool.submit(parse_batch, tuple(batch)))
        except Exception as e:                 # a pool shut down or broken: parse here
            log.info("parse pool unavailable: %s", e)
            self._futures.append(None)

    def get(self, text: str) -> ChunkParse | None:
        """The parse of `text` if a worker made it (waiting for its batch), else None."""
        at = self._where.get(text)
        if at is None:
            return None
        b, i = at
        results = self._done.get(b)
        if results is None:
            fut = self._futures[b]
            try:
                results = pickle.loads(fut.result()) if fut is not None else []
            except Exception as e:             # a worker died: this batch is parsed here
                log.info("parse worker failed: %s", e)
                results = []
            self._done[b] = results
            self._futures[b] = None
        return results[i] if i < len(results) else None

    def cancel(self) -> None:
        for fut in self._futures:
            if fut is not None:
                fut.cancel()


def parse_pool(workers: int | None = None):
    """A process pool for `parse(..., pool=)`: `workers` processes (default: one per CPU, at
    most four), started on the first large parse, not before.  Workers are forked from a
    clean server process where the platform has one (a fork of a threaded process can
    inherit a lock held by another thread), else spawned."""
    import multiprocessing
    import os
    from concurrent.futures import ProcessPoolExecutor
    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    ctx = multiprocessing.get_context(method)
    if method == "forkserver":
        ctx.set_forkserver_preload([__name__])
    if workers is None:
        workers = max(1, min(4, os.cpu_count() or 1))
    return ProcessPoolExecutor(workers, mp_context=ctx, initializer=worker_init,
                               initargs=(os.getpid(),))


def wanted(texts: list) -> bool:
    """Whether `texts` (definitions no cache holds) are worth sending to a pool."""
    return sum(len(t) for t in texts) >= MIN_CHARS
