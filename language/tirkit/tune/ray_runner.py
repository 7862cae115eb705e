"""The Ray runner (`pip install 'tirkit[ray]'`): candidates measured as Ray tasks.

    RayRunner("auto")        # join the running cluster (`ray start --head` beforehand)
    RayRunner("10.0.0.5:6379")
    RayRunner(None)          # the cluster this process already joined, else a local one

Each task carries the builder's object code (no compiler runs on the workers); results are
gathered with `ray.wait` as they finish.  Tasks are not retried: a worker that dies loses its
candidate only (its result says so) and the search goes on.
"""
from __future__ import annotations

from .measure import MeasureResult, measure


class RayRunner:
    name = "ray"

    def __init__(self, address: str | None = "auto"):
        import ray
        if not ray.is_initialized():
            if address in (None, "local"):
                ray.init(include_dashboard=False, log_to_driver=False)
            else:
                ray.init(address=address, log_to_driver=False)
        self._ray = ray
        self._remote = ray.remote(num_cpus=1, max_retries=0)(measure)

    def run(self, tasks):
        ray = self._ray
        pending = {self._remote.remote(t): t for t in tasks}
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                t = pending.pop(ref)
                try:
                    yield ray.get(ref)
                except Exception as e:          # the worker died: this candidate only
                    yield MeasureResult(t.index, None,
                                        f"worker lost: {type(e).__name__}")

    def close(self):
        pass


__all__ = ["RayRunner"]
