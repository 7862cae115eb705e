"""The measured compute peak of this host, per core: a small fp32 FMA loop and an int8
dot-product loop, written as LLVM IR for the host's own features and compiled like a kernel.

    p = measure_peak()          # cached per process; about half a second the first time
    p.fp32                      # FLOP/s on one core (2 per fused multiply-add)
    p.int8, p.int8_form         # OP/s on one core (2 per u8 x s8 multiply-add) and the form used
    measure_peak(threads=2)     # the same loops on two threads at once, rates summed

Each loop keeps `CHAINS` independent accumulators, enough to hide the instruction latency on
any x86 core; the vector width is the widest the host's features allow (zmm with AVX-512F,
otherwise ymm).  The dot product uses `vpdpbusd` (AVX-512 VNNI on zmm, AVX-VNNI on ymm) and
otherwise the AVX2 pair `vpmaddubsw` + `vpmaddwd` + `vpaddd`, which is how int8 code runs
without VNNI.  A rate is the best of several timed runs: a peak is what the core can do, and
a busy machine only ever makes a run slower.  Runs are timed in CPU time (see `_rate`).
"""
from __future__ import annotations

import ctypes
import functools
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from . import engine

CHAINS = 12
_MEASURING = threading.Lock()      # one measurement at a time: two would share the cores
_LOOP = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p)


@dataclass(frozen=True)
class Peak:
    cpu: str                 # LLVM's host CPU name
    features: tuple          # the enabled features this measurement depends on
    threads: int
    fp32: float              # FLOP/s, all threads together
    fp32_form: str           # e.g. "ymm vfmadd (AVX2/FMA)"
    int8: float | None       # OP/s, all threads together (None: no integer dot product here)
    int8_form: str | None

    def describe(self) -> str:
        line = f"fp32 {self.fp32 / 1e9:.1f} GFLOP/s ({self.fp32_form})"
        if self.int8 is not None:
            line += f", int8 {self.int8 / 1e9:.1f} GOP/s ({self.int8_form})"
        return line + f" on {self.threads} thread{'s' if self.threads != 1 else ''}"


RELEVANT = ("avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512vnni", "avxvnni",
            "avx512bf16", "avx512fp16", "amx-int8", "amx-bf16")


def enabled_features(features: str | None = None) -> set:
    """The enabled feature names of LLVM's host feature string (`+avx2,-avx512f,...`)."""
    if features is None:
        features = engine.host_cpu()[1]
    return {f[1:] for f in features.split(",") if f.startswith("+")}


def _loop_ir(name, vec, step, combine, decls):
    """A loop of `n` iterations, each advancing CHAINS independent accumulators of type `vec`
    by the instructions `step(acc, result, c)` (x and y, loaded from `inp`, are the other
    operands); the accumulators' sum is stored to `out`, so nothing is dead."""
    lines = list(decls) + [
        f"define void @{name}(i64 %n, ptr %inp, ptr %out) {{",
        "entry:",
        f"  %x = load {vec}, ptr %inp, align 1",
        f"  %py = getelementptr {vec}, ptr %inp, i64 1",
        f"  %y = load {vec}, ptr %py, align 1",
        "  br label %loop",
        "loop:",
        "  %i = phi i64 [0, %entry], [%i1, %loop]"]
    lines += [f"  %a{c} = phi {vec} [%x, %entry], [%b{c}, %loop]" for c in range(CHAINS)]
    for c in range(CHAINS):
        lines += [f"  {ins}" for ins in step(f"%a{c}", f"%b{c}", c)]
    lines += ["  %i1 = add i64 %i, 1", "  %more = icmp ult i64 %i1, %n",
              "  br i1 %more, label %loop, label %done", "done:"]
    total = "%b0"
    for c in range(1, CHAINS):
        lines.append(f"  %s{c} = {combine} {vec} {total}, %b{c}")
        total = f"%s{c}"
    lines += [f"  store {vec} {total}, ptr %out, align 1", "  ret void", "}"]
    return "\n".join(lines) + "\n"


def fma_loop(feats: set):
    """(IR, operations per iteration, form) of the fp32 FMA loop for these features."""
    lanes, reg, isa = (16, "zmm", "AVX-512F") if "avx512f" in feats else (8, "ymm", "AVX2/FMA")
    vec, fn = f"<{lanes} x float>", f"llvm.fma.v{lanes}f32"
    ir = _loop_ir("fma_loop", vec,
                  lambda a, b, c: [f"{b} = call {vec} @{fn}({vec} {a}, {vec} %x, {vec} %y)"],
                  "fadd", [f"declare {vec} @{fn}({vec}, {vec}, {vec})"])
    return ir, CHAINS * lanes * 2, f"{reg} vfmadd, {isa}"


