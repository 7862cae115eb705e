"""`tirkit tune` against TVM 0.27 MetaSchedule (`tune_tir`), side by side, same trial budget.

    python benchmarks/tune_compare.py [--trials 64] [--only gemm_fp32,conv2d,gemm_int8] [--small]
                                      [--out benchmarks/results/tune.md]

Workloads: fp32 GEMM 1024³, a ResNet-50 conv2d layer (3x3, 56x56x64 -> 64, stride 1, pad 1,
NHWC, with its ReLU), and u8 x s8 -> s32 GEMM 1024³.  Each tool tunes each workload in its
own process on one thread (TVM: target `host_target()` plus `num-cores` 1 and
TVM_NUM_THREADS=1; tirkit: `--threads 1`, candidates timed in CPU time); both tools' best
kernels are then timed again in that process the same way (median of rounds, CPU time of
the calling thread), next to numpy (OPENBLAS_NUM_THREADS=1) where numpy has the operation.
Writes benchmarks/results/tune.md; prints the BENCHMARKS.md row.  `--small` runs 128-sized
GEMMs and a 14x14 conv (a quick check of the script).  TVM's tuner needs the `bench` and
`oracle` extras (`pip install -e '.[bench,oracle,run]'`: MetaSchedule imports cloudpickle,
psutil and tornado).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "language"))

GEMM = '''from tvm.script import tir as T


@T.prim_func
def {name}(
    A: T.Buffer(({n}, {n}), "{a}"),
    B: T.Buffer(({n}, {n}), "{b}"),
    C: T.Buffer(({n}, {n}), "{c}"),
):
    T.func_attr({{"global_symbol": "{name}", "tir.noalias": True}})
    for i, j, k in T.grid({n}, {n}, {n}):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.reads(A[vi, vk], B[vk, vj])
            T.writes(C[vi, vj])
            with T.init():
                C[vi, vj] = {zero}
            C[vi, vj] = C[vi, vj] + {body}
'''

CONV = '''from tvm.script import tir as T


@T.prim_func
def conv2d(
    X: T.Buffer((1, {h}, {h}, 64), "float32"),
    W: T.Buffer((3, 3, 64, 64), "float32"),
    Y: T.Buffer((1, {h}, {h}, 64), "float32"),
):
    T.func_attr({{"global_symbol": "conv2d", "tir.noalias": True}})
    pad = T.alloc_buffer((1, {hp}, {hp}, 64), "float32")
    conv = T.alloc_buffer((1, {h}, {h}, 64), "float32")
    for n, h, w, c in T.grid(1, {hp}, {hp}, 64):
        with T.block("pad"):
            vn, vh, vw, vc = T.axis.remap("SSSS", [n, h, w, c])
            T.reads(X[vn, vh - 1, vw - 1, vc])
            T.writes(pad[vn, vh, vw, vc])
            pad[vn, vh, vw, vc] = T.if_then_else(
                1 <= vh and vh < {hp1} and 1 <= vw and vw < {hp1},
                X[vn, vh - 1, vw - 1, vc],
                T.float32(0),
            )
    for n, h, w, co, rh, rw, ci in T.grid(1, {h}, {h}, 64, 3, 3, 64):
        with T.block("conv"):
            vn, vh, vw, vco, vrh, vrw, vci = T.axis.remap("SSSSRRR", [n, h, w, co, rh, rw, ci])
            T.reads(pad[vn, vh + vrh, vw + vrw, vci], W[vrh, vrw, vci, vco])
            T.writes(conv[vn, vh, vw, vco])
            with T.init():
                conv[vn, vh, vw, vco] = T.float32(0)
            conv[vn, vh, vw, vco] = conv[vn, vh, vw, vco] + pad[vn, vh + vrh, vw + vrw, vci] * W[vrh, vrw, vci, vco]
    for n, h, w, c in T.grid(1, {h}, {h}, 64):
        with T.block("relu"):
            vn, vh, vw, vc = T.axis.remap("SSSS", [n, h, w, c])
            T.reads(conv[vn, vh, vw, vc])
            T.writes(Y[vn, vh, vw, vc])
            Y[vn, vh, vw, vc] = T.max(conv[vn, vh, vw, vc], T.float32(0))
'''


def workloads(small: bool) -> dict:
    n = 128 if small else 1024
    h = 14 if small else 56
    return {
        "gemm_fp32": ("gemm_fp32", GEMM.format(name="gemm_fp32", n=n, a="float32", b="float32",
                                               c="float32", zero="T.float32(0)",
                                               body="A[vi, vk] * B[vk, vj]"),
                      f"fp32 GEMM {n}³", "fp32"),
        "conv2d": ("conv2d", CONV.format(h=h, hp=h + 2, hp1=h + 1),
                   f"conv2d NHWC 1x{h}x{h}x64, 3x3x64x64, pad 1, + ReLU (ResNet-50 res2)",
                   "fp32"),
        "gemm_int8": ("gemm_int8", GEMM.format(name="gemm_int8", n=n, a="uint8", b="int8",
                                               c="int32", zero="0",
                                               body='T.Cast("int32", A[vi, vk]) * '
                                                    'T.Cast("int32", B[vk, vj])'),
                      f"u8 x s8 -> s32 GEMM {n}³", "int8"),
    }


def tvm_source(text: str) -> str:
    lines = [ln for ln in text.splitlines() if not ln.startswith("from tvm.script import")]
    out = "\n".join(lines).replace("T.block(", "T.sblock(")
    out = out.replace("@T.prim_func\n", "@T.prim_func(s_tir=True)\n")
    return out[out.index("@T.prim_func"):]


def per_call(call, repeat=5, min_seconds=0.2) -> float:
    """Median thread-CPU seconds per call (host.per_call in the calling thread's CPU time)."""
    import host
    return host.per_call(call, time.thread_time, repeat, min_seconds)


# ---- one tool on one workload (a child process) ---------------------------------------------
def child_tirkit(key, trials, small) -> dict:
    import numpy as np
    import tirkit
    from tirkit.codegen import build
    from tirkit.codegen.cli import make_inputs
    from tirkit.tune import tune
    from tirkit.tune.runners import LocalRunner
    name, text, _, _ = workloads(small)[key]
    module = tirkit.parse(text).module
    runner = LocalRunner(1)
    t0 = time.perf_counter()
    res = tune(module, name, trials, runner=runner, threads=1, repeat=3, min_seconds=0.05)
    wall = time.perf_counter() - t0
    runner.close()
    best = res.module[name]
    kernel = build(best, res.module, cache=False)
    arrays = make_inputs(best, np.random.default_rng(0))
    sec = kernel.time(*arrays, threads=1, repeat=5, min_seconds=0.2, clock=time.thread_time)
    return {"seconds": sec, "tune_wall": wall, "search_best": res.best_seconds,
            "measured": res.stats.measured, "invalid": res.stats.invalid,
            "refused": res.stats.refused, "failed": res.stats.failed,
            "generated": res.stats.generated, "model": type(res).__name__ and _model_name(),
            "sketch": res.best.sketch.name, "trace": res.trace(),
            "script": tirkit.to_script(res.module)}


def _model_name() -> str:
    from tirkit.tune.models import default_model
    m = default_model()
    return getattr(m, "name", type(m).__name__)


def child_tvm(key, trials, small) -> dict:
    import numpy as np
    import tvm
    from tvm.s_tir import meta_schedule as ms
    from tirkit.codegen.llvm.engine import host_target
    import tirkit
    from tirkit.codegen.cli import make_inputs
    name, text, _, _ = workloads(small)[key]
    target = tvm.target.Target({**host_target(), "num-cores": 1})
    mod = tvm.IRModule({"main": tvm.script.from_source(tvm_source(text))})
    with tempfile.TemporaryDirectory() as work:
        t0 = time.perf_counter()
        # MetaSchedule's defaults give a build and a run 30 s each: a loaded machine passes
        # that while a worker process starts, so both get 300 s
        db = ms.tune_tir(mod, target, work, max_trials_global=trials,
                         num_trials_per_iter=min(trials, 64), num_tuning_cores=1, seed=0,
                         builder=ms.builder.LocalBuilder(max_workers=1, timeout_sec=300),
                         runner=ms.runner.LocalRunner(timeout_sec=300))
        wall = time.perf_counter() - t0
        # the best measured record, replayed (`compile_tir`'s query of the database found
        # none for this module although the records are there)
        records = [r for r in db.get_all_tuning_records() if r.run_secs]
        if not records:
            return {"error": "no candidate built and ran", "tune_wall": wall}
        best = min(records, key=lambda r: float(np.mean([float(x) for x in r.run_secs])))
        sch = tvm.s_tir.Schedule(best.workload.mod)
        best.trace.apply_to_schedule(sch, remove_postproc=False)
    ex = tvm.compile(sch.mod, target=target)
    func = tirkit.parse(text).module[name]
    arrays = make_inputs(func, np.random.default_rng(0))
    args = [tvm.runtime.tensor(a) for a in arrays]
    fn = ex["main"]
    sec = per_call(lambda: fn(*args))
    return {"seconds": sec, "tune_wall": wall, "threads": int(
        tvm.get_global_func("runtime.NumThreads")()), "script": sch.mod.script()}


def child_both(key, small, tirkit_path, tvm_path) -> dict:
    """Both tools' best kernels timed in one process on the same arrays (TVM's, which numpy
    views without a copy), rounds interleaved (medians)."""
    import statistics
    import numpy as np
    import tvm
    import tirkit
    from tirkit.codegen import build
    from tirkit.codegen.cli import make_inputs
    from tirkit.codegen.llvm.engine import host_target
    name = workloads(small)[key][0]
    tuned = tirkit.parse(Path(tirkit_path).read_text()).module
    kernel = build(tuned[name], tuned, cache=False)
    target = tvm.target.Target({**host_target(), "num-cores": 1})
    fn = tvm.compile(tvm.script.from_source(Path(tvm_path).read_text()), target=target)["main"]
    theirs = [tvm.runtime.tensor(a) for a in make_inputs(tuned[name], np.random.default_rng(0))]
    # the same memory for both (a 1024-wide GEMM's speed depends on how its arrays sit in
    # the cache sets: one kernel ran 1.65x apart between two placements)
    ours = [np.from_dlpack(t) for t in theirs]
    a, b = [], []
    for _ in range(5):
        a.append(per_call(lambda: kernel(*ours, threads=1), repeat=3, min_seconds=0.1))
        b.append(per_call(lambda: fn(*theirs), repeat=3, min_seconds=0.1))
    return {"tirkit": statistics.median(a), "tvm": statistics.median(b)}


def child_numpy(key, small) -> dict:
    import numpy as np
    name, text, _, kind = workloads(small)[key]
    if not key.startswith("gemm"):
        return {}
    n = 128 if small else 1024
    rng = np.random.default_rng(0)
    if kind == "fp32":
        a = rng.standard_normal((n, n), dtype=np.float32)
        b = rng.standard_normal((n, n), dtype=np.float32)
        return {"seconds": per_call(lambda: a @ b), "what": "numpy `A @ B` (OpenBLAS)"}
    out = {}
    try:
        import onnxruntime as ort
        from onnx import TensorProto, helper
        g = helper.make_graph(
            [helper.make_node("MatMulInteger", ["A", "B"], ["C"])], "g",
            [helper.make_tensor_value_info("A", TensorProto.UINT8, [n, n]),
             helper.make_tensor_value_info("B", TensorProto.INT8, [n, n])],
            [helper.make_tensor_value_info("C", TensorProto.INT32, [n, n])])
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1
        s = ort.InferenceSession(helper.make_model(g).SerializeToString(), opts)
        a = rng.integers(0, 8, (n, n), dtype=np.uint8)
        b = rng.integers(-8, 8, (n, n), dtype=np.int8)
        out = {"seconds": per_call(lambda: s.run(None, {"A": a, "B": b})),
               "what": "ONNX Runtime MatMulInteger"}
    except ImportError:
        a = rng.integers(0, 8, (n, n)).astype(np.int32)
        b = rng.integers(-8, 8, (n, n)).astype(np.int32)
        out = {"seconds": per_call(lambda: a @ b, repeat=3), "what": "numpy int32 `A @ B`"}
    return out


def run_child(*args) -> dict:
    env = dict(os.environ, TVM_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
               RAY_AUTH_MODE="disabled")
    p = subprocess.run([sys.executable, __file__, "--child", *map(str, args)], env=env,
                       capture_output=True, text=True)
    if p.returncode != 0:
        return {"error": (p.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(p.stdout.strip().splitlines()[-1])


def side_by_side(key, rows, small):
    """Both best kernels timed again in one process, interleaved: these replace each child's
    own timing (taken at another moment on a shared machine) as the table's times."""
    t, v = rows["tirkit"][key], rows["tvm"][key]
    if "script" not in t or "script" not in v:
        return
    with tempfile.TemporaryDirectory() as d:
        pt, pv = Path(d) / "tirkit.py", Path(d) / "tvm.py"
        pt.write_text(t["script"])
        pv.write_text(v["script"])
        both = run_child("both", key, small, pt, pv)
    print(key, "side by side", both, flush=True)
    if "tirkit" in both and "tvm" in both:
        t["seconds"], v["seconds"] = both["tirkit"], both["tvm"]


# ---- the report -------------------------------------------------------------------------------
def flops_of(key, small) -> int:
    n = 128 if small else 1024
    h = 14 if small else 56
    return 2 * n ** 3 if key.startswith("gemm") else 2 * h * h * 64 * 9 * 64


def write(dest, header, trials, rows, peak, small):
    lines = ["# `tirkit tune` vs TVM 0.27 MetaSchedule", "", *header,
             f"Trial budget: {trials} measured candidates per tool and workload; one thread "
             "(TVM: `num-cores` 1, TVM_NUM_THREADS=1; tirkit: `--threads 1`).  Times: the "
             "best kernel of each tool timed again in one process, the two interleaved over "
             "five rounds on the same arrays (median, CPU time of the calling thread; tirkit's "
             "kernel built by tirkit, TVM's by `tvm.compile` from its best record); tuning wall "
             "time includes building and measuring every candidate.  The machine may be "
             "shared: compare within a row.",
             "", "| workload | tirkit best | share of peak | TVM best | share of peak | "
             "tirkit / TVM speed | tirkit tuning wall | TVM tuning wall | reference | "
             "invalid filtered (tirkit) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for key, (label, kind) in rows["labels"].items():
        t, v, r = rows["tirkit"].get(key, {}), rows["tvm"].get(key, {}), rows["ref"].get(key, {})
        fl = flops_of(key, small)
        pk = peak["fp32" if kind == "fp32" else "int8"]
        unit = "GFLOP/s" if kind == "fp32" else "GOP/s"

        def rate(d):
            if "seconds" not in d:
                return d.get("error", "-"), "-"
            g = fl / d["seconds"] / 1e9
            return f"{g:.1f} {unit} ({d['seconds'] * 1e3:.2f} ms)", \
                (f"{100 * g * 1e9 / pk:.0f}%" if pk else "-")
        tr, tp = rate(t)
        vr, vp = rate(v)
        ratio = f"{v['seconds'] / t['seconds']:.2f}x" if "seconds" in t and "seconds" in v \
            else "-"
        ref = f"{r['what']}: {fl / r['seconds'] / 1e9:.1f} {unit}" if "seconds" in r else "-"
        tw = f"{t['tune_wall']:.0f} s" if "tune_wall" in t else "-"
        vw = f"{v['tune_wall']:.0f} s" if "tune_wall" in v else "-"
        inv = f"{t['invalid']} of {t['generated']} generated" if "invalid" in t else "-"
        lines.append(f"| {label} | {tr} | {tp} | {vr} | {vp} | {ratio} | {tw} | {vw} | {ref} "
                     f"| {inv} |")
    lines += ["", "Cost model used by tirkit: " + ", ".join(
        sorted({d.get("model", "?") for d in rows["tirkit"].values() if "model" in d}) or ["-"])
        + ".", "", "Best tirkit schedules (sketch and trace):", ""]
    for key, d in rows["tirkit"].items():
        if "trace" in d:
            lines += [f"`{key}`: {d['sketch']}", "", "```python", d["trace"].rstrip(), "```", ""]
    lines += ["TVM's best kernels (its best record replayed, as `tvm.compile` built them):", ""]
    for key, d in rows["tvm"].items():
        if "script" in d:
            lines += [f"`{key}`:", "", "```python", d["script"].rstrip(), "```", ""]
    dest.write_text("\n".join(lines) + "\n")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=64)
    ap.add_argument("--only", default="gemm_fp32,conv2d,gemm_int8")
    ap.add_argument("--small", action="store_true")
    ap.add_argument("--out", default=None, help="the results file (default "
                    "benchmarks/results/tune.md)")
    ap.add_argument("--child", nargs="+")
    args = ap.parse_args()
    if args.child:
        tool, key = args.child[0], args.child[1]
        small = args.child[-1] == "True"
        if tool == "both":
            out = child_both(key, args.child[2] == "True", args.child[3], args.child[4])
        elif tool == "tirkit":
            out = child_tirkit(key, int(args.child[2]), small)
        elif tool == "tvm":
            out = child_tvm(key, int(args.child[2]), small)
        else:
            out = child_numpy(key, small)
        print(json.dumps(out))
        return 0
    import host
    from tirkit.codegen.llvm.peak import measure_peak
    p = measure_peak(1)
    peak = {"fp32": p.fp32, "int8": p.int8}
    header = host.header({"TVM 0.27": "TVM_NUM_THREADS=1, target num-cores 1",
                          "numpy (OpenBLAS)": "OPENBLAS_NUM_THREADS=1",
                          "tirkit": "threads=1"})
    keys = args.only.split(",")
    all_w = workloads(args.small)
    rows = {"labels": {k: (all_w[k][2], all_w[k][3]) for k in keys}, "tirkit": {}, "tvm": {},
            "ref": {}}
    dest = Path(args.out) if args.out else \
        HERE / "results" / ("tune_small.md" if args.small else "tune.md")
    for k in keys:
        rows["ref"][k] = run_child("numpy", k, args.small)
        rows["tirkit"][k] = run_child("tirkit", k, args.trials, args.small)
        print(k, "tirkit", {a: b for a, b in rows["tirkit"][k].items()
                            if a not in ("trace", "script")},
              flush=True)
        rows["tvm"][k] = run_child("tvm", k, args.trials, args.small)
        print(k, "tvm", {a: b for a, b in rows["tvm"][k].items() if a != "script"}, flush=True)
        side_by_side(k, rows, args.small)
        write(dest, header, args.trials, rows, peak, args.small)
    print(dest.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
