"""Every thread-bound kernel of the project on the GPU (pycuda), checked, then timed: a
markdown table to paste into BENCHMARKS.md.

    python3 benchmarks/gpu_check.py --out $OUT/gpu_check.md [--anchors $OUT/gpu_anchors.json]

The kernels are those the test suite finds (tests/codegen/gpu_corpus.py: the examples, the
benchmark kernels, tests/data/gpu, the kernel strings of the test files, and the shared
examples where ../shared is present).  Each is validated against the device's limits
(codegen/cuda/device.py), built with pycuda, run on random inputs and compared with the
thread interpreter on the CPU (the elements its sampled blocks write; the 4096^3 GEMMs with
numpy on the whole output), then timed (median of 20 launches after 3 warm-ups).  Kernels the
validation rejects (the tests' planted errors) and kernels the generator refuses are listed
with their codes.  With --anchors (benchmarks/gpu_anchors.py, cuBLAS through torch in the
same run) the GEMM rows get their share of cuBLAS.  Needs pycuda and a GPU:
benchmarks/gpu_check.sh builds pycuda on the GPU machine and runs both.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
for p in (ROOT / "language", ROOT / "tests" / "codegen"):
    sys.path.insert(0, str(p))

import tirkit  # noqa: E402
from tirkit.codegen.cuda.check import run_on_gpu  # noqa: E402
from tirkit.codegen.cuda.device import cuda_limits  # noqa: E402
from tirkit.codegen.cuda.runtime import available  # noqa: E402
from tirkit.codegen.flops import count_ops  # noqa: E402
from tirkit.diagnostics import TirkitError  # noqa: E402


def _mm(A, B, C):
    return A.astype(np.float64) @ B.astype(np.float64), 2


# kernels too large for the thread interpreter: checked against numpy on the whole output
NUMPY = {"gpu_gemm_4096": _mm, "gpu_wmma_gemm_4096": _mm, "gpu_matmul": _mm}
# kernel -> the cuBLAS anchor it is compared with (gpu_anchors.json key)
ANCHOR = {"gpu_gemm_4096": "float32", "gpu_wmma_gemm_4096": "float16"}

OVER_LIMIT = '''from tvm.script import tir as T


@T.prim_func
def too_many_threads(A: T.Buffer((4096,), "float32"), B: T.Buffer((4096,), "float32")):
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        for tx in T.thread_binding(2048, thread="threadIdx.x"):
            B[bx * 2048 + tx] = A[bx * 2048 + tx]
'''


def kernels():
    from gpu_corpus import thread_bound_kernels
    return thread_bound_kernels()


def _errors(k, target):
    return sorted({d.code for d in tirkit.check(k.text, str(k.path), target=target)
                   if d.severity == "error"})


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "gpu_check.md"))
    ap.add_argument("--anchors", default=None, help="gpu_anchors.json of the same run")
    ap.add_argument("--blocks", type=int, default=2, help="blocks sampled per dimension for "
                    "the CPU check of large grids")
    ap.add_argument("--dry-run", action="store_true", help="without a GPU: everything but "
                    "pycuda (validation, code generation, the table's rows)")
    args = ap.parse_args(argv)
    why = available()
    if why and not args.dry_run:
        print(f"gpu_check: {why}", file=sys.stderr)
        return 2
    target = cuda_limits()
    if args.dry_run:
        dev_name, cc = "no GPU: dry run", (0, 0)
    else:
        from tirkit.codegen.cuda.runtime import current_device
        dev = current_device()
        dev_name, cc = dev.name(), dev.compute_capability()
    anchors = {}
    if args.anchors and Path(args.anchors).exists():
        anchors = json.loads(Path(args.anchors).read_text())
    rows, skipped, failed = [], [], 0
    for k in kernels():
        label = f"{k.path.name}:{k.name}" + (f" (line {k.func.span.line})" if k.in_string
                                              and k.func.span else "")
        errs = _errors(k, target)
        if errs:
            skipped.append((label, "invalid: " + ", ".join(errs)))
            continue
        row = {"kernel": label}
        try:
            if args.dry_run:
                from tirkit.codegen.cuda import emit_cuda
                emit_cuda(k.func, k.module)
                row["match"] = "(dry run)"
                rows.append(row)
                continue
            t0 = time.perf_counter()
            r = run_on_gpu(k.func, k.module, np.random.default_rng(0), blocks=args.blocks,
                           reference=NUMPY.get(k.name))
            row["compile_s"] = r.kernel.compile_seconds
            row["check_s"] = time.perf_counter() - t0
            row["match"] = ("ok" if r.ok else f"MISMATCH ({r.worst:.2e})") + \
                (" (numpy)" if k.name in NUMPY else f" ({r.checked} el.)")
            failed += not r.ok
            sec = r.kernel.time(*r.arrays, scalars=r.scalars)
            from tirkit.codegen.cuda import lower_gpu
            low = lower_gpu(k.func, k.module)
            flops, iops = count_ops(low.body, callees=low.callees)
            row["ms"] = sec * 1e3
            row["tflops"] = (flops or iops) / sec / 1e12
            a = anchors.get(ANCHOR.get(k.name, ""), {})
            if a:
                row["cublas"] = f"{100 * row['tflops'] / a['tflops']:.0f}% of " \
                                f"{a['tflops']:.1f}"
        except TirkitError as e:
            codes = sorted({d.code for d in e.diagnostics})
            if k.in_string or k.path.parent.name == "gpu":
                skipped.append((label, "refused: " + ", ".join(codes)))
                continue
            row["match"] = "REFUSED " + ", ".join(codes)
            failed += 1
        except Exception as e:          # one failing kernel must not hide the others
            row["match"] = f"ERROR {type(e).__name__}: {str(e)[:120]}"
            failed += 1
        rows.append(row)
        print(row, flush=True)
    # validation with the device's limits: a launch over them is flagged
    over = [d for d in tirkit.check(OVER_LIMIT, "over_limit.py", target=target)
            if d.severity == "error"]
    limit_ok = [d.code for d in over] == ["thread/launch-limit"]
    failed += not limit_ok
    lines = [f"# GPU check ({dev_name}, sm_{''.join(map(str, cc))})", "",
             "Each kernel validated against the device's limits, run through pycuda on random "
             "inputs and compared with the thread interpreter on the CPU (the elements its "
             "sampled blocks write; the large GEMMs with numpy); median of 20 launches after 3 "
             "warm-ups; compile time of pycuda's SourceModule (nvcc).", "",
             "| kernel | matches | time (ms) | TFLOP/s | of cuBLAS (TFLOP/s) | compile (s) |",
             "| --- | --- | ---: | ---: | ---: | ---: |"]
    for r in rows:
        lines.append(f"| {r['kernel']} | {r['match']} | {r.get('ms', float('nan')):.4f} | "
                     f"{r.get('tflops', float('nan')):.2f} | {r.get('cublas', '')} | "
                     f"{r.get('compile_s', float('nan')):.2f} |")
    if anchors.get("float32"):
        lines += ["", f"cuBLAS anchors (torch, same run, GEMM {anchors['n']}^3): " + ", ".join(
            f"{t} {anchors[t]['ms']:.3f} ms = {anchors[t]['tflops']:.1f} TFLOP/s"
            for t in ("float32", "float16", "bfloat16") if t in anchors) + " (fp32: TF32 off)."]
    lines += ["", f"Device limits ({target.name}: {target.description}; "
              f"{target.max_threads_per_block} threads per block, shared memory "
              f"{target.shared_static} / {target.shared_optin} bytes with opt-in): a kernel of "
              f"2048 threads per block is flagged {', '.join(d.code for d in over) or 'NOT'}"
              f"{' (line ' + str(over[0].span.line) + ')' if over else ''}."]
    if skipped:
        lines += ["", "Not run: " + "; ".join(f"{a} ({b})" for a, b in skipped) + "."]
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(f"wrote {args.out}; {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
