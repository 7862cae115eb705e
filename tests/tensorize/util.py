"""Shared helpers for the tensorize tests: GEMM sources, random integer inputs, exact runs."""
from __future__ import annotations

from pathlib import Path

import numpy as np

import tirkit
from tirkit.schedule import Schedule

EXAMPLE = Path(__file__).resolve().parents[3] / "shared" / "examples" / "valid"
if not EXAMPLE.is_dir():
    EXAMPLE = Path("/work/shared/examples/valid")
AVX2 = "x86.avx2.dot_8x4_u8s8s32"


def gemm(M, N, K, a="uint8", b="int8"):
    return f'''from tvm.script import tir as T


@T.prim_func
def gemm(
    A: T.Buffer(({M}, {K}), "{a}"),
    B: T.Buffer(({K}, {N}), "{b}"),
    C: T.Buffer(({M}, {N}), "int32"),
):
    T.func_attr({{"global_symbol": "gemm", "tir.noalias": True}})
    for i, j, k in T.grid({M}, {N}, {K}):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.reads(A[vi, vk], B[vk, vj])
            T.writes(C[vi, vj])
            with T.init():
                C[vi, vj] = 0
            C[vi, vj] = C[vi, vj] + T.Cast("int32", A[vi, vk]) * T.Cast("int32", B[vk, vj])
'''


def schedule(text):
    return Schedule(tirkit.parse(text).module)


def inputs(M, N, K, seed=0):
    """u8 operands below 128 (the range in which the vpmaddubsw forms, which saturate a pair
    of products to s16 as TVM's and MLAS's do, are exact), signed operands full range."""
    rng = np.random.default_rng(seed)
    A = rng.integers(1, 128, (M, K)).astype("uint8")
    B = rng.integers(-128, 128, (K, N)).astype("int8")
    return A, B, (A.astype(np.int64) @ B.astype(np.int64)).astype(np.int32)
