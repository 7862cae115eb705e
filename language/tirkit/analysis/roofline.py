"""Roofline estimates: peak compute and memory bandwidth per target, and the time a block
or kernel needs at best on it.

    roofline_seconds(cost, "llvm")      # targets and their peak figures: tirkit.target      # max(FLOPs / peak, unique bytes / bandwidth)
    default_target(func)                # "cuda" for kernels with thread bindings, else "llvm"
"""
from __future__ import annotations

from ..ir import stmt as S
from ..target import PEAKS, get
from ..ir.dtype import element_of

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
    """The peak figures of a target given by name or alias (see `tirkit.target`) or as a
    `Target`; an unknown name counts as the CPU, or as the default GPU when it names one."""
    t = get(target or "llvm")
    if t is None:
        name = str(getattr(target, "name", None) or getattr(target, "kind", None) or target)
        t = get("cuda" if ("cuda" in name.lower() or "nvidia" in name.lower()) else "llvm")
    return PEAKS[t.name]


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
