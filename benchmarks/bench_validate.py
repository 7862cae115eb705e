"""Cost of validation against parse-and-lower, measured in the same run.

Usage:
    python benchmarks/bench_validate.py [--kernels 60] [--repeat 7] [--out FILE]

A file of about 1,000 lines with about 60 kernels (element-wise, reductions, tiled CPU
matmuls, padded convolutions, GPU kernels with shared memory) is generated.  For each
repeat, with the parser caches cleared:

- anchor: `tirkit.parse(text)` (chunking, lark parse, lowering to IR);
- validation: every rule of `tirkit.verify` on the parsed module (`run_rules`).

The figure is median(validation) / median(parse-and-lower); the target is at most 0.35.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "language"))

sys.path.insert(0, HERE)
import host  # noqa: E402  (benchmarks/host.py: where this ran)
from kernels import generate as generate_kernels  # noqa: E402


def generate(kernels=60, seed=0):
    return generate_kernels(kernels, seed, "classic")[0]


def _clear_caches():
    import tirkit
    tirkit.clear_caches()


def measure(text, repeat):
    import tirkit
    from tirkit.verify import load_rules, run_rules
    load_rules()
    parse_t, check_t, n_diags = [], [], 0
    for _ in range(repeat):
        _clear_caches()
        t0 = time.perf_counter()
        result = tirkit.parse(text, "bench.py")
        t1 = time.perf_counter()
        diags = run_rules(result)
        t2 = time.perf_counter()
        parse_t.append(t1 - t0)
        check_t.append(t2 - t1)
        n_diags = len(diags)
    return statistics.median(parse_t), statistics.median(check_t), n_diags


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernels", type=int, default=60)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    text = generate(args.kernels)
    lines = text.count("\n")
    p, c, nd = measure(text, args.repeat)
    ratio = c / p
    rows = [
        f"file: {lines} lines, {args.kernels} kernels (generated, seed 0); median of "
        f"{args.repeat} runs, parser caches cleared each run",
        f"parse-and-lower (anchor): {p * 1000:.1f} ms",
        f"validation (every rule):  {c * 1000:.1f} ms  ({nd} diagnostics)",
        f"validation / parse-and-lower: {ratio:.2f}  (target <= 0.35: "
        f"{'met' if ratio <= 0.35 else 'NOT met'})",
    ]
    where = host.header({"anchor (parse-and-lower)": "tirkit itself, in-process, one thread"})
    print("\n".join(where + rows))
    if args.out:
        with open(args.out, "w") as fh:
            fh.write("\n".join(where + ["```", *rows, "```"]) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
