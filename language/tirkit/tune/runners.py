"""Runners: where candidates are measured.  Each takes an iterable of MeasureTask (built
lazily by the search: a runner submits each task as it comes, so the next candidate builds
while this one is measured) and yields a MeasureResult for every task, in the order they
finish.

    LocalRunner(workers=1)       # a process pool on this machine (spawned processes)
    InProcessRunner()            # in this process (the language server, small searches)
    RayRunner("auto")            # a Ray cluster (tirkit[ray]); see ray_runner.py

A runner loses a task, never the search: a process that dies mid-measurement gives that
task a failed result, and the pool is started again for the next batch.
"""
from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor, as_completed

from .measure import MeasureResult, measure


class InProcessRunner:
    name = "in-process"

    def run(self, tasks):
        for t in tasks:
            yield measure(t)

    def close(self):
        pass


class LocalRunner:
    name = "local"

    def __init__(self, workers: int = 1):
        self.workers = max(1, int(workers))
        self._pool = None

    def _executor(self):
        if self._pool is None:
            self._pool = ProcessPoolExecutor(self.workers,
                                             mp_context=multiprocessing.get_context("spawn"))
        return self._pool

    def run(self, tasks):
        pending = list(tasks)
        while pending:
            pool = self._executor()
            futures = {pool.submit(measure, t): t for t in pending}
            done = set()
            broken = False
            for fut in as_completed(futures):
                t = futures[fut]
                try:
                    r = fut.result()
                except Exception:           # a worker died: the pool is broken
                    broken = True
                    continue
                done.add(id(t))
                yield r
            pending = [t for t in futures.values() if id(t) not in done]
            if not broken:
                return
            # the oldest unfinished task was running when its worker died: it is lost; the
            # others go to a new pool
            self.close()
            lost, pending = pending[0], pending[1:]
            yield MeasureResult(lost.index, None, "worker lost: the measuring process died")

    def close(self):
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


__all__ = ["InProcessRunner", "LocalRunner"]
