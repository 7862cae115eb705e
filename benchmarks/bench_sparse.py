"""CSR SpMV (and SpMM) written in the sparse spelling, compiled by tirkit, against
scipy.sparse in the same run, one thread.

    .venv/bin/python benchmarks/bench_sparse.py      # writes benchmarks/results/sparse.md

scipy's `A @ x` runs single-threaded; tirkit's kernel is timed with `threads=1`.  Each figure
is the median of 15 measurements; the ratio is scipy's time over tirkit's (above 1: faster)."""
from __future__ import annotations

import os
import pathlib
import platform
import statistics
import sys

import numpy as np
import scipy
import scipy.sparse as sp

import host
import tirkit
from tirkit.codegen import build
from tirkit.sparse.inputs import sparse_inputs
from tirkit.sparse.lower import lower_sparse

HERE = pathlib.Path(__file__).resolve().parent
EX = HERE.parent / "examples" / "sparse"
REPEAT = 15


def _case(name, shape, density, feat=None, seed=0):
    f = tirkit.parse((EX / name).read_text()).module.functions[0][1]
    low = lower_sparse(f)
    m, n = shape
    rng = np.random.default_rng(seed)
    A = sp.random(m, n, density, "csr", random_state=rng, dtype=np.float32)
    A.data += 0.5
    sizes = {"m": m, "n": n}
    if feat:
        sizes["feat_size"] = feat
    arrays, scalars, _ = sparse_inputs(f, low, rng, sizes, density,
                                       {"J": (A.indptr, A.indices)})
    names = [low.buffer_of(p).name for p in low.params if low.buffer_of(p) is not None]
    by = dict(zip(names, arrays))
    by["A"][:] = A.data
    kernel = build(low)
    dense_in = by["X"] if "X" in by else by["B"]
    out = by["Y"] if "Y" in by else by["C"]
    kernel(*arrays, scalars=scalars, threads=1)
    want = A @ dense_in
    err = float(np.max(np.abs(out - want)) / max(np.max(np.abs(want)), 1e-30))
    t_tirkit = kernel.time(*arrays, scalars=scalars, threads=1, repeat=REPEAT)
    t_scipy = host.per_call(lambda: A @ dense_in, repeat=REPEAT)
    return {"kernel": name[:-3], "shape": f"{m}x{n}" + (f", K={feat}" if feat else ""),
            "density": density, "nnz": A.nnz, "tirkit_ms": t_tirkit * 1e3,
            "scipy_ms": t_scipy * 1e3, "ratio": t_scipy / t_tirkit, "rel_err": err}


CASES = [
    ("spmv.py", (20000, 20000), 0.0005, None),
    ("spmv.py", (20000, 20000), 0.005, None),
    ("spmv.py", (4000, 4000), 0.05, None),
    ("spmm.py", (4000, 4000), 0.005, 32),
]


def main():
    rows = [_case(*c) for c in CASES]
    lines = ["# Sparse kernels: tirkit against scipy.sparse (one thread, same run)", "",
             f"Machine: {platform.processor() or platform.machine()}, "
             f"{os.cpu_count()} logical CPUs; Python {sys.version.split()[0]}, "
             f"numpy {np.__version__}, scipy {scipy.__version__}.", "",
             "Produced by `python benchmarks/bench_sparse.py`. Times are medians of "
             f"{REPEAT} measurements; ratio = scipy time / tirkit time (>= 1: tirkit as fast "
             "or faster). The kernels are `examples/sparse/*.py` lowered by "
             "`tirkit.sparse.lower`; results checked against scipy (relative error).", "",
             "| kernel | shape | density | nnz | tirkit ms | scipy ms | ratio | rel err |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        lines.append(f"| {r['kernel']} | {r['shape']} | {r['density']} | {r['nnz']} | "
                     f"{r['tirkit_ms']:.3f} | {r['scipy_ms']:.3f} | {r['ratio']:.2f} | "
                     f"{r['rel_err']:.1e} |")
    spmv = [r["ratio"] for r in rows if r["kernel"] == "spmv"]
    lines += ["", f"CSR SpMV, median ratio over the SpMV rows: {statistics.median(spmv):.2f}x "
              "scipy.sparse (target: at least 0.8x)."]
    text = "\n".join(lines) + "\n"
    out = HERE / "results" / "sparse.md"
    out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
