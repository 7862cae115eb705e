"""Incremental checking of large modules: cold and after a one-function edit, in-process.

    python benchmarks/bench_incremental.py [--repeat 5] [--edits 20] [--copies 20] [--no-tvm]
                                           [--out benchmarks/results/incremental.md]

Files are one `@I.ir_module` class of 61 `@T.prim_func` methods (about 1,000 lines, the
way TVM prints a module; tirx spelling, so TVM reads the very same text) and the same
class repeated `--copies` times under new names (about 20,000 lines).  Measured, in one
process and one run:

- cold `tirkit.check` (every cache cleared), median of --repeat runs, against TVM 0.27's
  `tvm.script.from_source` of the same 1,000-line module (the anchor);
- re-check after a one-function edit (one loop extent of one method changed, caches warm
  from the previous version, as in the editor), median and p95 over --edits edits of
  different methods, each edit undone before the next;
- re-check after a line is added at the top of the file (every method moves down: none is
  lowered or checked again, their results move with them);
- re-check after a line is added inside the first method (it is lowered and checked again,
  every method below it moves down).

Targets (issue "incremental analysis by function"): cold check at least 4x faster than
TVM's parse alone; re-check after an edit at most 30 ms at 1,000 lines and 40 ms at 20,000;
cold 20,000 lines at most 22x cold 1,000 lines.
"""
from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "language"))
sys.path.insert(0, HERE)
from kernels import module  # noqa: E402


def ms(xs):
    return 1000.0 * statistics.median(xs)


def p95(xs):
    xs = sorted(xs)
    return 1000.0 * xs[min(len(xs) - 1, int(round(0.95 * (len(xs) - 1))))]


COLD = """
import gc, sys, time
import tirkit
from kernels import module
text = sys.stdin.read()
tirkit.check(module()[0], "warm.py")     # imports, grammar, lexer states, rule registry
tirkit.clear_caches()
gc.collect()
t0 = time.perf_counter()
diags = tirkit.check(text, "module.py")
took = time.perf_counter() - t0
assert not [d for d in diags if d.severity == "error"], diags[:3]
print(took)
"""


def cold(text, repeat):
    """A cold check of a file no cache has seen: each run in a fresh process, warmed on the
    1,000-line module (imports, grammar, lexer states, rules) and its caches then cleared, so
    every size is timed on the same small heap and no run inherits another's garbage."""
    import subprocess
    out = []
    for _ in range(repeat):
        r = subprocess.run([sys.executable, "-c", COLD], input=text, capture_output=True,
                           text=True, check=True,
                           env=dict(os.environ, PYTHONPATH=os.pathsep.join(
                               [os.path.join(ROOT, "language"), HERE])))
        out.append(float(r.stdout.strip().splitlines()[-1]))
    return out


def edits(text, n_edits, seed=1):
    """Time a check after changing one loop extent in one method (then undoing it)."""
    import tirkit
    tirkit.check(text, "module.py")
    starts = [i for i in range(len(text)) if text.startswith("    for ", i)]
    rng = random.Random(seed)
    out = []
    for i in rng.sample(range(len(starts)), min(n_edits, len(starts))):
        at = starts[i]
        eol = text.index("\n", at)
        line = text[at:eol]
        new_line = line.replace("range(", "range(1 + ", 1) if "range(" in line \
            else line.replace("):", ") :", 1)
        edited = text[:at] + new_line + text[eol:]
        assert edited != text
        t0 = time.perf_counter()
        tirkit.check(edited, "module.py")
        out.append(time.perf_counter() - t0)
        tirkit.check(text, "module.py")
    return out


def shift(text, repeat):
    """Time a check after a comment line is added above everything (every method moves)."""
    import tirkit
    tirkit.check(text, "module.py")
    out = []
    for r in range(repeat):
        moved = "# a line above\n" * (r + 1) + text      # a new place each time
        t0 = time.perf_counter()
        diags = tirkit.check(moved, "module.py")
        out.append(time.perf_counter() - t0)
        assert not [d for d in diags if d.severity == "error"], diags[:3]
        tirkit.check(text, "module.py")
    return out


def shift_inside(text, repeat, start=100):
    """Time a check after blank lines are added inside the first method (as when typing);
    `start` lines and more, so that no method lands where `shift` already put it."""
    import tirkit
    tirkit.check(text, "module.py")
    at = text.rindex("\n", 0, text.index(" for ")) + 1      # the first loop's line
    out = []
    for r in range(repeat):
        moved = text[:at] + "\n" * (start + r) + text[at:]
        t0 = time.perf_counter()
        diags = tirkit.check(moved, "module.py")
        out.append(time.perf_counter() - t0)
        assert not [d for d in diags if d.severity == "error"], diags[:3]
        tirkit.check(text, "module.py")
    return out


