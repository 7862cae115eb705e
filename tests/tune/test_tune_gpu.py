"""The GPU sketch (SSSRRSRS, shared-memory copies, thread bindings) for a CUDA target: every
sampled schedule applies and validates for cuda-sm80, its tiles and mutations stay within
the extents and the block limits, sampled schedules run in the CUDA thread interpreter and
equal numpy, and their CUDA C compiles with nvcc for sm_80."""
from __future__ import annotations

import re

import numpy as np
import pytest

import tirkit
from tirkit.codegen.cuda import emit_cuda
from tirkit.codegen.cuda.exprs import PRELUDE
from tirkit.codegen.cuda.nvcc import compile_cuda, find_nvcc
from tirkit.codegen.cuda.threads import run_threads
from tirkit.tune.gpu import MAX_LOCAL, MAX_VTHREAD, GpuTiledSketch, Operand
from tirkit.tune.space import TiledSketch, design_space
from tirkit.tune.validate import validate
from tune_util import MATMUL

TARGET = "cuda-sm80"

CONV = '''from tvm.script import tir as T


@T.prim_func
def conv(
    X: T.Buffer((1, 8, 8, 8), "float32"),
    W: T.Buffer((3, 3, 8, 16), "float32"),
    Y: T.Buffer((1, 8, 8, 16), "float32"),
):
    T.func_attr({"global_symbol": "conv", "tir.noalias": True})
    pad = T.alloc_buffer((1, 10, 10, 8), "float32")
    acc = T.alloc_buffer((1, 8, 8, 16), "float32")
    for n, h, w, c in T.grid(1, 10, 10, 8):
        with T.block("pad"):
            vn, vh, vw, vc = T.axis.remap("SSSS", [n, h, w, c])
            T.reads(X[vn, vh - 1, vw - 1, vc])
            T.writes(pad[vn, vh, vw, vc])
            pad[vn, vh, vw, vc] = T.if_then_else(
                1 <= vh and vh < 9 and 1 <= vw and vw < 9, X[vn, vh - 1, vw - 1, vc],
                T.float32(0))
    for n, h, w, co, rh, rw, ci in T.grid(1, 8, 8, 16, 3, 3, 8):
        with T.block("conv"):
            vn, vh, vw, vco, vrh, vrw, vci = T.axis.remap("SSSSRRR", [n, h, w, co, rh, rw, ci])
            T.reads(pad[vn, vh + vrh, vw + vrw, vci], W[vrh, vrw, vci, vco])
            T.writes(acc[vn, vh, vw, vco])
            with T.init():
                acc[vn, vh, vw, vco] = T.float32(0)
            acc[vn, vh, vw, vco] = acc[vn, vh, vw, vco] + pad[vn, vh + vrh, vw + vrw, vci] * W[vrh, vrw, vci, vco]
    for n, h, w, c in T.grid(1, 8, 8, 16):
        with T.block("relu"):
            vn, vh, vw, vc = T.axis.remap("SSSS", [n, h, w, c])
            T.reads(acc[vn, vh, vw, vc])
            T.writes(Y[vn, vh, vw, vc])
            Y[vn, vh, vw, vc] = T.max(acc[vn, vh, vw, vc], T.float32(0))
'''


BMM = '''from tvm.script import tir as T


@T.prim_func
def bmm(
    A: T.Buffer((2, 32, 16), "float32"),
    B: T.Buffer((2, 16, 24), "float32"),
    C: T.Buffer((2, 32, 24), "float32"),
):
    T.func_attr({"global_symbol": "bmm", "tir.noalias": True})
    for b, i, j, k in T.grid(2, 32, 24, 16):
        with T.block("C"):
            vb, vi, vj, vk = T.axis.remap("SSSR", [b, i, j, k])
            T.reads(A[vb, vi, vk], B[vb, vk, vj])
            T.writes(C[vb, vi, vj])
            with T.init():
                C[vb, vi, vj] = T.float32(0)
            C[vb, vi, vj] = C[vb, vi, vj] + A[vb, vi, vk] * B[vb, vk, vj]
'''


def _bmm_inputs(rng):
    a = rng.uniform(0.5, 1.5, (2, 32, 16)).astype(np.float32)
    b = rng.uniform(-1.5, -0.5, (2, 16, 24)).astype(np.float32)
    return [a, b, np.zeros((2, 32, 24), np.float32)], lambda a, b: a @ b


def _mm_inputs(rng):
    a = rng.uniform(0.5, 1.5, (64, 32)).astype(np.float32)
    b = rng.uniform(-1.5, -0.5, (32, 48)).astype(np.float32)
    return [a, b, np.zeros((64, 48), np.float32)], lambda a, b: a @ b


def _conv_inputs(rng):
    x = rng.uniform(0.5, 1.5, (1, 8, 8, 8)).astype(np.float32)
    w = rng.uniform(-1.0, 1.0, (3, 3, 8, 16)).astype(np.float32)

    def ref(x, w):
        p = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
        out = np.zeros((1, 8, 8, 16), np.float64)
        for rh in range(3):
            for rw in range(3):
                out += np.einsum("nhwc,cf->nhwf", p[:, rh:rh + 8, rw:rw + 8, :], w[rh, rw])
        return np.maximum(out, 0)
    return [x, w, np.zeros((1, 8, 8, 16), np.float32)], ref


WORKLOADS = {"mm": (MATMUL, _mm_inputs), "bmm": (BMM, _bmm_inputs),
             "conv": (CONV, _conv_inputs)}
# the conv2d schedules are validated only: their CUDA lowering (the barrier pass) is slow
RUN = ("bmm", "mm")


