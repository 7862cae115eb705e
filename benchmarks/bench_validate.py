"""Cost of validation against parse-and-lower, measured in the same run.

Usage:
    python benchmarks/bench_validate.py [--kernels 60] [--repeat 7] [--out FILE]

A file of about 1,000 lines with about 60 kernels (element-wise, reductions, tiled CPU
matmuls, padded convolutions, GPU kernels with shared memory) is generated.  For each
repeat, with the parser caches cleared:

- anchor: `tirkit.parse(text)` (chunking, lark parse, lowering to IR);
- validation: every rule of `tirkit.verify` on the parsed module (`run_rules`).

The figure is median(validation) / median(parse-and-lower); the target is at most 0.50.
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "language"))

HEADER = "from tvm.script import tir as T\n\n\n"


def elementwise(name, rng):
    n, m = rng.choice([64, 128, 256]), rng.choice([32, 64, 128])
    op = rng.choice(["A[vi, vj] * T.float32(2)", "A[vi, vj] + T.float32(1)",
                     "T.max(A[vi, vj], T.float32(0))", "T.exp(A[vi, vj])"])
    return f'''@T.prim_func
def {name}(A: T.Buffer(({n}, {m}), "float32"), B: T.Buffer(({n}, {m}), "float32")):
    for i, j in T.grid({n}, {m}):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi, vj])
            T.writes(B[vi, vj])
            B[vi, vj] = {op}
'''


def reduction(name, rng):
    n, k = rng.choice([32, 64, 128]), rng.choice([64, 256, 512])
    return f'''@T.prim_func
def {name}(A: T.Buffer(({n}, {k}), "float32"), B: T.Buffer(({n},), "float32")):
    for i, k in T.grid({n}, {k}):
        with T.block("sum"):
            vi, vk = T.axis.remap("SR", [i, k])
            T.reads(A[vi, vk])
            T.writes(B[vi])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]
'''


def tiled_matmul(name, rng):
    n = rng.choice([128, 256])
    return f'''@T.prim_func
def {name}(A: T.Buffer(({n}, {n}), "float32"), B: T.Buffer(({n}, {n}), "float32"),
        C: T.Buffer(({n}, {n}), "float32")):
    for i_0 in T.parallel({n // 32}):
        for j_0, k_0, i_1, k_1 in T.grid({n // 16}, {n // 4}, 32, 4):
            for j_1 in T.vectorized(16):
                with T.block("C"):
                    vi = T.axis.spatial({n}, i_0 * 32 + i_1)
                    vj = T.axis.spatial({n}, j_0 * 16 + j_1)
                    vk = T.axis.reduce({n}, k_0 * 4 + k_1)
                    T.reads(A[vi, vk], B[vk, vj])
                    T.writes(C[vi, vj])
                    with T.init():
                        C[vi, vj] = T.float32(0)
                    C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
'''


def padded_conv(name, rng):
    h = rng.choice([16, 32])
    return f'''@T.prim_func
def {name}(X: T.Buffer(({h}, {h}), "float32"), W: T.Buffer((3, 3), "float32"),
        Y: T.Buffer(({h}, {h}), "float32")):
    pad = T.alloc_buffer(({h + 2}, {h + 2}), "float32")
    for i, j in T.grid({h + 2}, {h + 2}):
        with T.block("pad"):
            vi, vj = T.axis.remap("SS", [i, j])
            pad[vi, vj] = T.if_then_else(1 <= vi and vi < {h + 1} and 1 <= vj and vj < {h + 1},
                                         X[vi - 1, vj - 1], T.float32(0))
    for i, j, r, s in T.grid({h}, {h}, 3, 3):
        with T.block("conv"):
            vi, vj, vr, vs = T.axis.remap("SSRR", [i, j, r, s])
            with T.init():
                Y[vi, vj] = T.float32(0)
            Y[vi, vj] = Y[vi, vj] + pad[vi + vr, vj + vs] * W[vr, vs]
'''


def gpu_matmul(name, rng):
    n = rng.choice([512, 1024])
    t = n // 32
    return f'''@T.prim_func
def {name}(A: T.Buffer(({n}, {n}), "float32"), B: T.Buffer(({n}, {n}), "float32"),
        C: T.Buffer(({n}, {n}), "float32")):
    A_shared = T.alloc_buffer(({n}, {n}), "float32", scope="shared")
    for by in T.thread_binding({t}, thread="blockIdx.y"):
        for bx in T.thread_binding({t}, thread="blockIdx.x"):
            for ty in T.thread_binding(32, thread="threadIdx.y"):
                for tx in T.thread_binding(32, thread="threadIdx.x"):
                    for k_0 in range({t}):
                        for ax1 in range(32):
                            with T.block("A_shared"):
                                v0 = T.axis.spatial({n}, by * 32 + ty)
                                v1 = T.axis.spatial({n}, k_0 * 32 + ax1)
                                T.reads(A[v0, v1])
                                T.writes(A_shared[v0, v1])
                                A_shared[v0, v1] = A[v0, v1]
                        for k_1 in range(32):
                            with T.block("C"):
                                vi = T.axis.spatial({n}, by * 32 + ty)
                                vj = T.axis.spatial({n}, bx * 32 + tx)
                                vk = T.axis.reduce({n}, k_0 * 32 + k_1)
                                T.reads(A_shared[vi, vk], B[vk, vj])
                                T.writes(C[vi, vj])
                                with T.init():
                                    C[vi, vj] = T.float32(0)
                                C[vi, vj] = C[vi, vj] + A_shared[vi, vk] * B[vk, vj]
'''


KINDS = [elementwise, reduction, tiled_matmul, padded_conv, gpu_matmul]


def generate(kernels=60, seed=0):
    rng = random.Random(seed)
    parts = [HEADER]
    for n in range(kernels):
        kind = KINDS[n % len(KINDS)]
        parts.append(kind(f"k{n}_{kind.__name__}", rng))
        parts.append("\n\n")
    return "".join(parts)


def _clear_caches():
    from tirkit.script import parse as P
    for name in ("_parse_cache", "_kernel_cache"):
        c = getattr(P, name, None)
        if c is not None:
            c.clear()
    from tirkit import verify
    if hasattr(verify, "clear_result_cache"):
        verify.clear_result_cache()


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
        f"validation / parse-and-lower: {ratio:.2f}  (target <= 0.50: "
        f"{'met' if ratio <= 0.5 else 'NOT met'})",
    ]
    print("\n".join(rows))
    if args.out:
        with open(args.out, "w") as fh:
            fh.write("\n".join(rows) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