def tvm_parse(text, repeat):
    import tvm  # noqa: F401
    import tvm.script
    from corpus_extract import tvm_globals
    body = "\n".join(ln for ln in text.split("\n") if not ln.startswith("from tvm.script"))
    extra = tvm_globals({"T": "tirx", "I": "ir"})
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        tvm.script.from_source(body, extra_vars=extra)
        out.append(time.perf_counter() - t0)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--edits", type=int, default=20)
    ap.add_argument("--copies", type=int, default=20)
    ap.add_argument("--no-tvm", action="store_true")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "incremental.md"))
    args = ap.parse_args(argv)

    import tirkit
    small, _ = module()
    large, _ = module(copies=args.copies)
    n_small, n_large = small.count("\n") + 1, large.count("\n") + 1
    tirkit.check(small, "module.py")                 # imports, grammar, rule registry
    cold_small = cold(small, args.repeat)
    edit_small = edits(small, args.edits)
    shift_small = shift(small, args.repeat)
    inside_small = shift_inside(small, args.repeat)
    cold_large = cold(large, max(3, args.repeat // 2))
    edit_large = edits(large, args.edits)
    shift_large = shift(large, max(3, args.repeat))
    inside_large = shift_inside(large, max(3, args.repeat))
    tvm = None
    if not args.no_tvm:
        try:
            tvm = tvm_parse(small, args.repeat)
        except ImportError:
            tvm = None

    rows = [
        (f"cold check, {n_small} lines (61 functions)", ms(cold_small), "", ""),
        ("re-check after a one-function edit, 1,000 lines", ms(edit_small), p95(edit_small),
         "≤ 30 ms"),
        ("re-check after a line added at the top, 1,000 lines", ms(shift_small), "",
         "≤ 30 ms"),
        ("re-check after a line added inside the first function, 1,000 lines",
         ms(inside_small), "", "≤ 30 ms"),
        (f"cold check, {n_large} lines ({61 * args.copies} functions)", ms(cold_large), "", ""),
        (f"re-check after a one-function edit, {n_large} lines", ms(edit_large),
         p95(edit_large), "≤ 40 ms"),
        (f"re-check after a line added at the top, {n_large} lines", ms(shift_large), "",
         "≤ 40 ms"),
        (f"re-check after a line added inside the first function, {n_large} lines",
         ms(inside_large), "", "≤ 40 ms"),
    ]
    if tvm is not None:
        rows.append(("anchor: TVM 0.27 `tvm.script.from_source`, the 1,000-line module",
                     ms(tvm), "", ""))
    lines = [
        "# Incremental checking of large modules",
        "",
        f"Generated by `benchmarks/bench_incremental.py` on "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} ({platform.machine()}, "
        f"{os.cpu_count()} CPUs, Python {platform.python_version()}; load average "
        f"{os.getloadavg()[0]:.1f} at the end of the run). One run; each cold check in a fresh "
        f"process warmed on the 1,000-line module with its caches then cleared, re-checks in "
        f"one process; "
        f"medians of {args.repeat} cold runs (3 for the large file), of {args.edits} edits and "
        f"of {args.repeat} line insertions.",
        "",
        "| measure | median ms | p95 ms | target |",
        "| --- | ---: | ---: | --- |",
    ]
    lines += [f"| {name} | {m:.1f} | {p if p == '' else f'{p:.1f}'} | {t} |"
              for name, m, p, t in rows]
    ratio_large = ms(cold_large) / ms(cold_small)
    lines += ["", f"Cold {n_large} lines / cold {n_small} lines: **{ratio_large:.1f}x** "
              f"(target ≤ {22 * args.copies / 20:.0f}x: linear growth).", ""]
    if tvm is not None:
        lines += [f"TVM's parse / our cold check of the 1,000-line module: "
                  f"**{ms(tvm) / ms(cold_small):.1f}x** (target ≥ 4x).", ""]
    import host                                   # benchmarks/host.py: where this ran
    lines = lines[:1] + [""] + host.header({"TVM 0.27 `from_source`": "in-process, serial"}) + \
        lines[1:]
    md = "\n".join(lines)
    print(md)
    if args.out:
        os.makedirs(os.path.dirname(args.out), exist_ok=True)
        with open(args.out, "w") as f:
            f.write(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
