"""The measured dataset: one JSON object per line, appended as each kernel is timed.

    append(path, record)        # one line, flushed and synced before returning
    read(path)                  # -> list of records (a torn last line, from a kill, is skipped)
    rewrite(path, records)      # the whole file replaced at once (gzip when the name ends .gz)
    counts(path)                # -> {workload: number of records}: where a collection resumes

A record: `workload` (name in `workloads.WORKLOADS`), `index` (the schedule's number within
its workload; with the collection's seed it fixes the random schedule), `func` (kernel name),
`script` (the scheduled kernel as TVMScript), `trace` (the schedule as Python), `seconds`
(median measured run time), `machine` (the host it was measured on), and `features` (the
per-store feature rows, `features.VERSION` in `features_version`) when they were computed
at collection time; training recomputes them from `script` when the version differs.
A kernel measured again (confirm.py: each workload's fastest) has `first_seconds`, its time
at collection, and `measured_again`, the later times; `seconds` is then their median.
"""
from __future__ import annotations

import json
import os


def append(path, record: dict):
    line = json.dumps(record, separators=(",", ":"), sort_keys=True) + "\n"
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    _heal(path)
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(line)
        fh.flush()
        os.fsync(fh.fileno())


def rewrite(path, records):
    """Replace the file with `records`, through a temporary file renamed over it (a kill
    leaves the old file or the new one, never a part)."""
    tmp = f"{path}.tmp"
    data = "".join(json.dumps(r, separators=(",", ":"), sort_keys=True) + "\n"
                   for r in records).encode("utf-8")
    if str(path).endswith(".gz"):
        import gzip
        data = gzip.compress(data, mtime=0)
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def _heal(path):
    """Cut a torn last line (a write interrupted by a kill) so the next record starts clean."""
    try:
        with open(path, "rb+") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            if size == 0:
                return
            fh.seek(size - 1)
            if fh.read(1) == b"\n":
                return
            fh.seek(max(0, size - (1 << 20)))
            tail = fh.read()
            cut = tail.rfind(b"\n")
            fh.truncate(size - len(tail) + cut + 1 if cut >= 0 else max(0, size - len(tail)))
    except FileNotFoundError:
        pass


def read(path) -> list:
    out = []
    opener = _open(path)
    with opener as fh:
        for line in fh:
            line = line.strip()
            if not line:
                continue
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                continue            # a torn line from an interrupted write
    return out


def _open(path):
    if str(path).endswith(".gz"):
        import gzip
        return gzip.open(path, "rt", encoding="utf-8")
    return open(path, encoding="utf-8")


def counts(path) -> dict:
    out: dict = {}
    if not os.path.exists(path):
        return out
    for r in read(path):
        out[r["workload"]] = max(out.get(r["workload"], 0), r["index"] + 1)
    return out


def by_workload(records) -> dict:
    out: dict = {}
    for r in records:
        out.setdefault(r["workload"], []).append(r)
    return out
