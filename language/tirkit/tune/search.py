"""Evolutionary search: sketches sampled into a population, mutated, ranked by the cost
model, validated, the best measured, the model updated online.

    result = tune(module, "matmul", trials=64)
    result.best_seconds, result.best.schedule.mod, result.trace()
    result.stats            # generated, refused, invalid, measured, failed

One round (as the TensorIR paper and MetaSchedule describe it):
1. population: the best measured candidates so far (elites) and fresh random samples of
   every sketch;
2. `generations` times: parents drawn by predicted rank, each child a mutation of its
   parent's decisions; the population keeps the best predicted;
3. a batch is picked eps-greedily: mostly the best predicted not yet measured, `eps` of it
   at random;
4. each pick is validated (every verification rule) before anything else: an invalid one
   is counted and logged and never built or measured;
5. the builder compiles each pick here and hands it to the runner, which measures it
   (checked against the untuned kernel on random inputs) while the next one builds;
   results go to the database and update the model.
A candidate a primitive refuses (ScheduleError while the sketch applies) is counted as
refused; candidates are told apart by (sketch, decisions), and none is measured twice in
the search.

At the end the `confirm` fastest candidates are measured `CONFIRM_ROUNDS` times more, in
turns, and the best is the one with the lowest median of its measurements.  The best of many
noisy measurements is mostly a lucky one (on a shared machine one measurement of a 1024³
GEMM kernel is 10% off its median): a search's best measured 21.3 ms in the search and a
median of 24.8 ms in four more measurements.  Records and the database keep the search's
own measurements.
"""
from __future__ import annotations

import dataclasses
import json
import time

import numpy as np

from ..diagnostics import TirkitError
from ..ir.hash import structural_hash
from ..schedule import ScheduleError
from .measure import MeasureTask, build_candidate
from .space import design_space
from .validate import validate


CONFIRM_ROUNDS = 2


class TuneError(Exception):
    pass


@dataclasses.dataclass(eq=False)
class Candidate:
    sketch: object
    decisions: dict
    schedule: object = None          # the Schedule, once the sketch applied

    @property
    def key(self) -> str:
        return json.dumps([self.sketch.name, self.decisions], sort_keys=True)

    @property
    def func(self):
        return self.schedule.func()


@dataclasses.dataclass
class Stats:
    generated: int = 0       # distinct candidates the sketches produced
    refused: int = 0         # a schedule primitive refused them (its own checks)
    invalid: int = 0         # validation found an error: never built or measured
    measured: int = 0        # built and measured with a correct result
    failed: int = 0          # build error, wrong result, or a lost worker
    confirmed: int = 0       # the fastest ones measured again at the end

    def line(self) -> str:
        return (f"{self.generated} candidates generated, {self.refused} refused by a "
                f"schedule primitive, {self.invalid} invalid (filtered by validation, never "
                f"measured), {self.measured} measured, {self.failed} failed"
                + (f", the fastest {self.confirmed} measured again" if self.confirmed else ""))


@dataclasses.dataclass
class Record:
    candidate: Candidate
    seconds: float | None
    error: str | None = None


@dataclasses.dataclass
class TuneResult:
    func_name: str
    workload: str
    flops: int | None
    best: Candidate | None
    best_seconds: float | None
    records: list
    stats: Stats
    invalid_keys: set
    cancelled: bool = False
    wall_seconds: float = 0.0

    def trace(self) -> str:
        return self.best.schedule.trace.as_python() if self.best else ""

    @property
    def module(self):
        return self.best.schedule.mod if self.best else None


def _flops(func, module):
    from ..analysis.cost import kernel_costs
    return kernel_costs(func, module).total.flops.value


