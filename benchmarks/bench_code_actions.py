"""Code-action speed in a 1,000-line file: listing the schedule actions at a cursor (every
candidate primitive tried on the IR) and applying one (the primitive, printing the kernel,
splicing it into the file). Anchor, measured in the same run: Python's own `ast.parse` of
the file (the server has the parse already; listing starts from it).

    python benchmarks/bench_code_actions.py [--out benchmarks/results/code_actions.md]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "language"))

import host  # noqa: E402  (benchmarks/host.py: where this ran)
import tirkit  # noqa: E402
from tirkit.schedule.actions import actions_at, apply_action  # noqa: E402

KERNEL = '''@T.prim_func
def k{n}(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"),
         D: T.Buffer((128, 128), "float32")):
    C = T.alloc_buffer((128, 128), "float32")
    for i, j, k in T.grid(128, 128, 128):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.reads(A[vi, vk], B[vk, vj])
            T.writes(C[vi, vj])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
    for i, j in T.grid(128, 128):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(C[vi, vj])
            T.writes(D[vi, vj])
            D[vi, vj] = T.max(C[vi, vj], T.float32(0))

'''


def med(fn, n):
    """Median CPU time of fn: everything here is single-threaded Python, so CPU time is what
    a quiet machine's wall clock shows, and a busy machine does not inflate it."""
    ts = []
    for _ in range(n):
        t = time.process_time()
        fn()
        ts.append(time.process_time() - t)
    return statistics.median(ts)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(ROOT, "benchmarks", "results",
                                                  "code_actions.md"))
    ap.add_argument("--repeat", type=int, default=15)
    args = ap.parse_args(argv)
    parts = ["from tvm.script import tir as T\n\n\n"]
    n = 0
    while sum(p.count("\n") for p in parts) < 1000:
        parts.append(KERNEL.format(n=n))
        n += 1
    text = "".join(parts)
    lines = text.count("\n")
    result = tirkit.parse(text)
    assert not result.diagnostics
    mid = n // 2
    first = 4 + mid * KERNEL.count("\n")           # the `@T.prim_func` line of kernel `mid`
    loop_line, block_line, relu_block = first + 4, first + 5, first + 13
    import ast
    parse_s = med(lambda: ast.parse(text), 5)
    out = {}
    for label, (ln, col) in {"loop `i`": (loop_line, 9), "loop `k`": (loop_line, 15),
                             "block `C`": (block_line, 14),
                             "block `D`": (relu_block, 14)}.items():
        acts = actions_at(result, ln, col)
        assert acts, label
        out[label] = (len(acts), med(lambda: actions_at(result, ln, col), args.repeat))
    acts = actions_at(result, loop_line, 9)
    split = next(a for a in acts if a.title.startswith("Split"))
    apply_s = med(lambda: apply_action(result, split), args.repeat)
    cat = [a for a in actions_at(result, block_line, 14) if a.title.startswith("Compute")]
    ca_s = med(lambda: apply_action(result, cat[0]), args.repeat) if cat else None
    d_acts = actions_at(result, relu_block, 14)
    rca = [a for a in d_acts if "(reverse)" in a.title]
    rca_s = med(lambda: apply_action(result, rca[0]), args.repeat) if rca else None
    rows = ["# Code actions in a 1,000-line file", "",
            *host.header({"`ast.parse`": "Python's parser, one thread"}),
            f"File: {lines} lines, {n} kernels (matmul + ReLU each). Medians of {args.repeat} "
            f"runs, in CPU time; anchor `ast.parse` of the file: {parse_s * 1000:.1f} ms "
            "(same run).", "",
            "| what | actions | median | / ast.parse | target |", "| --- | --- | --- | --- | --- |"]
    for label, (k, s) in out.items():
        rows.append(f"| list at {label} | {k} | {s * 1000:.1f} ms | {s / parse_s:.3f} | 50 ms |")
    rows.append(f"| apply split (print + splice) | 1 | {apply_s * 1000:.1f} ms | "
                f"{apply_s / parse_s:.3f} | 100 ms |")
    if ca_s is not None:
        rows.append(f"| apply compute_at | 1 | {ca_s * 1000:.1f} ms | {ca_s / parse_s:.3f} | "
                    "100 ms |")
    if rca_s is not None:
        rows.append(f"| apply reverse_compute_at | 1 | {rca_s * 1000:.1f} ms | "
                    f"{rca_s / parse_s:.3f} | 100 ms |")
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as fh:
        fh.write("\n".join(rows) + "\n")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
