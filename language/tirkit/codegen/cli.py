"""`tirkit run FILE [--func NAME] [--check]` and `tirkit bench FILE [--func NAME] [--threads N]`.

Inputs (buffers and scalar parameters) are random (seeded) and never zero; `--check` compares
every buffer with the reference interpreter (exact for integers, relative error under 1e-5 for
float32).  A kernel that returns a value (`T.ret`) prints it, and `--check` compares it too.

`run` compiles each kernel with bounds-checked accesses (llvm/checks.py): an access outside
its buffer ends the run with `bounds/out-of-bounds` at that access, where unchecked code
would corrupt memory or crash.  `bench` times the unchecked code, after one checked run on
the same inputs.
"""
from __future__ import annotations

import dataclasses
import sys

import numpy as np

from ..diagnostics import TirkitError, render_text
from ..extras import missing
from ..ir import expr as E
from ..ir.dtype import parse_dtype
from .inputs import (ALIGNMENT, aligned_copy, allocations, kernel_inputs,  # noqa: F401
                     make_inputs, make_scalars, random_array, shape_values)
from .selection import selected_kernels

TOLERANCE = {("float", 16): 2e-3, ("bfloat", 16): 2e-2, ("float", 32): 1e-5,
             ("float", 64): 1e-12}


def add_commands(sub):
    r = sub.add_parser("run", help="compile kernels for this CPU and run them on random inputs")
    r.add_argument("file")
    r.add_argument("--func", default=None, help="the kernel to run (default: all)")
    r.add_argument("--check", action="store_true",
                   help="compare the outputs with the reference interpreter")
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--threads", type=int, default=None)
    r.add_argument("--size", action="append", default=[], metavar="VAR=N",
                   help="value of a symbolic shape variable (default 16)")
    r.add_argument("--blocks", type=int, default=None, metavar="N",
                   help="thread-bound kernels on the CPU: run N evenly spread thread blocks "
                   "per blockIdx dimension (default: all of a grid of up to 64 blocks, else 2)")
    r.add_argument("--target", default="cpu", choices=["cpu", "cuda"],
                   help="cuda: thread-bound kernels on the GPU through pycuda (where none "
                   "runs, in the thread interpreter)")
    r.set_defaults(fn=cmd_run)
    b = sub.add_parser("bench", help="time compiled kernels: median time, GFLOP/s, share of peak")
    b.add_argument("file")
    b.add_argument("--func", default=None)
    b.add_argument("--threads", type=int, default=None)
    b.add_argument("--repeat", type=int, default=10)
    b.add_argument("--seed", type=int, default=0)
    b.add_argument("--size", action="append", default=[], metavar="VAR=N")
    b.add_argument("--peak", type=float, default=None, metavar="GFLOPS",
                   help="fp32 peak of one core in GFLOP/s (default: measured on this host by "
                        "an FMA loop compiled for its features)")
    b.add_argument("--target", default="cpu", choices=["cpu", "cuda"],
                   help="cuda: time thread-bound kernels on the GPU (pycuda)")
    b.set_defaults(fn=cmd_bench)
    from .cuda.cli import add_commands as add_cuda_commands
    add_cuda_commands(sub)


# ---- inputs ------------------------------------------------------------------------------
def compare(out, ref, dtype):
    """(ok, error) : exact for integers and bool, relative max error for floats."""
    d = parse_dtype(dtype)
    if not d.is_float:
        bad = int(np.count_nonzero(out != ref))
        return bad == 0, float(bad)
    a, b = out.astype(np.float64), ref.astype(np.float64)
    if np.isnan(a).any() or np.isnan(b).any():
        same = np.array_equal(np.isnan(a), np.isnan(b))
        a, b = np.nan_to_num(a), np.nan_to_num(b)
        if not same:
            return False, float("nan")
    inf = np.isinf(a) | np.isinf(b)
    if inf.any():                       # infinities match exactly, or not at all
        if not np.array_equal(a[inf], b[inf]):
            return False, float("inf")
        a, b = np.where(inf, 0.0, a), np.where(inf, 0.0, b)
    scale = max(float(np.max(np.abs(b))) if b.size else 0.0, 1e-30)
    err = float(np.max(np.abs(a - b))) / scale if a.size else 0.0
    return err < TOLERANCE.get((d.kind, d.bits), 1e-5), err


# ---- commands ----------------------------------------------------------------------------
def parse_sizes(items):
    out = {}
    for it in items:
        k, _, v = it.partition("=")
        out[k.strip()] = int(v)
    return out


def report_error(path, text, err: TirkitError):
    for d in err.diagnostics:
        print(render_text(path, text, d), file=sys.stderr)


