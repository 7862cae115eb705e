"""Code generator benchmark: tirkit vs TVM 0.27 on the same TVMScript, and numpy.

    python benchmarks/bench_codegen.py [--rounds 5] [--compile-repeat 7] [--out FILE]
                                       # writes benchmarks/results/codegen.md (a few minutes)
    python benchmarks/bench_codegen.py --compile-only      # compile-time tables, printed

Compile time, in this process: `tirkit.codegen.build` without its cache, with the LLVM
pipeline it chooses (codegen/llvm/pipeline.py) and with the other one (full O3 with LLVM's
loop unroller, the costly part of O3, where it was left out; in the run-time tables, what the
choice costs or saves), against TVM's in-process `tvm.compile` (target llvm with the host's
CPU name and features), interleaved, medians of CPU time (the machine may be shared) with
wall time beside it, and where tirkit's time goes.  `--compile-only` prints just that part.

Run time, one child process per thread count n (1, then every core): the child starts with
TVM_NUM_THREADS=n, OPENBLAS_NUM_THREADS=n and OMP_NUM_THREADS=n, so that TVM's thread pool
really has n workers (TVM otherwise uses half the hardware threads, and
`runtime.config_threadpool` cannot raise that), checks `runtime.NumThreads()`, and times in
interleaved rounds tirkit (the chosen pipeline, and the other one: full O3 with the unroller
where it was left out), TVM and,
for the 1024^3 matmul, numpy (OpenBLAS).  On one thread every call runs on the calling
thread, so it is timed in that thread's CPU time (waiting on a busy machine does not count);
on more threads in wall time.  Outputs of tirkit and TVM are compared once.
Shares of the peak are against this host's measured peak on n threads (benchmarks/host.py).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "language"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402

import host  # noqa: E402
import tirkit  # noqa: E402
from tirkit.codegen import build  # noqa: E402
from tirkit.codegen.cli import make_inputs  # noqa: E402
from tirkit.codegen.flops import count_ops  # noqa: E402
from tirkit.codegen.llvm.pipeline import FULL, NO_UNROLL, choose  # noqa: E402
from tirkit.codegen.passes import lower  # noqa: E402

SHARED = Path(os.environ.get("TIRKIT_SHARED", ROOT.parent / "shared"))
if not SHARED.exists():
    SHARED = Path("/work/shared")
KERNELS = [
    (ROOT / "examples" / "matmul_1024_scheduled.py", "matmul_1024", True),
    (ROOT / "examples" / "matmul_1024_avx2.py", "matmul_1024_avx2", True),
    (SHARED / "examples" / "valid" / "scheduled_matmul_cpu.py", "matmul_tiled", True),
    (SHARED / "examples" / "valid" / "matmul.py", "matmul", False),
    (SHARED / "examples" / "valid" / "conv2d_nhwc_relu.py", "conv2d_nhwc_relu", False),
    (SHARED / "examples" / "valid" / "softmax.py", "softmax", False),
]
ANCHORS = {
    "TVM 0.27": "one process per thread count n with TVM_NUM_THREADS=n set before TVM "
                "starts; `runtime.NumThreads()` checked (column 'TVM threads')",
    "numpy (OpenBLAS)": "the same processes, OPENBLAS_NUM_THREADS=n and OMP_NUM_THREADS=n",
    "tirkit": "`kernel.time(threads=n)`: its own pool of n threads for parallel loops",
}


def tvm_source(text: str) -> str:
    """The classic-spelling script in TVM 0.27's tirx spelling, imports stripped."""
    lines = [ln for ln in text.splitlines() if not ln.startswith(("from tvm.script import",
                                                                   "import tvm"))]
    out = "\n".join(lines)
    out = out.replace("T.block(", "T.sblock(").replace("@T.prim_func\n", "@T.prim_func(s_tir=True)\n")
    return out[out.index("@T.prim_func"):]


def load(path, name):
    text = path.read_text()
    module = tirkit.parse(text, str(path)).module
    return text, module, module[name]


def other(func):
    """The pipeline compared with the chosen one: O3 with LLVM's loop unroller (the previous
    default), or without it where that was chosen."""
    return FULL if choose(func) != FULL else NO_UNROLL