class _Search:
    def __init__(self, module, func_name, *, model, runner, database, seed, population,
                 generations, batch, eps, extra_sketches, threads, log, progress, cancelled,
                 repeat, min_seconds, target=None, confirm=0):
        self.module, self.func_name, self.target = module, func_name, target
        self.func = module[func_name]
        self.sketches = design_space(module, func_name, target) + list(extra_sketches)
        if not self.sketches:
            raise TuneError(f"no sketch applies to '{func_name}' (the tuner tiles reduction "
                            "blocks whose loops bind their iterators one to one)")
        self.by_name = {s.name: s for s in self.sketches}
        self.model, self.runner, self.db = model, runner, database
        self.rng = np.random.default_rng(seed)
        self.population, self.generations, self.batch, self.eps = \
            population, generations, batch, eps
        self.threads, self.repeat, self.min_seconds = threads, repeat, min_seconds
        self.log = log or (lambda line: None)
        self.progress = progress or (lambda *a: None)
        self.cancelled = cancelled or (lambda: False)
        self.workload = structural_hash(self.func, module.constants)
        self.seen: dict = {}            # key -> Candidate (applied) or None (refused)
        self.measured: dict = {}        # key -> seconds (None: failed)
        self.invalid: set = set()
        self.records: list = []
        self.stats = Stats()
        self.best, self.best_seconds = None, None
        self.confirm_count = confirm
        self.kept: dict = {}            # key -> Built of the fastest measured (for `confirm`)

    # ---- candidates ---------------------------------------------------------------------------
    def realize(self, sketch, decisions):
        """The applied candidate, or None when a primitive refuses it (counted once)."""
        c = Candidate(sketch, decisions)
        k = c.key
        if k in self.seen:
            return self.seen[k]
        try:
            c.schedule = sketch.apply(self.module, decisions)
        except (ScheduleError, TirkitError) as e:
            self.stats.generated += 1
            self.stats.refused += 1
            self.seen[k] = None
            self.log(f"refused: {sketch.name} {json.dumps(decisions)}: {e}")
            return None
        self.stats.generated += 1
        self.seen[k] = c
        return c

    def sample(self):
        sk = self.sketches[int(self.rng.integers(0, len(self.sketches)))]
        return self.realize(sk, sk.sample(self.rng))

    def predict(self, cands) -> np.ndarray:
        if not cands:
            return np.zeros(0)
        try:
            return np.asarray(self.model.predict([c.func for c in cands]), dtype=np.float64)
        except Exception as e:              # a model that fails ranks nothing
            self.log(f"cost model failed: {type(e).__name__}: {e}")
            return np.zeros(len(cands))

    def evolve(self) -> list:
        elites = sorted((k for k, s in self.measured.items() if s is not None),
                        key=self.measured.get)[: self.population // 4]
        pop = [self.seen[k] for k in elites if self.seen.get(k) is not None]
        keys = {c.key for c in pop}
        tries = 0
        while len(pop) < self.population and tries < self.population * 4:
            tries += 1
            c = self.sample()
            if c is not None and c.key not in keys:
                pop.append(c)
                keys.add(c.key)
        for _ in range(self.generations):
            if self.cancelled() or not pop:
                break
            scores = self.predict(pop)
            order = np.argsort(scores, kind="stable")
            weights = np.linspace(2.0, 1.0, len(pop))
            weights /= weights.sum()
            children = []
            for _ in range(len(pop)):
                parent = pop[int(order[self.rng.choice(len(pop), p=weights)])]
                d = parent.sketch.mutate(parent.decisions, self.rng)
                c = self.realize(parent.sketch, d)
                if c is not None and c.key not in keys:
                    children.append(c)
                    keys.add(c.key)
            both = pop + children
            s2 = self.predict(both)
            keep = np.argsort(s2, kind="stable")[: self.population]
            pop = [both[i] for i in keep]
            keys = {c.key for c in pop}
        return pop

    def pick(self, pop) -> list:
        fresh = [c for c in pop if c.key not in self.measured and c.key not in self.invalid]
        if not fresh:
            return []
        scores = self.predict(fresh)
        ranked = [fresh[i] for i in np.argsort(scores, kind="stable")]
        out = []
        while ranked and len(out) < self.batch:
            if self.rng.random() < self.eps:
                c = ranked.pop(int(self.rng.integers(0, len(ranked))))
            else:
                c = ranked.pop(0)
            out.append(c)
        return out

    def is_valid(self, c) -> bool:
        errs = validate(c.schedule.mod, self.target)
        if errs:
            self.stats.invalid += 1
            self.invalid.add(c.key)
            e = errs[0]
            line = e.span.line if e.span is not None else "?"
            self.log(f"invalid (not measured): {c.sketch.name} {json.dumps(c.decisions)}: "
                     f"{e.code} at line {line}")
            return False
        return True

    # ---- measurement --------------------------------------------------------------------------
    def measure(self, cands, reference, budget):
        built_for = {}

        def tasks():
            """Validated and built one by one as the runner takes them: a runner that
            measures elsewhere measures one candidate while the next one builds."""
            n = 0
            for c in cands:
                if n >= budget or self.cancelled():
                    return
                if not self.is_valid(c):
                    continue
                try:
                    b = build_candidate(c.func, c.schedule.mod, self.target)
                except Exception as e:
                    self.finish(c, None, f"build failed: {type(e).__name__}: {e}")
                    n += 1
                    continue
                built_for[n] = (c, b)
                yield MeasureTask(self.workload, reference, b, 0, self.threads, self.repeat,
                                  self.min_seconds, n)
                n += 1
        funcs, secs = [], []
        for r in self.runner.run(tasks()):
            c, b = built_for[r.index]
            self.finish(c, r.seconds, r.error)
            if r.seconds is not None:
                funcs.append(c.func)
                secs.append(r.seconds)
                self.keep(c.key, b)
        if funcs:
            try:
                self.model.update(funcs, np.asarray(secs))
            except Exception as e:
                self.log(f"cost model update failed: {type(e).__name__}: {e}")

    def finish(self, c, seconds, error):
        self.measured[c.key] = seconds
        self.records.append(Record(c, seconds, error))
        if seconds is None:
            self.stats.failed += 1
            self.log(f"failed: {c.sketch.name} {json.dumps(c.decisions)}: {error}")
        else:
            self.stats.measured += 1
            if self.best_seconds is None or seconds < self.best_seconds:
                self.best, self.best_seconds = c, seconds
        if self.db is not None:
            self.db.add({"workload": self.workload, "func": self.func_name,
                         "sketch": c.sketch.name, "decisions": c.decisions,
                         "seconds": seconds, "error": error,
                         "trace": c.schedule.trace.as_python()})

    def keep(self, key, built):
        """Hold the object code of the `confirm_count` fastest measured candidates, so that
        `confirm` measures them again without compiling them again."""
        if self.confirm_count < 2:
            return
        self.kept[key] = built
        if len(self.kept) > self.confirm_count:
            slowest = max(self.kept, key=lambda k: self.measured[k])
            del self.kept[slowest]

    def confirm(self, reference):
        """Measure the `confirm_count` fastest candidates CONFIRM_ROUNDS more times, in
        turns; the best is the one with the lowest median of all its measurements."""
        top = sorted((key for key, sec in self.measured.items() if sec is not None),
                     key=self.measured.get)[:self.confirm_count]
        cands = [self.seen[key] for key in top if self.seen.get(key) is not None]
        if len(cands) < 2:
            return
        built = {}
        for i, c in enumerate(cands):
            built[i] = self.kept.get(c.key)
            if built[i] is None:                # measured in an earlier run (`--resume`)
                try:
                    built[i] = build_candidate(c.func, c.schedule.mod, self.target)
                except Exception:               # it built then; not now: left as it was
                    del built[i]
        times = {i: [self.measured[cands[i].key]] for i in built}
        tasks = [MeasureTask(self.workload, reference, built[i], 0, self.threads, self.repeat,
                             self.min_seconds, i)
                 for _ in range(CONFIRM_ROUNDS) for i in built]
        for r in self.runner.run(iter(tasks)):
            if r.seconds is not None:
                times[r.index].append(r.seconds)
            if self.cancelled():
                break
        medians = {i: float(np.median(t)) for i, t in times.items()}
        best = min(medians, key=medians.get)
        self.stats.confirmed = len(built)
        for i in sorted(times):
            runs = ", ".join(f"{x * 1e3:.3g}" for x in times[i])
            self.log(f"measured again: {cands[i].sketch.name} {json.dumps(cands[i].decisions)}:"
                     f" median {medians[i] * 1e3:.3g} ms of {runs} ms")
        self.best, self.best_seconds = cands[best], medians[best]

    def resume(self):
        """Take the database's records of this workload: measured, ranked, the model fed."""
        funcs, secs = [], []
        for rec in self.db.records(self.workload):
            sk = self.by_name.get(rec.get("sketch"))
            if sk is None or not isinstance(rec.get("decisions"), dict):
                continue
            c = self.realize(sk, rec["decisions"])
            if c is None:
                continue
            s = rec.get("seconds")
            self.measured[c.key] = s
            if s is not None:
                funcs.append(c.func)
                secs.append(s)
                if self.best_seconds is None or s < self.best_seconds:
                    self.best, self.best_seconds = c, s
        if funcs:
            try:
                self.model.update(funcs, np.asarray(secs))
            except Exception as e:
                self.log(f"cost model update failed: {type(e).__name__}: {e}")
        self.log(f"resumed from {len(self.measured)} records of this workload")
        return len(self.measured)


def tune(module, func_name: str, trials: int = 64, *, model=None, runner=None, database=None,
         resume: bool = False, seed: int = 0, population: int = 32, generations: int = 3,
         batch: int = 8, eps: float = 0.2, extra_sketches=(), threads: int = 1, log=None,
         progress=None, cancelled=None, repeat: int = 5,
         min_seconds: float = 0.05, target=None, confirm: int = 4) -> TuneResult:
    """Search `trials` measured candidates for `module[func_name]`.  `progress(done, trials,
    best_seconds, gflops)` is called after each measured batch; `cancelled()` is asked
    between candidates, and a cancelled search returns what it has.  `target`: None (this
    CPU) or a CUDA target of `tirkit.target` (the GPU sketches, validated for that target
    and measured on this machine's GPU against the untuned kernel run on the CPU).
    `confirm`: how many of the fastest are measured again at the end (0: none)."""
    from .models import default_model
    from .runners import InProcessRunner
    t0 = time.perf_counter()
    s = _Search(module, func_name, model=model or default_model(),
                runner=runner or InProcessRunner(), database=database, seed=seed,
                population=population, generations=generations, batch=batch, eps=eps,
                extra_sketches=extra_sketches, threads=threads, log=log, progress=progress,
                cancelled=cancelled, repeat=repeat, min_seconds=min_seconds, target=target,
                confirm=confirm)
    flops = _flops(s.func, module)
    reference = build_candidate(s.func, module)
    if resume and database is not None:
        s.resume()
    start = len(s.records)
    stalled = 0
    while len(s.records) - start < trials and not s.cancelled():
        pop = s.evolve()
        picks = s.pick(pop)
        if not picks:
            stalled += 1
            if stalled >= 3:
                s.log("the space is exhausted: no new candidate in three rounds")
                break
            continue
        stalled = 0
        s.measure(picks, reference, trials - (len(s.records) - start))
        gf = flops / s.best_seconds / 1e9 if flops and s.best_seconds else None
        s.progress(len(s.records) - start, trials, s.best_seconds, gf)
    if confirm > 1 and not s.cancelled():
        s.confirm(reference)
    return TuneResult(func_name, s.workload, flops, s.best, s.best_seconds,
                      s.records, s.stats, s.invalid, bool(s.cancelled()),
                      time.perf_counter() - t0)


__all__ = ["tune", "TuneResult", "TuneError", "Candidate", "Stats", "Record"]
