"""Fuzz the checker: many mutants of real kernels, none may end in an `internal` diagnostic,
an exception or a slow check.

Usage:
    nice python benchmarks/fuzz_mutants.py [--n 20000] [--seed 21] [--corpus 300]
                                           [--out benchmarks/results/fuzz.md]

Seed programs: `../shared/examples/{valid,invalid}/*.py`, `examples/*.py` and, when the
extracted TVM corpus is there (`/work/corpus`, or `--corpus-dir`), a seeded sample of
`--corpus` of its programs.  Mutation kinds (tests/fuzz_mutators.py): truncation, line and
token deletions, token swaps and duplicates, random and non-UTF-8 bytes, line-end noise,
token splices (within a program and from another one), line swaps, crossovers of two
programs, numbers replaced, indentation noise; 1-3 of them per mutant.

Each mutant goes through `tirkit.check` (parse, lower, every rule).  Counted: `internal`
diagnostics, exceptions, diagnostics without a valid range, and the time per mutant, as CPU
time of the thread that checks it so that a busy machine does not stretch it (target: none
over 2 s, the best of three runs where the first is slower; a check is stopped after 60 s
of the process's CPU).  The thread's clock, not the process's: while the CPU timer that
stops a check is armed, some hosts count the process's CPU time in ticks of 4 ms, so that
about half the mutants read 0.  Failing mutants are written to `--save` (default
/tmp/tirkit-fuzz) so each can be replayed with `tirkit check FILE`.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import platform
import random
import signal
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "language"))
sys.path.insert(0, os.path.join(ROOT, "tests"))

from fuzz_mutators import MUTATORS, TWO_PROGRAMS  # noqa: E402

SLOW_S = 2.0
STOP_S = 60


class _Stop(Exception):
    pass


def _alarm(signum, frame):
    raise _Stop()


def seeds(corpus_dir, n_corpus, seed):
    shared = os.path.join(os.path.dirname(ROOT), "shared", "examples")
    if not os.path.isdir(shared):
        shared = "/work/shared/examples"
    paths = []
    for d in (os.path.join(shared, "valid"), os.path.join(shared, "invalid"),
              os.path.join(ROOT, "examples")):
        if os.path.isdir(d):
            paths += sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".py"))
    corpus = []
    if corpus_dir and os.path.isdir(corpus_dir) and n_corpus:
        for sub in ("classic", "tirx"):
            d = os.path.join(corpus_dir, sub)
            if os.path.isdir(d):
                corpus += sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".py"))
        corpus = random.Random(seed).sample(corpus, min(n_corpus, len(corpus)))
    out = []
    for p in paths + corpus:
        with open(p, "rb") as f:
            data = f.read()
        if data.strip() and len(data) < 40_000:
            out.append((p, data))
    return out


def _valid_span(d, n_lines):
    s = d.span
    return (s is not None and 1 <= s.line <= s.end_line <= n_lines + 1 and s.column >= 1
            and (s.end_line > s.line or s.end_column >= s.column))


def run(n, seed, programs, save):
    import tirkit
    from tirkit.diagnostics import Diagnostic
    rng = random.Random(seed)
    sources = [d for _, d in programs]
    times = []
    failures = []
    codes = collections.Counter()
    kind_counts = collections.Counter()
    signal.signal(signal.SIGPROF, _alarm)
    t_start = time.perf_counter()
    for k in range(n):
        data = rng.choice(sources)
        applied = []
        for _ in range(rng.choice([1, 1, 1, 2, 3])):
            if data.strip():
                m = rng.choice(MUTATORS)
                other = rng.choice(sources) if m in TWO_PROGRAMS else b""
                data = m(rng, data, other)
                applied.append(m.__name__)
        kind_counts.update(applied)
        tirkit.clear_caches()
        t0 = time.thread_time()
        problem = None
        signal.setitimer(signal.ITIMER_PROF, STOP_S)
        try:
            diags = tirkit.check(data, path=f"mutant{k}.py")
        except _Stop:
            problem, diags = f"stopped after {STOP_S} s", []
        except Exception as e:  # noqa: BLE001 - the point of the benchmark
            problem, diags = f"exception {type(e).__name__}: {e}", []
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
        dt = time.thread_time() - t0
        times.append(dt)
        n_lines = data.count(b"\n") + 1
        for d in diags:
            codes[d.code.split("/")[0]] += 1
            if problem is None and (not isinstance(d, Diagnostic) or d.code == "internal"):
                problem = f"internal: {d.message}"
            elif problem is None and not _valid_span(d, n_lines):
                problem = f"invalid range {d.span} for {d.code}"
        if problem is None and dt > SLOW_S:
            # the best of three decides
            for _ in range(2):
                tirkit.clear_caches()
                t0 = time.thread_time()
                tirkit.check(data, path=f"mutant{k}.py")
                dt = min(dt, time.thread_time() - t0)
            times[-1] = dt
            if dt > SLOW_S:
                problem = f"slow: {dt:.2f} s (best of 3)"
        if problem is not None:
            os.makedirs(save, exist_ok=True)
            p = os.path.join(save, f"mutant{k}.py")
            with open(p, "wb") as f:
                f.write(data)
            failures.append((k, p, " + ".join(applied), problem))
            print(f"mutant {k}: {problem} ({p})", file=sys.stderr, flush=True)
        if (k + 1) % 1000 == 0:
            print(f"{k + 1} mutants, {len(failures)} failures, "
                  f"{time.perf_counter() - t_start:.0f} s", file=sys.stderr, flush=True)
    return times, failures, codes, kind_counts, time.perf_counter() - t_start


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=21)
    ap.add_argument("--corpus", type=int, default=300, help="corpus programs among the seeds")
    ap.add_argument("--corpus-dir", default="/work/corpus")
    ap.add_argument("--save", default="/tmp/tirkit-fuzz")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "fuzz.md"))
    args = ap.parse_args(argv)
    programs = seeds(args.corpus_dir, args.corpus, args.seed)
    times, failures, codes, kinds, wall = run(args.n, args.seed, programs, args.save)
    by_kind = collections.Counter(p.split(":")[0].split(" ")[0] for _, _, _, p in failures)
    corpus_dir = os.path.join(args.corpus_dir, "")
    examples = sum(1 for path, _ in programs if not path.startswith(corpus_dir))
    where = "" if args.corpus_dir == ap.get_default("corpus_dir") else \
        f" --corpus-dir {args.corpus_dir}"
    lines = [
        "# Fuzzing the checker",
        "",
        f"`python benchmarks/fuzz_mutants.py --n {args.n} --seed {args.seed} "
        f"--corpus {args.corpus}{where}` on {platform.machine()}, Python "
        f"{platform.python_version()}, {os.cpu_count()} CPUs (shared); {wall:.0f} s.",
        "",
        f"- seed programs: {len(programs)} ({examples} examples, the rest from the TVM "
        f"corpus)",
        f"- mutants: {len(times)}, 1-3 mutations each; mutations applied per kind: "
        + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())),
        f"- `internal` diagnostics: **{by_kind.get('internal', 0)}**; exceptions: "
        f"**{by_kind.get('exception', 0)}**; invalid ranges: {by_kind.get('invalid', 0)}; "
        f"stopped: {by_kind.get('stopped', 0)}",
        f"- CPU time per mutant: median {statistics.median(times) * 1000:.1f} ms, "
        f"max {max(times):.2f} s; over {SLOW_S:.0f} s: **{by_kind.get('slow', 0)}**",
        "- diagnostics by family: " + ", ".join(f"`{k}` {v}" for k, v in codes.most_common()),
        "",
    ]
    if failures:
        lines += ["| mutant | mutations | problem |", "| --- | --- | --- |"]
        lines += [f"| {k} | {m} | {p[:160]} |" for k, _, m, p in failures]
    else:
        lines.append("No failure.")
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(json.dumps({"failures": len(failures)}), file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
