"""The tuning database: one JSON object per line, appended as results come.

    db = Database("matmul.tune.jsonl")
    db.add({"workload": key, "sketch": ..., "decisions": ..., "seconds": 0.0012, ...})
    db.records(key)              # the records of one workload, in the order they were added

A record: `workload` (structural hash of the untuned function), `func`, `sketch` (its name),
`decisions` (what the sketch replays from), `seconds` (null when the candidate failed),
`error`, `trace` (the schedule as Python lines).  A second run with `resume` starts from the
records of its workload; a line that does not parse (a run cut short mid-write) is skipped.
"""
from __future__ import annotations

import json
import os
import threading


class Database:
    def __init__(self, path: str):
        self.path = path
        self._lock = threading.Lock()

    def add(self, record: dict) -> None:
        line = json.dumps(record, sort_keys=True)
        with self._lock:
            d = os.path.dirname(os.path.abspath(self.path))
            os.makedirs(d, exist_ok=True)
            with open(self.path, "a", encoding="utf-8") as fh:
                fh.write(line + "\n")

    def records(self, workload: str | None = None) -> list:
        out = []
        try:
            with open(self.path, encoding="utf-8") as fh:
                lines = fh.readlines()
        except OSError:
            return out
        for ln in lines:
            try:
                rec = json.loads(ln)
            except ValueError:
                continue
            if isinstance(rec, dict) and (workload is None or rec.get("workload") == workload):
                out.append(rec)
        return out


__all__ = ["Database"]