def dot_loop(feats: set):
    """(IR, operations per iteration, form) of the int8 dot-product loop (u8 x s8 summed
    into i32 lanes, 4 products per lane), or None without 256-bit integer vectors."""
    if "avx512vnni" in feats and "avx512f" in feats:
        lanes, fn, form = 16, "llvm.x86.avx512.vpdpbusd.512", "zmm vpdpbusd, AVX-512 VNNI"
    elif "avxvnni" in feats:
        lanes, fn, form = 8, "llvm.x86.avx512.vpdpbusd.256", "ymm vpdpbusd, AVX-VNNI"
    elif "avx2" in feats:
        return _avx2_dot(), CHAINS * 8 * 4 * 2, "ymm vpmaddubsw + vpmaddwd + vpaddd, AVX2"
    else:
        return None
    vec = f"<{lanes} x i32>"
    ir = _loop_ir("dot_loop", vec,
                  lambda a, b, c: [f"{b} = call {vec} @{fn}({vec} {a}, {vec} %x, {vec} %y)"],
                  "add", [f"declare {vec} @{fn}({vec}, {vec}, {vec})"])
    return ir, CHAINS * lanes * 4 * 2, form


def _avx2_dot():
    """Without VNNI: bytes times bytes into pairs of i16 (`vpmaddubsw`), the pairs summed
    into i32 (`vpmaddwd` with ones), added to the accumulator.  The accumulator's bytes are
    the unsigned operand, so no product is loop-invariant or shared between chains."""
    def step(a, b, c):
        return [f"%u{c} = bitcast <8 x i32> {a} to <32 x i8>",
                f"%m{c} = call <16 x i16> @llvm.x86.avx2.pmadd.ub.sw(<32 x i8> %u{c}, "
                "<32 x i8> %yb)",
                f"%w{c} = call <8 x i32> @llvm.x86.avx2.pmadd.wd(<16 x i16> %m{c}, "
                "<16 x i16> <" + ", ".join(["i16 1"] * 16) + ">)",
                f"{b} = add <8 x i32> {a}, %w{c}"]
    ir = _loop_ir("dot_loop", "<8 x i32>", step, "add",
                  ["declare <16 x i16> @llvm.x86.avx2.pmadd.ub.sw(<32 x i8>, <32 x i8>)",
                   "declare <8 x i32> @llvm.x86.avx2.pmadd.wd(<16 x i16>, <16 x i16>)"])
    return ir.replace("  br label %loop\n",
                      "  %yb = bitcast <8 x i32> %y to <32 x i8>\n  br label %loop\n", 1)


class Compiled:
    """One loop compiled for this host.  `run(n, inp, out)` runs n iterations on numpy
    buffers (`inp` holds x then y, one vector each; `out` receives the accumulators' sum);
    `seconds(n)` times n iterations on the calling thread."""

    def __init__(self, ir: str, name: str):
        obj, _ = engine.compile_ir(ir, keep_ir=False)
        self.loaded = engine.Loaded(obj)
        self.fn = _LOOP(self.loaded.address(name))

    def run(self, n: int, inp, out):
        self.fn(n, inp.ctypes.data, out.ctypes.data)

    def seconds(self, n: int) -> float:
        inp = np.full(256, 3, np.uint8)
        out = np.zeros(64, np.uint8)
        t0 = time.thread_time()
        self.run(n, inp, out)
        return time.thread_time() - t0


def _rate(compiled: Compiled, ops: int, threads: int, target_s: float, repeat: int) -> float:
    """Best rate (operations per second, all threads) over `repeat` runs of about target_s
    each; a run's time is the CPU time of its threads, so time spent descheduled on a busy
    machine does not count, while two threads sharing one core's units still do."""
    n = 1000
    while compiled.seconds(n) < target_s / 4:       # calibrate on one thread
        n *= 4
    n = max(1000, int(n * target_s / max(compiled.seconds(n), 1e-6)))
    best = 0.0
    with ThreadPoolExecutor(threads) as pool:
        for _ in range(repeat):
            times = list(pool.map(compiled.seconds, [n] * threads))  # ctypes frees the GIL
            best = max(best, sum(n * ops / max(t, 1e-9) for t in times))
    return best


@functools.lru_cache(maxsize=8)
def measure_peak(threads: int = 1, target_s: float = 0.01, repeat: int = 9) -> Peak:
    """The measured fp32 and int8 peak of this host on `threads` threads (cached)."""
    with _MEASURING:
        return _measure(threads, target_s, repeat)


def _measure(threads: int, target_s: float, repeat: int) -> Peak:
    cpu, features = engine.host_cpu()
    feats = enabled_features(features)
    ir, ops, fp32_form = fma_loop(feats)
    fp32 = _rate(Compiled(ir, "fma_loop"), ops, threads, target_s, repeat)
    int8 = int8_form = None
    dot = dot_loop(feats)
    if dot is not None:
        ir, ops, int8_form = dot
        int8 = _rate(Compiled(ir, "dot_loop"), ops, threads, target_s, repeat)
    return Peak(cpu, tuple(f for f in RELEVANT if f in feats), threads, fp32, fp32_form,
                int8, int8_form)


__all__ = ["Peak", "Compiled", "measure_peak", "enabled_features", "fma_loop", "dot_loop", "RELEVANT",
           "CHAINS"]
