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
        pool = self._executor()
        futures = {pool.submit(measure, t): t for t in tasks}
        broken = False
        for fut in as_completed(futures):
            t = futures[fut]
            try:
                yield fut.result()
            except Exception as e:          # the worker died (BrokenProcessPool) or similar
                broken = True
                yield MeasureResult(t.index, None, f"worker lost: {type(e).__name__}: {e}")
        if broken:
            self.close()

    def close(self):
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


__all__ = ["InProcessRunner", "LocalRunner"]
