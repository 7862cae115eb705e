"""Fuzz what `tirkit run` compiles: mutants of the shipped examples that `tirkit check` passes
are run, and none may crash the process, raise, or end in an internal error.

Usage:
    nice python benchmarks/fuzz_run.py [--runs 200] [--seed 11] [--memory-gb 12]
                                       [--corpus N] [--corpus-dir /work/corpus]
                                       [--out benchmarks/results/fuzz_run.md]

`fuzz_mutants.py` stops at the checker.  This one goes on: a mutant with no error
diagnostic is, by the rule `tirkit run` follows, a kernel it compiles and runs, so whatever
the checker misses (a float loop bound, a launch of no threads, a literal its dtype cannot
hold) shows here as a crash.  Mutations are those of tests/fuzz_mutators.py, 70% of them
number replacements (what turns a sound kernel into an unsound one that still parses).  Each
mutant runs in a fresh process (`tirkit run FILE`: bounds-checked native code, no
`--check`) under a virtual-memory limit and a 90 s timeout.  Counted as a failure: a signal
(segfault, abort, kill), an exit status other than 0, 1 or 2, a traceback or an `internal
error` line.
Failing mutants are written to `--save` (default /tmp/tirkit-fuzz-run).
"""
from __future__ import annotations

import argparse
import collections
import os
import platform
import random
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "language"))
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, HERE)

from fuzz_mutants import seeds  # noqa: E402
from fuzz_mutators import MUTATORS, TWO_PROGRAMS  # noqa: E402


def mutate(rng, sources):
    numbers = [m for m in MUTATORS if m.__name__ == "replace_number"]
    data = rng.choice(sources)
    for _ in range(rng.choice([1, 1, 2])):
        m = rng.choice(numbers) if rng.random() < 0.7 else rng.choice(MUTATORS)
        data = m(rng, data, rng.choice(sources) if m in TWO_PROGRAMS else b"")
    return data


def runnable(data) -> bool:
    """No error diagnostic, and at least one kernel: what `tirkit run` compiles."""
    import tirkit
    try:
        diags = tirkit.check(data, path="mutant.py")
    except Exception:  # noqa: BLE001 - fuzz_mutants.py reports those
        return False
    return not any(d.severity == "error" for d in diags) and \
        bool(tirkit.parse(data).module.prim_funcs())


def outcome(path, memory_kb, env) -> str | None:
    """None when the run ended well (rc 0, 1 or 2, no traceback), else what went wrong."""
    cmd = f"ulimit -v {memory_kb}; exec {sys.executable} -m tirkit.cli run {path}"
    try:
        p = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=90,
                           env=env)
    except subprocess.TimeoutExpired:
        return None                   # a long kernel, not a crash
    if p.returncode < 0 or p.returncode > 2:
        return f"exit status {p.returncode}"
    for line in p.stderr.splitlines():
        if "Traceback" in line or "internal error" in line:
            return line.strip()[:200]
    return None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=200, help="mutants to run")
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--memory-gb", type=float, default=12.0)
    ap.add_argument("--save", default="/tmp/tirkit-fuzz-run")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "fuzz_run.md"))
    ap.add_argument("--corpus", type=int, default=0,
                    help="also seed from this many programs of the extracted TVM corpus")
    ap.add_argument("--corpus-dir", default="/work/corpus")
    args = ap.parse_args(argv)
    sources = [d for _, d in seeds(args.corpus_dir, args.corpus, args.seed)]
    known = set(sources)
    rng = random.Random(args.seed)
    env = dict(os.environ, TIRKIT_CACHE_DIR=tempfile.mkdtemp(prefix="tirkit-fuzz-run-"),
               PYTHONPATH=os.pathsep.join([os.path.join(ROOT, "language"),
                                           os.environ.get("PYTHONPATH", "")]))
    work = tempfile.mkdtemp(prefix="tirkit-fuzz-run-")
    failures, made, ran = [], 0, 0
    status = collections.Counter()
    t0 = time.perf_counter()
    while ran < args.runs:
        made += 1
        data = mutate(rng, sources)
        if data in known or not runnable(data):
            continue
        path = os.path.join(work, f"mutant{made}.py")
        with open(path, "wb") as fh:
            fh.write(data)
        problem = outcome(path, int(args.memory_gb * 1024 * 1024), env)
        ran += 1
        status["failure" if problem else "ended well"] += 1
        if problem is not None:
            os.makedirs(args.save, exist_ok=True)
            kept = os.path.join(args.save, f"mutant{made}.py")
            os.replace(path, kept)
            failures.append((made, kept, problem))
            print(f"mutant {made}: {problem} ({kept})", file=sys.stderr, flush=True)
        else:
            os.remove(path)
    wall = time.perf_counter() - t0
    lines = [
        "# Fuzzing what `tirkit run` compiles",
        "",
        f"`python benchmarks/fuzz_run.py --runs {args.runs} --seed {args.seed}"
        f"{f' --corpus {args.corpus}' if args.corpus else ''}` on "
        f"{platform.machine()}, Python {platform.python_version()}, {os.cpu_count()} CPUs "
        f"(shared); {wall:.0f} s.",
        "",
        f"- seed programs: {len(sources)} (the shipped examples"
        f"{', and programs of the TVM corpus' if args.corpus else ''})",
        f"- mutants made: {made}; with no error diagnostic, run: {ran}",
        f"- crashes, tracebacks and internal errors: **{len(failures)}**",
        "",
    ]
    if failures:
        lines += ["| mutant | problem |", "| --- | --- |"]
        lines += [f"| {k} | {p} |" for k, _, p in failures]
    else:
        lines.append("No failure.")
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
