"""Where a benchmark ran: the header every results file in benchmarks/results/ starts with.

    python benchmarks/host.py          # prints the header for this host (about 1 s)

    import host                        # from a script in benchmarks/
    lines = host.header({"TVM 0.27": "TVM_NUM_THREADS=1 and =2, one process each"})
    seconds = host.per_call(lambda: A @ B)     # median seconds per call, as Kernel.time times

The header gives the command that wrote the file, the date, the CPU as LLVM sees it (name and
the features that decide the code: AVX2/FMA, AVX-512, VNNI, BF16), the measured compute peak
of this host (tirkit.codegen.llvm.peak: an FMA loop and an int8 dot-product loop compiled for
these features, on one thread and on every core), the load average, the versions that matter,
and the thread settings of every anchor the benchmark measures against.  Figures from two
hosts are comparable only through their peaks: a host LLVM calls `znver4` may have AVX-512
turned off, another of the same kind may be `znver5` with twice the zmm FMA rate.
"""
from __future__ import annotations

import datetime
import importlib.metadata
import os
import platform
import shlex
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT / "language") not in sys.path:
    sys.path.insert(0, str(ROOT / "language"))

FEATURE_NAMES = [("avx2", "AVX2"), ("fma", "FMA"), ("avx512f", "AVX-512F"),
                 ("avx512vnni", "AVX-512 VNNI"), ("avxvnni", "AVX-VNNI"),
                 ("avx512bf16", "AVX-512 BF16"), ("amx-int8", "AMX")]
THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "TVM_NUM_THREADS")


def per_call(call, clock=time.perf_counter, repeat: int = 15, min_seconds: float = 0.2) -> float:
    """Median seconds per call over `repeat` measurements of enough calls each to last about
    `min_seconds` together (after one warm-up call), as `Kernel.time` times tirkit's kernels;
    every anchor of a benchmark is timed by this one loop."""
    call()
    t0 = clock()
    call()
    number = max(1, int(min_seconds / repeat / max(clock() - t0, 1e-7)))
    times = []
    for _ in range(repeat):
        t0 = clock()
        for _ in range(number):
            call()
        times.append((clock() - t0) / number)
    return float(statistics.median(times))


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def blas() -> str:
    """numpy's BLAS as numpy reports it (name, version and build configuration)."""
    try:
        import numpy as np
        info = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        conf = info.get("openblas configuration")
        return f"{info.get('name')} {info.get('version')}" + (f" (`{conf}`)" if conf else "")
    except Exception:                   # a numpy that reports nothing: say so, do not fail
        return "unknown"


def cpu_line() -> str:
    try:
        from tirkit.codegen.llvm.engine import host_cpu
    except ImportError:             # llvmlite is the `run` extra
        return f"CPU not read: llvmlite is not installed (pip install -e '.[run]'); " \
               f"{cores()} cores for this process, {platform.machine()}"
    from tirkit.codegen.llvm.peak import enabled_features
    name, features = host_cpu()
    feats = enabled_features(features)
    flags = ", ".join(f"{label} {'on' if key in feats else 'off'}" for key, label in FEATURE_NAMES)
    return f"CPU as LLVM sees it: `{name}` ({flags}); {cores()} cores for this process, " \
           f"{platform.machine()}"


def peak_line() -> str:
    try:
        from tirkit.codegen.llvm.peak import measure_peak
    except ImportError:
        return "Peak not measured: llvmlite is not installed"
    one = measure_peak(1)
    line = f"Measured peak (`benchmarks/host.py`, best of short runs in CPU time): {one.describe()}"
    n = cores()
    if n > 1:
        many = measure_peak(n)
        line += f"; fp32 {many.fp32 / 1e9:.1f} GFLOP/s"
        if many.int8 is not None:
            line += f", int8 {many.int8 / 1e9:.1f} GOP/s"
        line += f" on {n} threads"
    return line


def thread_lines(anchors: dict | None) -> list:
    env = ", ".join(f"{v}={os.environ[v]}" if v in os.environ else f"{v} unset"
                    for v in THREAD_VARIABLES)
    lines = [f"- Thread settings in the environment at the start: {env}."]
    if anchors:
        lines.append("- Threads of each anchor, as this benchmark sets them:")
        lines += [f"  - {name}: {setting}" for name, setting in anchors.items()]
    return lines


def header(anchors: dict | None = None, command: str | None = None) -> list:
    """Markdown lines describing this run's host; `anchors` maps each anchor the benchmark
    measures against to its thread setting, in words."""
    if command is None:
        script = Path(sys.argv[0])
        try:
            script = script.resolve().relative_to(ROOT)
        except ValueError:
            pass
        command = "python " + " ".join(shlex.quote(a) for a in [str(script), *sys.argv[1:]])
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    versions = [f"Python {platform.python_version()}"]
    for dist in ("numpy", "llvmlite", "apache-tvm"):
        v = _version(dist)
        if v:
            versions.append(f"{dist} {v}")
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "-"
    return [f"Run: `{command}`, {when}; load average {load} (1, 5, 15 minutes).",
            "",
            f"- {cpu_line()}.",
            f"- {peak_line()}.",
            f"- {', '.join(versions)}; numpy's BLAS: {blas()}.",
            *thread_lines(anchors),
            ""]


if __name__ == "__main__":
    print("\n".join(header(command="python benchmarks/host.py")))
