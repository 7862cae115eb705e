"""Speed of `tirkit check` against TVM's own parser, measured in the same run.

Usage:
    python benchmarks/bench_parse.py [--kernels 60] [--repeat 5] [--no-tvm] [--out FILE]

A file of about 1,000 lines with about 60 kernels (element-wise, reductions, tiled matmuls,
GPU-bound loops; tirx spelling, so TVM reads the very same text) is generated, then:

- start-up: `tirkit check` (subprocess) on a file without kernels;
- cold `tirkit check` of the file (subprocess), and in-process with every cache cleared;
- a full check of one kernel (parse, lower, every rule) in-process, caches cleared: median
  ms per kernel, against TVM 0.27's `tvm.script.from_source` on the same kernel (the anchor);
- re-check of the file after one kernel changed (caches warm from the previous version, as
  in the editor): median over edits of different kernels.

Every figure is a median over --repeat runs (subprocess timings) or over kernels/edits.
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "language"))

sys.path.insert(0, HERE)
from kernels import HEADERS, generate as generate_kernels  # noqa: E402

HEADER = HEADERS["tirx"]


def generate(n_kernels=60, seed=0):
    """The benchmark file in the tirx spelling, so TVM reads exactly the same kernels."""
    return generate_kernels(n_kernels, seed, "tirx")


def clear_caches():
    import tirkit
    tirkit.clear_caches()


def median_ms(samples):
    return 1000.0 * statistics.median(samples)


def run_cli(path, repeat):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([os.path.join(ROOT, "language"),
                                         env.get("PYTHONPATH", "")])
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        r = subprocess.run([sys.executable, "-m", "tirkit.cli", "check", path],
                           capture_output=True, text=True, env=env)
        times.append(time.perf_counter() - t0)
        if r.returncode not in (0, 1) or "Traceback" in r.stderr:
            raise SystemExit(f"tirkit check failed:\n{r.stderr}")
    return median_ms(times)


def bench_tvm(kernels):
    import tvm  # noqa: F401
    import tvm.script
    from tvm.script.parser import tirx as tirx_parser
    from tvm.script.parser.core.entry import _default_globals
    extra = _default_globals()
    extra["T"] = tirx_parser
    times = []
    for k in kernels:
        t0 = time.perf_counter()
        tvm.script.from_source(k, extra_vars=extra)
        times.append(time.perf_counter() - t0)
    return median_ms(times)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kernels", type=int, default=60)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--no-tvm", action="store_true")
    ap.add_argument("--out", default=None, help="append a markdown table of the figures here")
    args = ap.parse_args(argv)

    import tirkit
    text, kernels = generate(args.kernels)
    n_lines = text.count("\n")
    tmp = tempfile.mkdtemp(prefix="tirkit-bench-")
    path = os.path.join(tmp, "kernels.py")
    empty = os.path.join(tmp, "empty.py")
    with open(path, "w") as f:
        f.write(text)
    with open(empty, "w") as f:
        f.write("x = 1\n")

    rows = []
    startup = run_cli(empty, args.repeat)
    rows.append(("start-up: `tirkit check` on a file without kernels (subprocess)", startup))
    cold_cli = run_cli(path, args.repeat)
    rows.append((f"cold `tirkit check`, {n_lines} lines / {len(kernels)} kernels (subprocess)",
                 cold_cli))

    diags = tirkit.check(text, path)           # warm the imports and the grammar
    assert not [d for d in diags if d.severity == "error"], diags[:3]
    cold = []
    for _ in range(args.repeat):
        clear_caches()
        t0 = time.perf_counter()
        tirkit.check(text, path)
        cold.append(time.perf_counter() - t0)
    cold_file = median_ms(cold)
    rows.append(("cold check of the file in-process (caches cleared)", cold_file))

    per_kernel = []
    for k in kernels:
        clear_caches()
        t0 = time.perf_counter()
        tirkit.check(HEADER + k, path)
        per_kernel.append(time.perf_counter() - t0)
    ours = median_ms(per_kernel)
    rows.append(("full check of one kernel (parse, lower, rules), median per kernel", ours))

    edits = []
    rng = random.Random(1)
    clear_caches()
    current = text
    tirkit.check(current, path)
    for i in rng.sample(range(len(kernels)), min(20, len(kernels))):
        edited = list(kernels)
        edited[i] = edited[i].replace("T.float32(0)", "T.float32(1)", 1) \
            if "T.float32(0)" in edited[i] else edited[i].replace("A[vi", "A[(vi)", 1)
        new = HEADER + "\n\n".join(edited)
        assert new != current
        t0 = time.perf_counter()
        tirkit.check(new, path)
        edits.append(time.perf_counter() - t0)
        current = new
        tirkit.check(text, path)               # back to the original (cached) version
        current = text
    recheck = median_ms(edits)
    rows.append(("re-check of the file after a one-kernel edit (in-process, warm)", recheck))

    tvm_ms = None
    if not args.no_tvm:
        try:
            tvm_ms = bench_tvm(kernels)
        except ImportError:
            tvm_ms = None
    if tvm_ms is not None:
        rows.append(("anchor: TVM 0.27 `tvm.script.from_source`, median per kernel", tvm_ms))

    out = ["| measure | ms |", "| --- | ---: |"]
    out += [f"| {name} | {ms:.1f} |" for name, ms in rows]
    if tvm_ms is not None:
        out.append(f"| **ratio: TVM parse / our full check, per kernel** | "
                   f"**{tvm_ms / ours:.1f}x** |")
    table = "\n".join(out)
    print(table)
    ok_speed = tvm_ms is None or tvm_ms / ours >= 2
    ok_edit = recheck <= 30
    print(f"\ntargets: full check >= 2x faster than TVM parse: {'met' if ok_speed else 'MISSED'}"
          f"; re-check after an edit <= 30 ms: {'met' if ok_edit else 'MISSED'}")
    if args.out:
        import host  # benchmarks/host.py: where this ran
        with open(args.out, "a") as f:
            f.write("\n".join(host.header({"TVM 0.27 `from_source`": "in-process, serial"}))
                    + "\n" + table + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
