"""Which shipped x86 u8·s8→s32 intrinsic this CPU should be offered for a GEMM whose extents
every intrinsic divides, stated independently of the library's ranking: the widest
instruction the CPU has (VNNI, then the AVX-512 fallback and AVX-VNNI, equal in operations
per cycle and taken in file order, then AVX2).  The editor and command-line tests expect
this one, so they hold on an AVX2-only host and on one with AVX-512 VNNI alike."""
from __future__ import annotations

from typing import NamedTuple

from tirkit.tensorize.library import host_features


class HostIntrinsic(NamedTuple):
    name: str
    label: str
    llvm: str               # an LLVM intrinsic its impl calls
    saturates: bool         # pair sums saturate to s16 (vpmaddubsw): keep A below 128
    lane: int               # output lanes: the `vj` split


# best first; each with the CPU features it needs (LLVM's spelling)
ORDER = [
    (("+avx512vnni", "+avx512bw"), HostIntrinsic(
        "x86.vnni.dot_16x4_u8s8s32", "x86 VNNI (u8·s8→s32, 16x4)",
        "llvm.x86.avx512.vpdpbusd.512", False, 16)),
    (("+avx512bw",), HostIntrinsic(
        "x86.avx512.dot_16x4_u8s8s32", "x86 AVX-512 (u8·s8→s32, 16x4)",
        "llvm.x86.avx512.pmaddubs.w.512", True, 16)),
    (("+avxvnni",), HostIntrinsic(
        "x86.avxvnni.dot_8x4_u8s8s32", "x86 AVX-VNNI (u8·s8→s32, 8x4)",
        "llvm.x86.avx512.vpdpbusd.256", False, 8)),
    (("+avx2",), HostIntrinsic(
        "x86.avx2.dot_8x4_u8s8s32", "x86 AVX2 (u8·s8→s32, 8x4)",
        "llvm.x86.avx2.pmadd.ub.sw", True, 8)),
]


def available() -> list:
    """The intrinsics this CPU has, best first."""
    have = host_features()
    return [i for need, i in ORDER if all(f in have for f in need)]


def best() -> HostIntrinsic:
    return available()[0]


def absent() -> list:
    """(intrinsic, the first feature it needs that this CPU lacks)."""
    have = host_features()
    return [(i, next(f for f in need if f not in have)) for need, i in ORDER
            if not all(f in have for f in need)]