def cmd_run(args) -> int:
    status = None if args.target == "cuda" else missing("run", "llvmlite", "run")
    if status is not None:
        return status
    from . import build
    from .interp import run_reference
    loaded = selected_kernels(args, "run")
    if isinstance(loaded, int):
        return loaded
    module, text, funcs, status = loaded
    from .cuda.cli import run_on_cpu_threads
    for name, func in funcs:
        rng = np.random.default_rng(args.seed)
        try:
            gpu = run_on_cpu_threads(args, name, func, module, text, rng)
            if gpu is not None:         # a thread-bound kernel: no CPU build
                status = max(status, gpu)
                continue
            func, arrays, scalars = kernel_inputs(func, rng, parse_sizes(args.size))
            kernel = build(func, module, checked=True)
            ref = [a.copy() for a in arrays]
            if args.check:      # the reference first: it stops on out-of-bounds accesses
                ref_value = run_reference(func, ref, scalars, module=module)
            import time
            t0 = time.perf_counter()
            value = kernel(*arrays, scalars=scalars, threads=args.threads)
            ms = (time.perf_counter() - t0) * 1e3
            how = "cached" if kernel.from_cache else f"compiled in {kernel.compile_seconds:.3f} s"
            print(f"{name}: ran in {ms:.3f} ms ({how})")
            if scalars:
                names = [p.name for p in func.params
                         if func.buffer_of(p) is None and p.dtype != "handle"]
                print("  scalars: " + ", ".join(f"{n}={v}" for n, v in zip(names, scalars)))
            if kernel.ret_dtype is not None:
                line = f"  returned: {_show(value)} ({kernel.ret_dtype})"
                if args.check:
                    ok = _same_value(value, ref_value, kernel.ret_dtype)
                    line += ": ok" if ok else f": MISMATCH (reference {_show(ref_value)})"
                    status = status if ok else 1
                print(line)
            if args.check:
                for b, out, r in zip(kernel.buffers, arrays, ref):
                    ok, err = compare(out, r, b.dtype)
                    kind = "mismatches" if not parse_dtype(b.dtype).is_float else "rel err"
                    print(f"  {b.name}: {'ok' if ok else 'MISMATCH'} ({kind} {err:.3g})")
                    if not ok:
                        status = 1
        except TirkitError as e:
            report_error(args.file, text, e)
            status = 1
        except Exception as e:                      # a bug: one line, never a traceback
            _internal(args.file, name, e)
            status = 1
    return status


def _show(v):
    return "nothing" if v is None else str(v)


def _same_value(a, b, dtype):
    if a is None or b is None:
        return a is None and b is None
    return compare(np.array([a]), np.array([b]), dtype)[0]


def _internal(path, name, e):
    print(f"{path}: kernel '{name}': internal error in the code generator "
          f"({type(e).__name__}: {e}); please report it with this file", file=sys.stderr)


def _fp32_peak(given, threads):
    """(FLOP/s on `threads` threads, "given" or "measured"): the user's per-core figure times
    the threads, or this host's peak measured on that many threads."""
    if given is not None:
        return given * 1e9 * threads, "given"
    from .llvm.peak import measure_peak
    return measure_peak(threads).fp32, "measured"


def _has_parallel_loop(body) -> bool:
    from ..ir import stmt as S
    from ..ir.visit import walk
    found = []
    walk(body, lambda x: found.append(1) if isinstance(x, S.For) and x.kind == "parallel"
         else None)
    return bool(found)


def cmd_bench(args) -> int:
    status = None if args.target == "cuda" else missing("bench", "llvmlite", "run")
    if status is not None:
        return status
    from . import build
    from .flops import count_ops
    from .passes import lower
    from .runtime import cpu_count
    loaded = selected_kernels(args, "timed")
    if isinstance(loaded, int):
        return loaded
    module, text, funcs, status = loaded
    threads = args.threads or cpu_count()
    for name, func in funcs:
        rng = np.random.default_rng(args.seed)
        if args.target == "cuda":
            from .cuda.cli import bench_on_gpu
            status = max(status, bench_on_gpu(args, name, func, module, text, rng))
            continue
        try:
            func, arrays, scalars = kernel_inputs(func, rng, parse_sizes(args.size))
            build(func, module, checked=True)(*[a.copy() for a in arrays], scalars=scalars,
                                              threads=threads)
            kernel = build(func, module)
            sec = kernel.time(*arrays, scalars=scalars, threads=threads,
                              repeat=args.repeat)
            env = {}
            for b, a in zip(kernel.buffers, arrays):
                for d, s in enumerate(b.shape):
                    if isinstance(s, E.Var):
                        env[id(s)] = a.shape[d]
            # (a tensorized block counts the operations of its intrinsic's desc)
            from ..tensorize.library import with_desc_semantics
            counted = dataclasses.replace(func, body=with_desc_semantics(func.body))
            low = lower(counted, module)
            lowered = low.body
            fl, iops = count_ops(lowered, env, low.callees)
            # only parallel loops use the other threads: a kernel without one runs on one,
            # and its share is of one thread's peak
            used = threads if _has_parallel_loop(lowered) else 1
            line = f"{name}: median {sec * 1e3:.3f} ms on {used} thread" \
                   f"{'s' if used != 1 else ''}" + \
                   (" (no parallel loop)" if used != threads else "")
            if fl:
                peak, how = _fp32_peak(args.peak, used)
                line += f", {fl / sec / 1e9:.1f} GFLOP/s, {100 * fl / sec / peak:.0f}% of " \
                        f"{how} fp32 peak ({peak / 1e9:.0f} GFLOP/s)"
            elif iops:
                line += f", {iops / sec / 1e9:.1f} GOP/s (integer)"
            print(line)
        except TirkitError as e:
            report_error(args.file, text, e)
            status = 1
        except Exception as e:
            _internal(args.file, name, e)
            status = 1
    return status
