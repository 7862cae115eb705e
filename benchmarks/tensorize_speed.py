"""int8 GEMM 1024³ (u8 x s8 -> s32), one thread, side by side in one run: tirkit's kernel
tensorized by `auto_tensorize` with the best intrinsic this CPU has, the same script
untensorized, and ONNX Runtime's `MatMulInteger` (MLAS) with B a graph input and with B a
constant initializer. Medians of repeated runs; every kernel's result is checked against
numpy before it is timed.

    python benchmarks/tensorize_speed.py [--n 1024] [--reps 9]
    # needs the `run` and `bench` extras (llvmlite, onnxruntime, onnx)

Our timing includes packing B (the reindex block of the schedule: B is an input), like
ORT's graph-input row. The schedule after `auto_tensorize`: the outer i and j loops split
by 4 and 2 and the reduction decomposed (`SCHEDULE` below). A u8 operand below 128 keeps
the vpmaddubsw forms (AVX2, AVX-512 without VNNI) exact, as it does for MLAS's kernels.
Writes benchmarks/results/tensorize_speed.md."""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import host  # noqa: E402

ANCHORS = {"ONNX Runtime": "intra_op_num_threads=1, inter_op_num_threads=1, sequential",
           "tirkit": "one thread (no parallel loops)"}
SCHEDULE = """\
b = sch.get_block("C")
ob = sch.auto_tensorize(b, INTRIN)
i, j0, k0 = sch.get_loops(ob)
i0, i1 = sch.split(i, [None, 4])
j00, j01 = sch.split(j0, [None, 2])
sch.reorder(i0, j00, k0, i1, j01)
sch.decompose_reduction(ob, k0)
sch.unroll(i1)
sch.unroll(j01)
"""


def gemm(n):
    return f'''from tvm.script import tir as T


@T.prim_func
def gemm(A: T.Buffer(({n}, {n}), "uint8"), B: T.Buffer(({n}, {n}), "int8"),
         C: T.Buffer(({n}, {n}), "int32")):
    T.func_attr({{"global_symbol": "gemm", "tir.noalias": True}})
    for i, j, k in T.grid({n}, {n}, {n}):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = 0
            C[vi, vj] = C[vi, vj] + T.Cast("int32", A[vi, vk]) * T.Cast("int32", B[vk, vj])
'''


def median_time(fn, reps):
    fn()
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)


def ours(n, A, B, ref, reps):
    import tirkit
    from tirkit import codegen
    from tirkit.tensorize import load
    from tirkit.tensorize.suggest import block_mappings
    mod = tirkit.parse(gemm(n)).module
    sch = tirkit.Schedule(mod)
    ok, _ = block_mappings(sch.get(sch.get_block("C")))
    if not ok:
        raise SystemExit("no intrinsic of this CPU serves the GEMM")
    intrin = ok[0].intrin.name
    exec(SCHEDULE, {"sch": sch, "INTRIN": intrin})
    rows = []
    for label, m, r in ((f"tirkit tensorized ({load().get(intrin).label})", sch.mod, reps),
                        ("tirkit untensorized (same script)", mod, max(1, reps // 4))):
        k = codegen.build(m["gemm"], m)
        C = np.zeros((n, n), "int32")
        k(A, B, C)
        assert np.array_equal(C, ref), label
        rows.append((label, median_time(lambda: k(A, B, C), r)))
    return rows, intrin


def onnx_runtime(n, A, B, ref, reps):
    try:
        import onnxruntime as ort
        from onnx import TensorProto, helper, numpy_helper
    except ImportError:
        return []
    rows = []
    for const in (False, True):
        inputs = [helper.make_tensor_value_info("A", TensorProto.UINT8, [n, n])]
        inits = []
        if const:
            inits.append(numpy_helper.from_array(B, "B"))
        else:
            inputs.append(helper.make_tensor_value_info("B", TensorProto.INT8, [n, n]))
        node = helper.make_node("MatMulInteger", ["A", "B"], ["C"])
        graph = helper.make_graph([node], "g", inputs,
                                  [helper.make_tensor_value_info("C", TensorProto.INT32, [n, n])],
                                  initializer=inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1
        opts.inter_op_num_threads = 1
        opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        s = ort.InferenceSession(model.SerializeToString(), opts,
                                 providers=["CPUExecutionProvider"])
        feed = {"A": A} if const else {"A": A, "B": B}
        out = s.run(None, feed)[0]
        assert np.array_equal(out, ref)
        label = f"ONNX Runtime {ort.__version__} MatMulInteger, B " + \
            ("a constant initializer" if const else "a graph input")
        rows.append((label, median_time(lambda: s.run(None, feed), reps)))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--reps", type=int, default=9)
    args = ap.parse_args()
    n = args.n
    rng = np.random.default_rng(0)
    A = rng.integers(1, 128, (n, n)).astype("uint8")
    B = rng.integers(-128, 128, (n, n)).astype("int8")
    ref = (A.astype(np.int64) @ B.astype(np.int64)).astype(np.int32)
    rows, intrin = ours(n, A, B, ref, args.reps)
    rows += onnx_runtime(n, A, B, ref, args.reps)
    ops = 2 * n ** 3
    anchor = next((t for l, t in rows if "graph input" in l), None)
    tens = rows[0][1]
    lines = host.header(ANCHORS) + [
        "", f"# Tensorized int8 GEMM {n}³ (u8 x s8 -> s32), one thread", "",
        f"Intrinsic: `{intrin}`. Schedule after `b = sch.get_block(\"C\")`:", "", "```python",
        SCHEDULE.rstrip(), "```", "",
        "| kernel | median ms | GOP/s | time / tensorized time | "
        "speed vs ORT (B input) |", "| --- | ---: | ---: | ---: | ---: |"]
    for label, t in rows:
        lines.append(f"| {label} | {t * 1e3:.2f} | {ops / t / 1e9:.1f} | {t / tens:.2f}x | "
                     + (f"{anchor / t:.0%} |" if anchor else "- |"))
    lines += ["", "Every kernel's output was checked equal to numpy before timing "
              "(A in [1, 128), B in [-128, 128))."]
    out = Path(__file__).resolve().parent / "results" / "tensorize_speed.md"
    out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
