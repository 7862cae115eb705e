"""The tensorization sketch: auto_tensorize, then the tensorized block tiled S S R S around
the instruction; every sampled schedule validates, and on this CPU runs and equals numpy."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import tirkit
from tirkit.tune.nest import Loop
from tirkit.tune.space import design_space
from tirkit.tune.tensorized import MAX_ACCUMULATORS, tensorize_sketches

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tensorize"))
from util import gemm  # noqa: E402

pytest.importorskip("llvmlite")

VNNI = "llvm -mattr=+avx512vnni,+avx512bw"


def _gemm(n=64):
    return tirkit.parse(gemm(n, n, n)).module


def test_one_sketch_per_exact_intrinsic_of_the_target():
    mod = _gemm()
    names = [s.intrin for s in tensorize_sketches(mod, "gemm", VNNI, blocks=("C",))]
    # VNNI, and the AVX-512 fallback whose pair sums saturate: left out
    assert names == ["x86.vnni.dot_16x4_u8s8s32"]
    assert tensorize_sketches(mod, "gemm", "llvm -mattr=+avx2,+fma", blocks=("C",)) == []
    sk = tensorize_sketches(mod, "gemm", VNNI, blocks=("C",))[0]
    assert sk.loops == (Loop(64, "S"), Loop(4, "S"), Loop(16, "R"))   # i, j by 16, k by 4


def test_sampled_schedules_validate_and_keep_the_register_tile():
    mod = _gemm()
    sk = tensorize_sketches(mod, "gemm", VNNI, blocks=("C",))[0]
    rng = np.random.default_rng(3)
    for _ in range(6):
        d = sk.sample(rng)
        assert np.prod([t[-1] for t in d["tiles"]]) <= MAX_ACCUMULATORS
        assert [int(np.prod(t)) for t in d["tiles"]] == [64, 4]
        sch = sk.apply(mod, d)
        text = tirkit.to_script(sch.mod)
        assert [x for x in tirkit.check(text) if x.severity == "error"] == []
        assert '"llvm.x86.avx512.vpdpbusd.512"' in text
        d2 = sk.mutate(d, rng)
        assert [int(np.prod(t)) for t in d2["tiles"]] == [64, 4]


def test_on_this_cpu_the_tuned_kernels_equal_numpy():
    from tirkit.codegen import build
    mod = _gemm()
    sketches = [s for s in design_space(mod, "gemm") if s.name.startswith("tensorize")]
    from tirkit.tensorize.library import host_features
    exact = {"+avx512vnni", "+avxvnni"} & set(host_features())
    assert bool(sketches) == bool(exact)      # only the non-saturating forms are searched
    rng = np.random.default_rng(5)
    A = rng.integers(0, 256, (64, 64)).astype("uint8")      # u8 above 127 too
    B = rng.integers(-128, 128, (64, 64)).astype("int8")
    ref = A.astype(np.int64) @ B.astype(np.int64)
    for sk in sketches:
        for _ in range(3):
            sch = sk.apply(mod, sk.sample(rng))
            C = np.zeros((64, 64), "int32")
            build(sch.mod["gemm"], sch.mod)(A, B, C)
            assert np.array_equal(C, ref), sk.name
