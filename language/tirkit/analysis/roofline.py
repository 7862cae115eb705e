"""Roofline estimates: peak compute and memory bandwidth per target, and the time a block
or kernel needs at best on it.

    roofline_seconds(cost, "llvm")      # max(FLOPs / peak, unique bytes / bandwidth)
    default_target(func)                # "cuda" for kernels with thread bindings, else "llvm"
"""
from __future__ import annotations

from ..ir import stmt as S
from ..ir.dtype import element_of

# Peak compute (ops/s by element dtype class) and memory bandwidth (bytes/s).
# "llvm"/"cpu": one core of an AMD EPYC Zen 4 (znver4): fp32 FMA ~116 GFLOP/s per core,
# int8 vpdpbusd ~460 GOP/s, bf16 ~230 GFLOP/s; ~27 GB/s copy bandwidth (measured).
# GPU rows: vendor datasheet figures (non-tensor-core fp32; tensor-core rates for 16/8-bit).
PEAKS = {
    "llvm": {"float32": 116e9, "float64": 58e9, "float16": 116e9, "bfloat16": 230e9,
             "int8": 460e9, "uint8": 460e9, "int32": 58e9, "default": 116e9, "bandwidth": 27e9,
             "label": "CPU znver4, 1 core"},
    "cuda": {"float32": 19.5e12, "float64": 9.7e12, "float16": 312e12, "bfloat16": 312e12,
             "int8": 624e12, "default": 19.5e12, "bandwidth": 1.555e12,
             "label": "NVIDIA A100 (40 GB)"},
    "h100": {"float32": 67e12, "float64": 34e12, "float16": 990e12, "bfloat16": 990e12,
             "int8": 1979e12, "default": 67e12, "bandwidth": 3.35e12,
             "label": "NVIDIA H100 SXM"},
}
ALIASES = {"cpu": "llvm", "c": "llvm", "znver4": "llvm", "x86": "llvm", "gpu": "cuda",
           "a100": "cuda", "nvidia/a100": "cuda", "cuda-sm80": "cuda", "sm80": "cuda",
           "sm_80": "cuda", "h200": "h100", "nvidia/h100": "h100", "cuda-sm90": "h100",
           "sm90": "h100", "sm_90": "h100"}


def default_target(func) -> str:
    """"cuda" for a kernel with GPU thread bindings, else "llvm" (the host CPU)."""
    from ..ir.visit import walk
    found = []

    def fn(x):
        if found:
            return False
        if (isinstance(x, S.For) and x.kind == "thread_binding") or \
                (isinstance(x, S.AttrStmt) and x.attr_key == "thread_extent"):
            found.append(x)
            return False
        return True
    walk(func.body, fn)
    return "cuda" if found else "llvm"


def target_peaks(target=None) -> dict:
    """The peak table of a target given by name (or an object with `.kind`/`.name`)."""
    name = target
    if target is not None and not isinstance(target, str):
        name = getattr(target, "name", None) or getattr(target, "kind", None)
    key = (name or "llvm").lower()
    key = ALIASES.get(key, key)
    if key not in PEAKS:
        key = "cuda" if ("cuda" in key or "nvidia" in key) else "llvm"
    return PEAKS[key]


def roofline_seconds(cost, target=None):
    """max(FLOPs / peak, unique bytes / bandwidth); None when a count is symbolic."""
    peaks = target_peaks(target)
    f, u = cost.flops.value, cost.unique_bytes
    if f is None or u is None:
        return None
    peak = peaks.get(element_of(cost.op_dtype), peaks["default"])
    return max(f / peak, u / peaks["bandwidth"])


def bound_by(cost, target=None) -> str:
    peaks = target_peaks(target)
    f, u = cost.flops.value, cost.unique_bytes
    if f is None or u is None:
        return "unknown"
    peak = peaks.get(element_of(cost.op_dtype), peaks["default"])
    return "compute" if f / peak >= u / peaks["bandwidth"] else "memory"


def format_seconds(t) -> str:
    if t is None:
        return "unknown (symbolic sizes)"
    if t >= 1:
        return f"{t:.3g} s"
    if t >= 1e-3:
        return f"{t * 1e3:.3g} ms"
    if t >= 1e-6:
        return f"{t * 1e6:.3g} µs"
    return f"{t * 1e9:.3g} ns"


__all__ = ["PEAKS", "target_peaks", "default_target", "roofline_seconds", "bound_by",
           "format_seconds"]