def _sketch(name):
    mod = tirkit.parse(WORKLOADS[name][0]).module
    sketches = design_space(mod, name, TARGET)
    assert len(sketches) == 1 and isinstance(sketches[0], GpuTiledSketch)
    return mod, sketches[0]


def _threads(d):
    return int(np.prod([t[2] for t in d["tiles"] if len(t) == 5]))


def _within_limits(sk, d):
    spatial = [t for t in d["tiles"] if len(t) == 5]
    assert [int(np.prod(t)) for t in d["tiles"]] == [lp.extent for lp in sk.loops]
    assert [len(t) for t in d["tiles"]] == [5 if lp.kind == "S" else 3 for lp in sk.loops]
    assert all(t[-1] <= 64 for t in d["tiles"])
    assert 1 <= _threads(d) <= 1024
    assert int(np.prod([t[1] for t in spatial])) <= MAX_VTHREAD
    assert int(np.prod([t[1] * t[3] * t[4] for t in spatial])) <= MAX_LOCAL
    assert sk.shared_bytes(d["tiles"]) <= 48 * 1024
    assert all(v in (1, 2, 4) for v in d["vec"]) and len(d["vec"]) == len(sk.operands)


def test_a_cuda_target_gives_the_gpu_sketch_and_the_cpu_keeps_its_own():
    mod = tirkit.parse(MATMUL).module
    (sk,) = design_space(mod, "mm", "cuda")            # an alias of cuda-sm80
    assert sk.target == "cuda-sm80" and sk.consumer is None and sk.inline == ()
    assert sk.operands == (Operand("A", 4, (0, 2)), Operand("B", 4, (1, 2)))
    cpu = design_space(mod, "mm")
    assert cpu and all(isinstance(s, TiledSketch) for s in cpu)
    assert [s.name for s in design_space(mod, "mm", "llvm")] == [s.name for s in cpu]
    with pytest.raises(ValueError, match="unknown target 'cuda-sm99'"):
        design_space(mod, "mm", "cuda-sm99")
    _, conv = _sketch("conv")
    assert conv.inline == ("pad",) and conv.consumer == "relu"
    assert [op.name for op in conv.operands] == ["X", "W"]


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_sampled_schedules_apply_validate_and_mutate_within_the_extents(name):
    mod, sk = _sketch(name)
    rng = np.random.default_rng(5)
    for _ in range(10):
        d = sk.sample(rng)
        _within_limits(sk, d)
        sch = sk.apply(mod, d)
        assert validate(sch.mod, TARGET) == []
        text = tirkit.to_script(sch.mod)
        assert text.count('thread="threadIdx.x"') == 1 + len(sk.operands)
        assert 'scope="shared"' in text and 'scope="local"' in text
        for _ in range(3):
            d = sk.mutate(d, rng)
            _within_limits(sk, d)
    d = sk.mutate(d, rng)
    assert validate(sk.apply(mod, d).mod, TARGET) == []


def test_samples_of_a_large_matmul_are_repaired_into_the_block_limits():
    big = MATMUL.replace("64, 32", "1024, 2048").replace("32, 48", "2048, 1024") \
        .replace("64, 48", "1024, 1024").replace("T.grid(64, 48, 32)", "T.grid(1024, 1024, 2048)")
    mod = tirkit.parse(big).module
    (sk,) = design_space(mod, "mm", TARGET)
    rng = np.random.default_rng(0)
    samples = [sk.sample(rng) for _ in range(30)]
    for d in samples:
        _within_limits(sk, d)
    assert len({_threads(d) for d in samples}) > 3        # not all pushed to one block shape
    assert validate(sk.apply(mod, samples[0]).mod, TARGET) == []


def _sampled_with_threads(sk, rng, n, min_threads=32):
    out = []
    while len(out) < n:
        d = sk.sample(rng)
        if _threads(d) >= min_threads:
            out.append(d)
    return out


@pytest.mark.parametrize("name", RUN)
def test_sampled_schedules_run_in_the_thread_interpreter_and_equal_numpy(name):
    mod, sk = _sketch(name)
    rng = np.random.default_rng(11)
    for d in _sampled_with_threads(sk, rng, 3):
        sch = sk.apply(mod, d)
        arrays, ref = WORKLOADS[name][1](rng)
        want = ref(*arrays[:2])
        it = run_threads(sch.func(), arrays, module=sch.mod, blocks=2)
        got, mask = arrays[2], it.written_mask(arrays[2])
        blocks = int(np.prod([t[0] for t in d["tiles"] if len(t) == 5]))
        tile = got.size // blocks
        assert mask.sum() == min(blocks, 2) * tile       # the blocks that ran wrote their tile
        err = np.max(np.abs(got[mask] - want[mask])) / np.max(np.abs(want))
        assert err < 1e-5, (d, err)


def test_the_generated_cuda_compiles_with_nvcc_for_sm80():
    if find_nvcc() is None:
        pytest.skip("nvcc is not installed (pip install nvidia-cuda-nvcc nvidia-cuda-runtime "
                    "nvidia-cuda-cccl, the cuda-compile extra)")
    parts, names = [PRELUDE], []
    rng = np.random.default_rng(2)
    for name in RUN:
        mod, sk = _sketch(name)
        for i in range(3):
            sch = sk.apply(mod, sk.sample(rng))
            src = emit_cuda(sch.func(), sch.mod)
            code = src.kernels_code
            for launch in src.kernels:          # one translation unit: names made unique
                code = re.sub(rf"\b{launch.name}\b", f"{launch.name}_{name}{i}", code)
                names.append(f"{launch.name}_{name}{i}")
            assert "__shared__" in code and "threadIdx.x" in code
            parts.append(code)
    ptx = compile_cuda("\n".join(parts), "sm_80", "ptx").decode()
    assert ".target sm_80" in ptx
    for n in names:
        assert f".entry {n}(" in ptx