def timed(fn):
    c0, w0 = time.process_time(), time.perf_counter()
    fn()
    return time.process_time() - c0, time.perf_counter() - w0


# ---- compile time (this process) --------------------------------------------------------
def phases(func, module, repeat: int) -> dict:
    """Median CPU ms of the steps of a build: lowering passes, LLVM IR generation (with its
    text), LLVM (parse, optimize, emit object code), loading into an execution engine."""
    from tirkit.codegen.llvm import engine
    from tirkit.codegen.llvm.function import build_module
    from tirkit.codegen.llvm.pipeline import loop_metadata
    got = {"lower": [], "ir": [], "llvm": [], "load": []}
    for _ in range(repeat):
        c0 = time.process_time()
        lowered = lower(func, module)
        c1 = time.process_time()
        text = loop_metadata(str(build_module(lowered,
                                              unroll_count=choose(func).unroll_count)[0]))
        c2 = time.process_time()
        obj, _ = engine.compile_ir(text, choose(func), keep_ir=False)
        c3 = time.process_time()
        engine.Loaded(obj)
        c4 = time.process_time()
        for k, a, b in (("lower", c0, c1), ("ir", c1, c2), ("llvm", c2, c3), ("load", c3, c4)):
            got[k].append(b - a)
    return {k: float(np.median(v)) for k, v in got.items()}


def compile_times(repeat: int):
    import tvm
    from tirkit.codegen.llvm.engine import host_target
    target = tvm.target.Target(host_target())
    rows = {}
    for path, name, _ in KERNELS:
        text, module, func = load(path, name)
        mod = tvm.script.from_source(tvm_source(text))
        jobs = {"need": lambda: build(func, module, cache=False),
                "alt": lambda: build(func, module, cache=False, pipeline=other(func)),
                "tvm": lambda: tvm.compile(mod, target=target)}
        for fn in jobs.values():
            fn()                                            # warm up
        got = {k: [] for k in jobs}
        for _ in range(repeat):
            for k, fn in jobs.items():
                got[k].append(timed(fn))
        rows[name] = {k: [float(np.median([c for c, _ in v])), float(np.median([w for _, w in v]))]
                      for k, v in got.items()}
        rows[name]["pipeline"] = choose(func).describe()
        rows[name]["phases"] = phases(func, module, repeat)
        print(name, {k: f"{1e3 * v[0]:.0f} ms" for k, v in rows[name].items()
                     if isinstance(v, list)}, flush=True)
    return rows


# ---- run time (child process per thread count) ------------------------------------------
NUMPY_N = 1024


def child(threads: int, rounds: int) -> dict:
    import tvm
    from tirkit.codegen.llvm.engine import host_target
    target = tvm.target.Target(host_target())
    tvm_threads = int(tvm.get_global_func("runtime.NumThreads")())
    out = {"threads": threads, "tvm_threads": tvm_threads, "kernels": {},
           "clock": "CPU time of the calling thread" if threads == 1 else "wall time"}
    for path, name, _ in KERNELS:
        text, module, func = load(path, name)
        arrays = make_inputs(func, np.random.default_rng(0))
        need = build(func, module, cache=False)
        alt = build(func, module, cache=False, pipeline=other(func))
        ex = tvm.compile(tvm.script.from_source(tvm_source(text)), target=target)
        mine = [a.copy() for a in arrays]
        need(*mine)
        theirs = [tvm.runtime.tensor(a.copy()) for a in arrays]
        ex[name](*theirs)
        same = all(np.allclose(a, t.numpy(), rtol=1e-4, atol=1e-4) for a, t in
                   zip(mine, theirs))
        args = [tvm.runtime.tensor(a) for a in arrays]
        fn = ex[name]
        clock = time.thread_time if threads == 1 else time.perf_counter
        t = {"need": [], "alt": [], "tvm": []}
        for _ in range(rounds):
            t["need"].append(need.time(*arrays, threads=threads, repeat=3, min_seconds=0.05,
                                       clock=clock))
            t["alt"].append(alt.time(*arrays, threads=threads, repeat=3, min_seconds=0.05,
                                     clock=clock))
            t["tvm"].append(host.per_call(lambda: fn(*args), clock, repeat=3, min_seconds=0.05))
        out["kernels"][name] = {k: float(np.median(v)) for k, v in t.items()}
        out["kernels"][name]["same"] = bool(same)
    rng = np.random.default_rng(0)
    A = rng.standard_normal((NUMPY_N, NUMPY_N), dtype=np.float32)
    B = rng.standard_normal((NUMPY_N, NUMPY_N), dtype=np.float32)
    out["numpy"] = float(np.median([host.per_call(lambda: A @ B, clock, repeat=3, min_seconds=0.05)
                                    for _ in range(rounds)]))
    return out


