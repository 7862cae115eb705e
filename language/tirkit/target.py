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

ALIASES = {"cpu": "llvm", "c": "llvm", "cuda": "cuda-sm80", "sm80": "cuda-sm80",
           "sm_80": "cuda-sm80", "cuda-sm_80": "cuda-sm80", "sm90": "cuda-sm90",
           "sm_90": "cuda-sm90", "cuda-sm_90": "cuda-sm90"}

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
