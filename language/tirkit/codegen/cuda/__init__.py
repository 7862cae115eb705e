"""CUDA code generation: TensorIR with thread bindings -> CUDA C (one kernel per thread-bound
loop nest), through the shared lowering passes plus two GPU steps (lower.py).

    src = tirkit.codegen.cuda.emit_cuda(func, module)    # CudaSource(name, code, kernels)
    src.code                                            # CUDA C text, for nvcc or NVRTC
    src.kernels[0].grid, src.kernels[0].block           # launch extents
"""
from __future__ import annotations

from .lower import CUDA_PIPELINE, lower_gpu
from .source import CudaSource, Launch, emit_source


def emit_cuda(func, module=None, skip=()) -> CudaSource:
    """CUDA C of func (steps of CUDA_PIPELINE named in `skip` left out)."""
    return emit_source(lower_gpu(func, module, skip=skip))


def is_thread_bound(func) -> bool:
    """Does func bind loops to GPU threads (blockIdx/threadIdx/vthread)?"""
    from ...ir import stmt as S
    from ...ir.visit import walk
    found = []

    def fn(x):
        if found:
            return False
        if isinstance(x, S.For) and x.kind == "thread_binding" or \
                isinstance(x, S.AttrStmt) and x.attr_key in ("thread_extent",
                                                             "virtual_thread"):
            found.append(x)
        return None
    walk(func.body, fn)
    return bool(found)


__all__ = ["CUDA_PIPELINE", "CudaSource", "Launch", "emit_cuda", "is_thread_bound",
           "lower_gpu"]
