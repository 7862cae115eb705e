"""Every thread-bound kernel of the examples on the GPU (pycuda), checked against the thread
interpreter on the CPU, then timed: a markdown table.

    python benchmarks/gpu_check.py --out benchmarks/results/gpu_check.md

Needs pycuda and a GPU (benchmarks/gpu_check.sh builds pycuda on the GPU machine).  Large
kernels are checked on a sample of thread blocks (the elements those blocks write).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "language"))

from tirkit.codegen.cli import compare, make_inputs, make_scalars  # noqa: E402
from tirkit.codegen.cuda import is_thread_bound  # noqa: E402
from tirkit.codegen.cuda.runtime import available, build_cuda  # noqa: E402
from tirkit.codegen.cuda.threads import run_threads  # noqa: E402
from tirkit.codegen.flops import count_ops  # noqa: E402
from tirkit.script.parse import parse  # noqa: E402

FILES = sorted((ROOT / "examples").glob("*.py")) + \
    sorted((ROOT / "benchmarks" / "gpu_kernels").glob("*.py")) + \
    sorted((ROOT.parent / "shared" / "examples" / "valid").glob("*.py"))
# kernels too large for the thread interpreter: checked against numpy on the whole output
NUMPY = {"gpu_gemm_4096": lambda A, B, C: (A.astype(np.float64) @ B, 2),
         "gpu_matmul": lambda A, B, C: (A.astype(np.float64) @ B, 2)}


def kernels(files):
    for path in files:
        r = parse(path.read_bytes(), str(path))
        for name, f in r.module.prim_funcs():
            if is_thread_bound(f):
                yield path, name, f, r.module


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "gpu_check.md"))
    ap.add_argument("--blocks", type=int, default=2, help="blocks sampled per dimension for "
                    "the CPU check of large kernels")
    ap.add_argument("files", nargs="*")
    args = ap.parse_args(argv)
    why = available()
    if why:
        print(f"gpu_check: {why}", file=sys.stderr)
        return 2
    import pycuda.driver as drv
    dev = drv.Context.get_device()
    rows, failed = [], 0
    files = [Path(f) for f in args.files] or FILES
    for path, name, f, module in kernels(files):
        rng = np.random.default_rng(0)
        arrays = make_inputs(f, rng)
        scalars = make_scalars(f, rng)
        ref = [a.copy() for a in arrays]
        row = {"kernel": f"{path.name}:{name}"}
        try:
            k = build_cuda(f, module)
            row["compile_s"] = k.compile_seconds
            k(*arrays, scalars=scalars)
            t0 = time.perf_counter()
            ok, worst = True, 0.0
            if name in NUMPY:
                want, i = NUMPY[name](*ref)
                ok, worst = compare(arrays[i], want.astype(arrays[i].dtype), k.buffers[i].dtype)
            else:
                it = run_threads(f, ref, scalars, module=module, blocks=args.blocks)
                for b, out, want in zip(k.buffers, arrays, ref):
                    mask = it.written_mask(want)
                    if mask is None or not mask.any():
                        continue
                    good, err = compare(out[mask], want[mask], b.dtype)
                    ok, worst = ok and good, max(worst, err)
            row["cpu_s"] = time.perf_counter() - t0
            row["match"] = "ok" if ok else f"MISMATCH ({worst:.2e})"
            failed += not ok
            sec = k.time(*arrays, scalars=scalars)
            flops = count_ops(f.body)[0]
            row["ms"] = sec * 1e3
            row["tflops"] = flops / sec / 1e12 if flops else 0.0
        except Exception as e:          # one failing kernel must not hide the others
            row["match"] = f"ERROR {type(e).__name__}: {str(e)[:120]}"
            failed += 1
        rows.append(row)
        print(row, flush=True)
    lines = [f"# GPU check ({dev.name()}, sm_{''.join(map(str, dev.compute_capability()))})",
             "", "Each kernel run through pycuda on random inputs and compared with the thread "
             "interpreter on the CPU (elements written by the sampled blocks; the large GEMMs with "
             "numpy); median of 20 "
             "launches after 3 warm-ups.", "",
             "| kernel | matches | time (ms) | TFLOP/s | compile (s) |",
             "| --- | --- | ---: | ---: | ---: |"]
    for r in rows:
        lines.append(f"| {r['kernel']} | {r['match']} | {r.get('ms', float('nan')):.4f} | "
                     f"{r.get('tflops', float('nan')):.2f} | {r.get('compile_s', float('nan')):.2f} |")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text("\n".join(lines) + "\n")
    print(f"wrote {args.out}; {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
