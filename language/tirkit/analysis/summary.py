"""A kernel at a glance: its parameters (buffers with shape and dtype, scalars with dtype),
its FLOPs and roofline time on a target, and how many blocks it has.

    s = kernel_summary(func, "llvm")        # KernelSummary
    [(p.name, p.shape, p.dtype) for p in s.params]   # shape: IR extents, None for a scalar
    s.flops.value, s.seconds, s.bound, s.blocks      # 4194304, 3.6e-05, "compute", 1

FLOPs and time are those of `kernel_costs(func).total` (see analysis/cost.py for how they
are counted); `blocks` counts the blocks the kernel's text writes, not the implicit root.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..ir import stmt as S
from ..ir.visit import walk
from .cost import KernelCost, Poly, bound_by, kernel_costs, roofline_seconds
from .roofline import default_target, target_peaks


@dataclass(frozen=True)
class Param:
    name: str
    dtype: str
    shape: tuple | None = None       # the buffer's extents (IR expressions); None: a scalar
    scope: str = "global"


@dataclass(frozen=True)
class KernelSummary:
    name: str
    params: tuple                    # tuple[Param], in signature order
    flops: Poly
    unique_bytes: int | None
    seconds: float | None            # roofline time on `target`; None when sizes are symbolic
    bound: str                       # "compute" | "memory" | "unknown"
    target: str
    target_label: str
    blocks: int


def _params(func: S.PrimFunc) -> tuple:
    out = []
    for v in func.params:
        b = func.buffer_of(v)
        if b is None:
            out.append(Param(v.name, str(v.dtype)))
        else:
            out.append(Param(b.name, str(b.dtype), tuple(b.shape), b.scope))
    return tuple(out)


def _is_root(func: S.PrimFunc, block) -> bool:
    body = func.body
    return isinstance(body, S.BlockRealize) and body.block is block and not block.iter_vars \
        and block.name_hint == "root"


def count_blocks(func: S.PrimFunc) -> int:
    """Blocks of the kernel, the implicit root block left out."""
    n = [0]

    def fn(x):
        if isinstance(x, S.Block) and not _is_root(func, x):
            n[0] += 1
        return True
    walk(func.body, fn)
    return n[0]


def kernel_summary(func: S.PrimFunc, target=None, costs: KernelCost | None = None
                   ) -> KernelSummary:
    """The summary of `func` on `target` (by default: "cuda" for kernels bound to GPU
    threads, else "llvm"); `costs` reuses a `kernel_costs(func)` already computed."""
    target = target or default_target(func)
    total = (costs or kernel_costs(func)).total
    return KernelSummary(
        name=func.name, params=_params(func), flops=total.flops,
        unique_bytes=total.unique_bytes, seconds=roofline_seconds(total, target),
        bound=bound_by(total, target), target=str(target),
        target_label=target_peaks(target)["label"], blocks=count_blocks(func))


__all__ = ["Param", "KernelSummary", "kernel_summary", "count_blocks"]
