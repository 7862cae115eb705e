"""Parallel loops on the native thread pool (codegen/llvm/pool.py), against the same kernels on
one thread and on a Python thread pool, in the same run.

    .venv/bin/python benchmarks/bench_pool.py        # writes benchmarks/results/pool.md

The anchor is the way parallel loops ran before the native pool: each launch calls back into
Python (a ctypes callback), which hands the chunks to a `concurrent.futures` executor and
runs its own chunk as a ctypes call. Every kernel is called through its entry point with its
arguments packed once (as `Kernel.time` does), so the figures are the kernel and its
launches only. Each figure is the median of 15 wall-clock measurements of at least ~13 ms.
"""
from __future__ import annotations

import ctypes
import pathlib
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np

import host
import tirkit
from tirkit.codegen import build
from tirkit.codegen.cli import make_inputs
from tirkit.codegen.runtime import pool

HERE = pathlib.Path(__file__).resolve().parent
REPEAT = 15
HEAD = "from tvm.script import tir as T\n\n\n"

KERNELS = {
    "launch only (T.parallel(2), one store each)": '''@T.prim_func
def launch(A: T.Buffer((2,), "float32"), B: T.Buffer((2,), "float32")):
    for i in T.parallel(2):
        with T.block("B"):
            vi = T.axis.spatial(2, i)
            B[vi] = A[vi]
''',
    "max pool 2x2, 32x16 output": '''@T.prim_func
def pool_max(A: T.Buffer((64, 32), "float32"), B: T.Buffer((32, 16), "float32")):
    for i in T.parallel(32):
        for j, di, dj in T.grid(16, 2, 2):
            with T.block("B"):
                vi, vj, vdi, vdj = T.axis.remap("SSRR", [i, j, di, dj])
                with T.init():
                    B[vi, vj] = T.float32(-3.4e38)
                B[vi, vj] = T.max(B[vi, vj], A[vi * 2 + vdi, vj * 2 + vdj])
''',
    "elementwise 1000x64": '''@T.prim_func
def scale(A: T.Buffer((1000, 64), "float32"), B: T.Buffer((1000, 64), "float32")):
    for i in T.parallel(1000):
        for j in T.vectorized(64):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * T.float32(2) + T.float32(1)
''',
    "row sums 512x512, 8 parallel loops in a row": '''@T.prim_func
def rowsums(A: T.Buffer((8, 512, 512), "float32"), S: T.Buffer((8, 512), "float32")):
    for t in range(8):
        for i in T.parallel(512):
            for k in range(512):
                with T.block("S"):
                    vt, vi, vk = T.axis.remap("SSR", [t, i, k])
                    with T.init():
                        S[vt, vi] = T.float32(0)
                    S[vt, vi] = S[vt, vi] + A[vt, vi, vk]
''',
    "matmul 256x256x256": '''@T.prim_func
def mm(A: T.Buffer((256, 256), "float32"), B: T.Buffer((256, 256), "float32"),
       C: T.Buffer((256, 256), "float32")):
    for i in T.parallel(256):
        for k in range(256):
            for j in T.vectorized(256):
                with T.block("C"):
                    vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                    with T.init():
                        C[vi, vj] = T.float32(0)
                    C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
''',
}

_LAUNCH = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)
_CHUNK = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)


class PythonPool:
    """The anchor: chunks of a launch handed to a Python executor from a ctypes callback."""

    def __init__(self, threads):
        self.threads = threads
        self.executor = ThreadPoolExecutor(threads - 1)
        self.callback = _LAUNCH(self._launch)
        self.launch = ctypes.cast(self.callback, ctypes.c_void_p).value

    def _launch(self, fn_addr, closure, n):
        fn = _CHUNK(fn_addr)
        k = min(self.threads, n)
        bounds = [n * i // k for i in range(k + 1)]
        futs = [self.executor.submit(fn, closure, bounds[i], bounds[i + 1]) for i in range(1, k)]
        fn(closure, bounds[0], bounds[1])
        for f in futs:
            f.result()


def caller(kernel, arrays, launch):
    ptrs, svals = kernel.pack(arrays)
    slot = (ctypes.c_uint64 * 2)()
    res = ctypes.addressof(slot)

    def call():
        kernel.entry(ptrs, svals, launch, res)
    return call


def main():
    threads = host.cores()
    anchor = PythonPool(max(2, threads))
    launches = {"one": pool(1).launch, "native": pool(threads).launch, "python": anchor.launch}
    rows = []
    for label, src in KERNELS.items():
        module = tirkit.parse(HEAD + src).module
        func = module.prim_funcs()[0][1]
        kernel = build(func, module)
        arrays = make_inputs(func, np.random.default_rng(0))
        outs = {}
        for name, launch in launches.items():
            fresh = [a.copy() for a in arrays]
            caller(kernel, fresh, launch)()
            outs[name] = fresh
        for a, b, c in zip(outs["one"], outs["native"], outs["python"]):
            assert np.array_equal(a, b) and np.array_equal(a, c), label
        t = {name: host.per_call(caller(kernel, arrays, launch), repeat=REPEAT)
             for name, launch in launches.items()}
        rows.append((label, t))
        print(f"{label}: one thread {t['one'] * 1e6:.2f} us, native pool "
              f"{t['native'] * 1e6:.2f} us, Python pool {t['python'] * 1e6:.2f} us", flush=True)
    lines = host.header({"tirkit": f"native pool of {threads} threads; one thread; a Python "
                         f"executor pool of {max(2, threads)} threads (the anchor)"})
    lines += ["", "## Parallel loops: native pool vs a Python thread pool", "",
              f"Median wall time per call ({REPEAT} measurements), the same compiled kernel "
              "each time, only its `launch` differs; outputs of the three agree exactly.", "",
              "| kernel | one thread | native pool | Python pool (anchor) | Python / native "
              "| one thread / native |", "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for label, t in rows:
        lines.append(f"| {label} | {t['one'] * 1e6:.2f} us | {t['native'] * 1e6:.2f} us | "
                     f"{t['python'] * 1e6:.2f} us | {t['python'] / t['native']:.1f}x | "
                     f"{t['one'] / t['native']:.2f}x |")
    out = HERE / "results" / "pool.md"
    out.write_text("\n".join(lines) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    sys.exit(main())
