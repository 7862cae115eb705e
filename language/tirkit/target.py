"""Targets and their limits.

    get("cuda-sm90")            # by name or alias; None when unknown
    from_pragma(text)           # the name in a `# tirkit: target=NAME` comment, or None
    resolve(name_or_target, text, has_threads)

Kernels with thread bindings are checked against a CUDA target: the one named on the
command line (`--target`), else the file's pragma, else `DEFAULT_CUDA`.  Kernels without
thread bindings are CPU kernels (`llvm`) unless a GPU target is named.
"""
from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Target:
    name: str
    kind: str                          # "cpu" | "cuda"
    description: str
    max_threads_per_block: int = 0
    max_thread_dims: tuple = ()        # threadIdx.x, .y, .z
    max_grid_dims: tuple = ()          # blockIdx.x, .y, .z
    shared_static: int = 0             # bytes of static shared memory per block
    shared_optin: int = 0              # bytes per block with the opt-in (dynamic) carve-out
    warp_size: int = 0

    @property
    def is_gpu(self):
        return self.kind == "cuda"


_CUDA = dict(kind="cuda", max_threads_per_block=1024, max_thread_dims=(1024, 1024, 64),
             max_grid_dims=(2**31 - 1, 65535, 65535), shared_static=48 * 1024, warp_size=32)

TARGETS = {
    "llvm": Target("llvm", "cpu", "host CPU through LLVM"),
    "cuda-sm80": Target("cuda-sm80", description="NVIDIA Ampere (A100), compute capability 8.0",
                        shared_optin=163 * 1024, **_CUDA),
    "cuda-sm90": Target("cuda-sm90", description="NVIDIA Hopper (H100/H200), compute "
                        "capability 9.0", shared_optin=227 * 1024, **_CUDA),
}

ALIASES = {"cpu": "llvm", "c": "llvm", "znver4": "llvm", "x86": "llvm",
           "cuda": "cuda-sm80", "gpu": "cuda-sm80", "sm80": "cuda-sm80", "sm_80": "cuda-sm80",
           "cuda-sm_80": "cuda-sm80", "a100": "cuda-sm80", "nvidia/a100": "cuda-sm80",
           "sm90": "cuda-sm90", "sm_90": "cuda-sm90", "cuda-sm_90": "cuda-sm90",
           "h100": "cuda-sm90", "h200": "cuda-sm90", "nvidia/h100": "cuda-sm90"}

# Peak compute (ops/s by element dtype class) and memory bandwidth (bytes/s) per target, for
# the roofline estimates of analysis/roofline.py.
# "llvm": one core of an AMD EPYC Zen 4 (znver4): fp32 FMA ~116 GFLOP/s per core,
# int8 vpdpbusd ~460 GOP/s, bf16 ~230 GFLOP/s; ~27 GB/s copy bandwidth (measured).
# GPU rows: vendor datasheet figures (non-tensor-core fp32; tensor-core rates for 16/8-bit).
PEAKS = {
    "llvm": {"float32": 116e9, "float64": 58e9, "float16": 116e9, "bfloat16": 230e9,
             "int8": 460e9, "uint8": 460e9, "int32": 58e9, "default": 116e9, "bandwidth": 27e9,
             "label": "CPU znver4, 1 core"},
    "cuda-sm80": {"float32": 19.5e12, "float64": 9.7e12, "float16": 312e12,
                  "bfloat16": 312e12, "int8": 624e12, "default": 19.5e12,
                  "bandwidth": 1.555e12, "label": "NVIDIA A100 (40 GB)"},
    "cuda-sm90": {"float32": 67e12, "float64": 34e12, "float16": 990e12, "bfloat16": 990e12,
                  "int8": 1979e12, "default": 67e12, "bandwidth": 3.35e12,
                  "label": "NVIDIA H100 SXM"},
}

DEFAULT_CUDA = "cuda-sm80"
DEFAULT_CPU = "llvm"

_PRAGMA = re.compile(r"^[ \t]*#[ \t]*tirkit:[ \t]*target[ \t]*=[ \t]*([A-Za-z0-9_.\-]+)",
                     re.MULTILINE)


def get(name):
    if isinstance(name, Target):
        return name
    if not name:
        return None
    n = str(name).strip().lower()
    return TARGETS.get(ALIASES.get(n, n))


def names():
    return sorted(TARGETS)


def from_pragma(text):
    """The target named by the first `# tirkit: target=NAME` comment, or None."""
    if not text:
        return None
    at = text.find("tirkit:")            # only lines that hold the word, not every line
    while at >= 0:
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        end = len(text) if end < 0 else end
        m = _PRAGMA.match(text[start:end])
        if m:
            return m.group(1)
        at = text.find("tirkit:", end)
    return None


def resolve(explicit, text, has_threads, pragma=None):
    """The target a kernel is checked against (see the module docstring); `pragma`: the
    name `from_pragma(text)` gives, when the caller has read it already."""
    named = [t for t in (get(explicit), get(pragma or from_pragma(text))) if t is not None]
    if has_threads:
        gpu = [t for t in named if t.is_gpu]
        return gpu[0] if gpu else TARGETS[DEFAULT_CUDA]
    return named[0] if named else TARGETS[DEFAULT_CPU]