def run_child(threads: int, rounds: int) -> dict:
    env = dict(os.environ, TVM_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads),
               OMP_NUM_THREADS=str(threads))
    res = subprocess.run([sys.executable, __file__, "--child", str(threads), "--rounds",
                          str(rounds)], env=env, capture_output=True, text=True, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


# ---- report -------------------------------------------------------------------------------
def compile_table(comp) -> list:
    """The compile-time tables (lines of markdown)."""
    ms = lambda s: f"{1e3 * s:.0f}"  # noqa: E731
    out = ["## Compile time (in-process, median CPU ms; wall ms in brackets)", "",
           "| kernel | scheduled | pipeline chosen | tirkit | tirkit, the other pipeline | "
           "TVM `tvm.compile` | tirkit / TVM |", "|---|---|---|---|---|---|---|"]
    for path, name, scheduled in KERNELS:
        c = comp[name]
        out.append(f"| `{name}` | {'yes' if scheduled else 'no'} | {c['pipeline']} | "
                   f"{ms(c['need'][0])} ({ms(c['need'][1])}) | {ms(c['alt'][0])} "
                   f"({ms(c['alt'][1])}) | {ms(c['tvm'][0])} ({ms(c['tvm'][1])}) | "
                   f"{c['need'][0] / c['tvm'][0]:.2f} |")
    out += ["", "Where tirkit's compile time goes (median CPU ms, pipeline chosen; the rest "
            "of a build is checks and the structural hash):", "",
            "| kernel | lowering passes | LLVM IR generation | LLVM optimize + emit | load |",
            "|---|---|---|---|---|"]
    for path, name, _ in KERNELS:
        ph = comp[name]["phases"]
        out.append(f"| `{name}` | {ms(ph['lower'])} | {ms(ph['ir'])} | {ms(ph['llvm'])} | "
                   f"{ms(ph['load'])} |")
    return out


def write(dest: Path, header, comp, runs, flops, peaks):
    gf = lambda fl, s: fl / s / 1e9  # noqa: E731
    out = ["# Code generator: tirkit vs TVM 0.27 vs numpy", "", *header,
           "GFLOP/s count 2 per multiply-add. TVM compiles the same script (tirx spelling) with "
           "`tvm.compile`, target `{\"kind\": \"llvm\", \"mcpu\": <host CPU>, \"mattr\": <host "
           "features>}`. The machine may be shared: compare the columns of one row (measured "
           "side by side), not separate runs.", "",
           *compile_table(comp)]
    out += ["", "## Run time (median GFLOP/s; share of this host's measured fp32 peak on as "
            "many threads)", ""]
    for r in runs:
        n = r["threads"]
        peak = peaks[n]
        out += [f"### {n} thread{'s' if n > 1 else ''} (peak {peak / 1e9:.1f} GFLOP/s; TVM "
                f"threads: {r['tvm_threads']}; timed in {r['clock']})", "",
                "| kernel | MFLOP | tirkit | share of peak | TVM | tirkit / TVM | "
                "tirkit, the other pipeline | its time / chosen time | same result as TVM |",
                "|---|---|---|---|---|---|---|---|---|"]
        for path, name, _ in KERNELS:
            k, fl = r["kernels"][name], flops[name]
            out.append(f"| `{name}` ({path.name}) | {fl / 1e6:.1f} | {gf(fl, k['need']):.1f} | "
                       f"{100 * fl / k['need'] / peak:.0f}% | {gf(fl, k['tvm']):.1f} | "
                       f"{k['tvm'] / k['need']:.2f} | {gf(fl, k['alt']):.1f} | "
                       f"{k['alt'] / k['need']:.2f} | {'yes' if k['same'] else 'NO'} |")
        out.append("")
    mm = [name for _, name, _ in KERNELS if name.startswith("matmul_1024")]
    fl = flops["matmul_1024"]
    out += ["## 1024³ fp32 matmul against numpy (OpenBLAS)", "",
            "`matmul_1024` keeps a 4 x 64 tile in registers (16 zmm: AVX-512); "
            "`matmul_1024_avx2` a 4 x 16 tile (8 ymm) with B packed per panel, for hosts "
            "without AVX-512. Ratios are tirkit / numpy in GFLOP/s.", "",
            "| threads | numpy GFLOP/s | " + " | ".join(f"`{m}` GFLOP/s | / numpy" for m in mm)
            + " | target ≥ 0.60 (best schedule) |",
            "|---|---|" + "---|---|" * len(mm) + "---|"]
    for r in runs:
        cells, best = [], 0.0
        for m in mm:
            ratio = r["numpy"] / r["kernels"][m]["need"]
            best = max(best, ratio)
            cells.append(f"{gf(fl, r['kernels'][m]['need']):.1f} | {ratio:.2f}")
        out.append(f"| {r['threads']} | {gf(fl, r['numpy']):.1f} | " + " | ".join(cells) +
                   f" | {'met' if best >= 0.6 else 'not met'} |")
    if len(runs) > 1:
        one, two = runs[0], runs[-1]
        n = two["threads"]
        scale = ", ".join(
            f"tirkit `{m}` {one['kernels'][m]['need'] / two['kernels'][m]['need']:.2f}x, TVM "
            f"{one['kernels'][m]['tvm'] / two['kernels'][m]['tvm']:.2f}x" for m in mm)
        out += ["", f"Scaling from 1 to {n} threads (GFLOP/s on {n} over GFLOP/s on 1): "
                f"{scale}, numpy {one['numpy'] / two['numpy']:.2f}x; the measured fp32 peak "
                f"scales {peaks[n] / peaks[1]:.2f}x. (The one-thread figures are CPU time, "
                f"the {n}-thread ones wall time: on a busy machine the ratio understates the "
                "scaling.)"]
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    out += ["", f"Load average at the end of the run: {load} (for {host.cores()} cores); "
            "wall-time figures on more than one thread mean little when it exceeds the "
            "number of cores.", ""]
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text("\n".join(out))
    print("\n".join(out))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5, help="interleaved timing rounds per kernel")
    ap.add_argument("--compile-repeat", type=int, default=7)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "codegen.md"))
    ap.add_argument("--compile-only", action="store_true",
                    help="only the compile-time tables, printed (no results file written)")
    ap.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child is not None:
        print(json.dumps(child(args.child, args.rounds)))
        return 0
    try:
        import tvm  # noqa: F401
    except ImportError:
        print("bench_codegen needs apache-tvm (pip install -e '.[oracle]')", file=sys.stderr)
        return 2
    if args.compile_only:
        print("\n".join(compile_table(compile_times(args.compile_repeat))))
        return 0
    from tirkit.codegen.llvm.peak import measure_peak
    header = host.header(ANCHORS)
    threads = sorted({1, host.cores()})
    peaks = {n: measure_peak(n).fp32 for n in threads}
    flops = {}
    for path, name, _ in KERNELS:
        _, module, func = load(path, name)
        low = lower(func, module)
        flops[name] = count_ops(low.body, callees=low.callees)[0]
    comp = compile_times(args.compile_repeat)
    runs = []
    for n in threads:
        runs.append(run_child(n, args.rounds))
        print(f"{n} threads:", json.dumps(runs[-1]), flush=True)
    write(Path(args.out), header, comp, runs, flops, peaks)
    return 0


if __name__ == "__main__":
    sys.exit(main())
