"""nvcc, found on PATH or in the pip wheels (`pip install nvidia-cuda-nvcc nvidia-cuda-runtime
nvidia-cuda-cccl`, see the `cuda-compile` extra): CUDA C compiled to a cubin or PTX without a
GPU, for compile checks and `tirkit build --emit ptx`."""
from __future__ import annotations

import functools
import os
import shutil
import subprocess
import tempfile

from ..errors import UNSUPPORTED, fail

ARCHS = ("sm_80", "sm_90")


@functools.lru_cache(maxsize=1)
def find_nvcc() -> str | None:
    """The nvcc executable, or None where none is installed."""
    found = shutil.which("nvcc")
    if found:
        return found
    try:
        import nvidia
    except ImportError:
        return None
    for root in getattr(nvidia, "__path__", ()):
        for sub in sorted(os.listdir(root), reverse=True):
            cand = os.path.join(root, sub, "bin", "nvcc")
            if os.access(cand, os.X_OK):
                return cand
    return None


def _include_dirs(nvcc: str):
    """The headers beside the wheel's nvcc (cuda_runtime.h, cuda_fp16.h, cccl)."""
    inc = os.path.join(os.path.dirname(os.path.dirname(nvcc)), "include")
    return [inc] if os.path.isdir(inc) else []


def compile_cuda(code: str, arch: str = "sm_90", kind: str = "cubin", timeout=120) -> bytes:
    """code compiled by nvcc for arch; kind "cubin" or "ptx".  A compile error is a
    `codegen/unsupported` diagnostic carrying nvcc's message."""
    nvcc = find_nvcc()
    if nvcc is None:
        fail(UNSUPPORTED, "nvcc is not installed (pip install 'tirkit[cuda-compile]')")
    with tempfile.TemporaryDirectory(prefix="tirkit-nvcc-") as d:
        src, out = os.path.join(d, "k.cu"), os.path.join(d, "k." + kind)
        with open(src, "w") as fh:
            fh.write(code)
        cmd = [nvcc, f"-arch={arch}", "-" + kind, "-o", out, src]
        for inc in _include_dirs(nvcc):
            cmd[1:1] = ["-I", inc]
        env = dict(os.environ)
        env["PATH"] = os.path.dirname(nvcc) + os.pathsep + env.get("PATH", "")
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
        if r.returncode != 0:
            fail(UNSUPPORTED, f"nvcc failed for {arch}: {(r.stderr or r.stdout).strip()}")
        with open(out, "rb") as fh:
            return fh.read()
