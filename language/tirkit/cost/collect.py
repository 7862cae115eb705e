"""`tirkit cost collect`: random valid schedules of the workload set, compiled and timed.

    collect("data.jsonl", names(), per_workload=300)

For each workload the unscheduled kernel is built first: its outputs are the reference every
scheduled variant must reproduce (on the same seeded, non-zero inputs), and its time is
record 0. Then random schedules (sampler.py), kept when the validator reports no error and
the outputs match, are timed and appended one line each. A killed collection resumes where
its dataset ends: schedule `index` of a workload always comes from the same random stream.
"""
from __future__ import annotations

import sys
import time

import numpy as np

from . import dataset
from .measure import RUNTIME, Measurer, host
from .workloads import script


def _rng(seed, workload, index):
    import zlib
    return np.random.default_rng([seed, zlib.crc32(workload.encode()), index])


class Progress:
    """A one-line progress bar on stderr (silent when `out` is None)."""

    def __init__(self, total, out=sys.stderr):
        self.total, self.done, self.out, self.t0 = total, 0, out, time.monotonic()

    def step(self, label, n=1):
        self.done += n
        if self.out is None:
            return
        frac = self.done / max(1, self.total)
        bar = "#" * int(30 * frac)
        el = time.monotonic() - self.t0
        self.out.write(f"\r[{bar:<30}] {self.done}/{self.total} {el:6.0f} s  {label:<24}")
        self.out.flush()

    def close(self):
        if self.out is not None:
            self.out.write("\n")


def collect(path, workloads, per_workload=300, seed=0, features=True, progress=True,
            measurer=None, max_attempts=8):
    import tirkit
    from .sampler import random_schedule
    m = measurer or Measurer()
    machine = host()
    have = dataset.counts(path)
    todo = sum(max(0, per_workload - have.get(w, 0)) for w in workloads)
    bar = Progress(todo, sys.stderr if progress else None)
    for w in workloads:
        start = have.get(w, 0)
        if start >= per_workload:
            continue
        text = script(w)
        module = tirkit.parse(text).module
        name, func = module.prim_funcs()[0]
        _, reference = m.run(func, module)
        for index in range(start, per_workload):
            rec = None
            for attempt in range(max_attempts):
                rng = _rng(seed, w, index * max_attempts + attempt)
                rec = _one(w, index, func, module, rng, m, reference, machine, features)
                if rec is not None:
                    break
            if rec is not None:
                dataset.append(path, rec)
            bar.step(w)
    bar.close()


def _one(w, index, func, module, rng, m, reference, machine, features):
    import tirkit
    from ..diagnostics import TirkitError
    from ..schedule import Schedule
    from .sampler import random_schedule
    sch = Schedule(module, func.name) if index == 0 else random_schedule(func, module, rng)
    text = tirkit.to_script(sch.mod)
    if any(d.severity == "error" for d in tirkit.check(text)):
        return None
    new = sch.mod[func.name]
    try:
        sec = m.seconds(new, sch.mod, reference)
    except TirkitError:
        return None
    if sec is None:
        return None
    rec = {"workload": w, "index": index, "func": func.name, "script": text,
           "trace": sch.trace.as_python(), "seconds": sec, "machine": machine,
           "runtime": RUNTIME}
    if features:
        from .features import VERSION, extract
        rec["features"] = np.round(extract(new), 5).tolist()
        rec["features_version"] = VERSION
    return rec
