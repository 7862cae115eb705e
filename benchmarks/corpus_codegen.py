"""Code generator over the TVM test-suite corpus (see CORPUS.md): how many real kernels
compile, and whether the compiled code agrees with the reference interpreter.

For every kernel that parses without errors: lower, emit LLVM IR and compile it; kernels
with static shapes of at most 2^20 elements in all are then run on random inputs, the
reference interpreter first (it stops on out-of-bounds accesses, so invalid programs never
run compiled), and the two results compared.  Writes benchmarks/results/codegen_corpus.md.

    python benchmarks/corpus_codegen.py --corpus /work/corpus/classic
    python benchmarks/corpus_codegen.py --checked    # the bounds-checked code `tirkit run`
                                                     # runs: codegen_corpus_checked.md
"""
from __future__ import annotations

import argparse
import collections
import glob
import os
import signal
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "language"))

import numpy as np  # noqa: E402

import host  # noqa: E402  (benchmarks/host.py: where this ran)
import tirkit  # noqa: E402
from tirkit.codegen import build  # noqa: E402
from tirkit.codegen.cli import compare, make_inputs  # noqa: E402
from tirkit.codegen.interp import run_reference  # noqa: E402
from tirkit.diagnostics import TirkitError  # noqa: E402
from tirkit.ir import expr as E  # noqa: E402


class _Timeout(Exception):
    pass


def _alarm(*_):
    raise _Timeout()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default="/work/corpus/classic")
    ap.add_argument("--timeout", type=int, default=20,
                    help="seconds of interpreter per kernel, in this process's CPU time (a busy "
                    "machine does not change which kernels pass it)")
    ap.add_argument("--checked", action="store_true",
                    help="compile bounds-checked code (codegen/llvm/checks.py), as tirkit run does")
    args = ap.parse_args(argv)
    signal.signal(signal.SIGVTALRM, _alarm)
    files = sorted(glob.glob(os.path.join(args.corpus, "*.py")))
    stats = collections.Counter()
    codes = collections.Counter()
    mismatches = []
    too_slow = []
    t0 = time.time()
    for path in files:
        try:
            result = tirkit.parse(open(path).read(), path)
        except Exception:
            stats["parser crash"] += 1
            continue
        if any(d.severity == "error" for d in result.diagnostics):
            stats["script errors (not compiled)"] += 1
            continue
        for name, func in result.module.prim_funcs():
            stats["kernels"] += 1
            try:
                kernel = build(func, result.module, checked=args.checked)
            except TirkitError as e:
                codes[e.diagnostics[0].code] += 1
                continue
            except Exception as e:
                stats["compiler crash"] += 1
                print("CRASH", path, name, type(e).__name__, e)
                continue
            stats["compiled"] += 1
            bufs = [func.buffer_of(p) for p in func.params if func.buffer_of(p) is not None]
            if any(not isinstance(s, E.IntImm) for b in bufs for s in b.shape) or \
                    sum(int(np.prod([s.value for s in b.shape])) for b in bufs) > 1 << 20:
                continue
            try:
                arrays = make_inputs(func, np.random.default_rng(0))
                ref = [a.copy() for a in arrays]
                signal.setitimer(signal.ITIMER_VIRTUAL, args.timeout)
                try:
                    run_reference(func, ref, module=result.module)
                finally:
                    signal.setitimer(signal.ITIMER_VIRTUAL, 0)
                kernel(*arrays)
            except _Timeout:
                stats["interpreter too slow"] += 1
                too_slow.append(f"{os.path.basename(path)}:{name}")
                continue
            except TirkitError as e:
                codes["run: " + e.diagnostics[0].code] += 1
                continue
            except Exception as e:          # a bug of ours: counted and named, never fatal
                stats["run crash"] += 1
                print("RUN CRASH", path, name, type(e).__name__, e)
                continue
            ok = all(compare(o, r, b.dtype)[0] for b, o, r in zip(kernel.buffers, arrays, ref))
            stats["ran, same results" if ok else "ran, different results"] += 1
            if not ok:
                mismatches.append(f"{os.path.basename(path)}:{name}")
    write(args.corpus, len(files), stats, codes, mismatches, too_slow, time.time() - t0,
          args.timeout, args.checked)
    return 0


# Programs whose compiled result differs from the interpreter's, and why that is the program's
# doing: each was read by hand.  A difference not listed here is reported as "not reviewed".
UNDEFINED = {
    "matmul_bias_multiple_epilogue_expected": "an epilogue reads `temp`, whose producer was "
    "fused away: memory nothing wrote",
    "elementwise_subblock_uncovered": "the consumer reads rows of `B` no producer writes",
    "rowsum_not_serial": "a reduction over a `T.parallel` loop: a race on the accumulator",
    "matmul_not_stage_pipeline": "block 'D' reads rows 128-255 of `C` before anything writes "
    "them: memory nothing wrote",
    "compact_buffer_region__before__19": "`Y` has 56 channels but `c` runs to 63: the writes "
    "run into the next row, which the interpreter's whole-loop evaluation and the compiled "
    "loop order differently",
    "simplify__before__10": "`T.shift_left(16, -i)`: a shift by a negative amount is undefined "
    "(LLVM poison)",
}


def _why_different(m):
    for key, why in UNDEFINED.items():
        if key in m:
            return why
    return "**not reviewed**"


def write(corpus, nfiles, stats, codes, mismatches, too_slow, seconds, timeout, checked):
    what = ", bounds-checked code" if checked else ""
    out = [f"# Code generator over the TVM test-suite corpus{what}", "",
           *host.header({"the reference interpreter": "tirkit's own, in-process, one thread"}),
           f"{nfiles} programs, {seconds:.0f} s.", "", "| outcome | count |", "|---|---|"]
    for k, v in stats.most_common():
        out.append(f"| {k} | {v} |")
    out += ["", "Kernels not compiled or not run, by diagnostic code:", "",
            "| code | count |", "|---|---|"]
    for k, v in codes.most_common():
        out.append(f"| `{k}` | {v} |")
    if mismatches:
        out += ["", "Different results (compiled code against the interpreter), each with why "
                "the program itself has no defined result:", ""]
        out += [f"- `{m}`: {_why_different(m)}" for m in mismatches]
    if too_slow:
        out += ["", f"Kernels the interpreter did not finish in {timeout} s of CPU time (compiled, "
                "not compared):", ""]
        out += [f"- `{m}`" for m in too_slow]
    dest = ROOT / "benchmarks" / "results" / \
        ("codegen_corpus_checked.md" if checked else "codegen_corpus.md")
    dest.write_text("\n".join(out) + "\n")
    print("\n".join(out))


if __name__ == "__main__":
    sys.exit(main())
