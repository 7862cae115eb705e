"""The CUDA tensor-core intrinsics (wmma m16n16k16 f16·f16→f32 and s8·s8→s32, mma.sync
m16n8k16 f16·f16→f32 and m16n8k32 s8·s8→s32 through T.ptx_mma): offered for CUDA targets only, mapped onto a GEMM block in place (strided views, no packing),
auto-tensorized into wmma calls that the thread interpreter runs against numpy, that the
sequential interpreter runs through the intrinsic's desc, and whose CUDA C compiles with
nvcc for sm_80 and sm_90."""
from __future__ import annotations

import numpy as np
import pytest

import tirkit
from tirkit.codegen.cuda import emit_cuda
from tirkit.codegen.cuda.nvcc import ARCHS, compile_cuda, find_nvcc
from tirkit.codegen.cuda.threads import Race, run_threads
from tirkit.codegen.interp import run_reference
from tirkit.tensorize.library import load
from tirkit.tensorize.mapping import find_mapping
from tirkit.tensorize.suggest import block_mappings, hover_lines

from util import schedule

F16 = "cuda.wmma.m16n16k16_f16f16f32"
S8 = "cuda.wmma.m16n16k16_s8s8s32"
MMA = "cuda.mma.m16n8k16_f16f16f32"
MMA8 = "cuda.mma.m16n8k32_s8s8s32"
TYPES = {F16: ("float16", "float32"), S8: ("int8", "int32"), MMA: ("float16", "float32"),
         MMA8: ("int8", "int32")}
INT8 = (S8, MMA8)


def gemm(M, N, K, intrin, warp=True):
    """C = A @ B; with `warp`, under one warp (threadIdx.x of 32) that runs the wmma calls."""
    a, acc = TYPES[intrin]
    head = '    for tx in T.thread_binding(32, thread="threadIdx.x"):\n' if warp else ""
    pad = "    " if warp else ""
    body = f'''    for i, j, k in T.grid({M}, {N}, {K}):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.reads(A[vi, vk], B[vk, vj])
            T.writes(C[vi, vj])
            with T.init():
                C[vi, vj] = T.{acc}(0)
            C[vi, vj] = C[vi, vj] + T.Cast("{acc}", A[vi, vk]) * T.Cast("{acc}", B[vk, vj])
'''
    body = "".join(pad + line if line.strip() else line for line in body.splitlines(True))
    return f'''from tvm.script import tir as T


@T.prim_func
def gemm(A: T.Buffer(({M}, {K}), "{a}"), B: T.Buffer(({K}, {N}), "{a}"),
         C: T.Buffer(({M}, {N}), "{acc}")):
    T.func_attr({{"global_symbol": "gemm", "tir.noalias": True}})
{head}{body}'''


def tensorized(M, N, K, intrin, warp=True):
    sch = schedule(gemm(M, N, K, intrin, warp))
    sch.auto_tensorize(sch.get_block("C"), intrin)
    return sch


def operands(M, N, K, intrin, seed):
    rng = np.random.default_rng(seed)
    if intrin not in INT8:
        A = rng.standard_normal((M, K)).astype("float16")
        B = rng.standard_normal((K, N)).astype("float16")
        return A, B, A.astype(np.float64) @ B.astype(np.float64)
    A = rng.integers(-128, 128, (M, K)).astype("int8")
    B = rng.integers(-128, 128, (K, N)).astype("int8")
    return A, B, (A.astype(np.int64) @ B.astype(np.int64))


def check(C, ref, intrin):
    if intrin not in INT8:  # f16 products are exact in f32; only the f32 sums round
        assert np.allclose(C, ref, rtol=1e-5, atol=1e-4), np.abs(C - ref).max()
    else:
        assert np.array_equal(C, ref.astype(np.int32))


def test_offered_on_cuda_targets_only():
    lib = load()
    for name in (F16, S8):
        it = lib.get(name)
        assert it.available_on("cuda-sm80") and it.available_on("cuda-sm90")
        assert not it.available_on("llvm") and not it.available_on("llvm -mattr=+avx512f")
    assert lib.get("wmma_sync_16x16x16_f16f16f32").name == F16      # TVM's name
    assert not lib.get(S8).available_on("cuda-sm70")                # s8 wmma: sm_72 on


@pytest.mark.parametrize("intrin", [F16, S8])
def test_mapping_takes_the_operands_in_place(intrin):
    sch = schedule(gemm(64, 32, 48, intrin))
    r = sch.block_info(sch.get_block("C")).realize
    m = find_mapping(r, load().get(intrin))
    assert m.feasible, m.message
    assert m.chosen == ["vi", "vj", "vk"] and m.extents == [16, 16, 16]
    assert [(o.buffer.name, o.layout) for o in m.operands] == \
        [("A", "direct"), ("B", "direct"), ("C", "direct")]
    # a transposed B is not where the instruction reads it: packed
    text = gemm(64, 32, 48, intrin).replace("B[vk, vj]", "B[vj, vk]").replace(
        "(48, 32)", "(32, 48)")
    sch = schedule(text)
    m = find_mapping(sch.block_info(sch.get_block("C")).realize, load().get(intrin))
    assert m.feasible and [o.layout for o in m.operands] == ["direct", "pack", "direct"]


def test_refused_where_the_types_differ():
    sch = schedule(gemm(32, 32, 32, F16).replace('"float32"', '"float16"').replace(
        "T.float16(0)", "T.float16(0)"))
    m = find_mapping(sch.block_info(sch.get_block("C")).realize, load().get(F16))
    assert not m.feasible and m.code == "dtype"


def test_hint_and_hover_name_wmma_for_a_cuda_target():
    sch = schedule(gemm(64, 64, 64, F16))
    r = sch.block_info(sch.get_block("C")).realize
    ok, _ = block_mappings(r, "cuda-sm80")
    assert {m.intrin.name for m in ok} == {F16, MMA}
    lines = hover_lines(r, "cuda-sm80")
    assert any(line.startswith("- **CUDA wmma (f16·f16→f32, 16x16x16)**") for line in lines)
    assert any(line.startswith("- **CUDA mma.sync (f16·f16→f32, m16n8k16)**") for line in lines)
    assert not block_mappings(r, "llvm")[0]
    assert any(line.startswith(f"- not `{F16}`: llvm lacks") for line in hover_lines(r, "llvm"))


@pytest.mark.parametrize("intrin", [F16, S8])
@pytest.mark.parametrize("M,N,K", [(32, 64, 48), (16, 16, 16)])
def test_tensorized_gemm_runs_in_the_thread_interpreter(intrin, M, N, K):
    sch = tensorized(M, N, K, intrin)
    text = sch.script()
    assert tirkit.check(text) == []
    assert "T.tvm_mma_sync(" in text and 'T.tvm_storage_sync("warp")' in text
    assert "_reindex" not in text                       # nothing packed
    A, B, ref = operands(M, N, K, intrin, seed=M + N + K)
    C = np.full((M, N), 3, TYPES[intrin][1])
    run_threads(sch.mod["gemm"], [A, B, C], module=sch.mod)
    check(C, ref, intrin)


@pytest.mark.parametrize("intrin", [F16, S8])
def test_sequential_interpreter_runs_the_desc(intrin):
    sch = tensorized(48, 32, 32, intrin, warp=False)
    A, B, ref = operands(48, 32, 32, intrin, seed=5)
    C = np.full((48, 32), 3, TYPES[intrin][1])
    run_reference(sch.mod["gemm"], [A, B, C], module=sch.mod)
    check(C, ref, intrin)


def test_the_warp_barriers_are_needed():
    """Without the impl's __syncwarp the lanes' C tile accesses race (the detector says so)."""
    sch = tensorized(32, 32, 32, F16)
    from tirkit.ir import expr as E
    from tirkit.ir import stmt as S
    from tirkit.ir.visit import rebuild
    f = sch.mod["gemm"]

    def drop(y, x):
        if isinstance(y, S.Evaluate) and isinstance(y.value, E.Call) and \
                y.value.op == "tvm_storage_sync":
            return S.Evaluate(E.IntImm("int32", 0))
        return None
    import dataclasses
    bare = dataclasses.replace(f, body=rebuild(f.body, drop))
    A, B, _ = operands(32, 32, 32, F16, seed=1)
    with pytest.raises(Race):
        run_threads(bare, [A, B, np.zeros((32, 32), "float32")], module=sch.mod)


@pytest.mark.parametrize("arch", ARCHS)
def test_cuda_c_compiles_with_nvcc(arch):
    if find_nvcc() is None:
        pytest.skip("nvcc is not installed (the cuda-compile extra)")
    codes = []
    for n, intrin in enumerate((F16, S8)):
        src = emit_cuda(tensorized(32, 64, 48, intrin).mod["gemm"])
        assert "nvcuda::wmma::mma_sync(" in src.code and "__syncwarp();" in src.code
        assert src.kernels[0].block == (32, 1, 1)
        codes.append(src.code.replace("gemm_kernel", f"gemm_kernel_{n}") if n else src.code)
    code = codes[0] + "\n" + codes[1].split("\n\n", 1)[1]
    ptx = compile_cuda(code, arch, "ptx").decode()
    assert "wmma.mma.sync.aligned" in ptx and ".f16" in ptx and ".s8" in ptx
    assert "bar.warp.sync" in ptx


CONV = '''from tvm.script import tir as T


@T.prim_func
def c2d(X: T.Buffer((1, 16, 16, 32), "int8"), W: T.Buffer((3, 3, 32, 16), "int8"),
        Y: T.Buffer((1, 14, 14, 16), "int32")):
    for n, h, w, co, rh, rw, ci in T.grid(1, 14, 14, 16, 3, 3, 32):
        with T.block("C"):
            vn, vh, vw, vco, vrh, vrw, vci = T.axis.remap("SSSSRRR", [n, h, w, co, rh, rw, ci])
            with T.init():
                Y[vn, vh, vw, vco] = 0
            Y[vn, vh, vw, vco] = Y[vn, vh, vw, vco] + T.Cast("int32", X[vn, vh + vrh, vw + vrw, vci]) * T.Cast("int32", W[vrh, vrw, vci, vco])
'''


def test_conv_with_padded_window_iterator():
    """w (14) is padded to 16 although the input reads `w + rw`: the input is reindexed
    first (a copy indexed by the block's iterators), then padded, then packed."""
    sch = schedule(CONV)
    m = find_mapping(sch.block_info(sch.get_block("C")).realize, load().get(S8))
    assert m.feasible, m.message
    assert m.padded == [("vw", 14, 16)]
    assert [o.layout for o in m.operands] == ["reindex+pack", "direct", "direct"]
    sch.auto_tensorize(sch.get_block("C"), S8)
    steps = [line.split("sch.")[1].split("(")[0] for line in
             sch.trace.as_python().splitlines() if "sch." in line]
    assert steps.index("reindex") < steps.index("pad_einsum") < \
        steps.index("transform_layout")
    rng = np.random.default_rng(2)
    X = rng.integers(-128, 128, (1, 16, 16, 32)).astype("int8")
    W = rng.integers(-128, 128, (3, 3, 32, 16)).astype("int8")
    ref = np.zeros((1, 14, 14, 16), np.int64)
    for rh in range(3):
        for rw in range(3):
            ref += np.einsum("nhwc,co->nhwo", X[:, rh:rh + 14, rw:rw + 14].astype(np.int64),
                             W[rh, rw].astype(np.int64))
    Y = np.full((1, 14, 14, 16), 9, "int32")
    run_reference(sch.mod["c2d"], [X, W, Y], module=sch.mod)
    assert np.array_equal(Y, ref)


def mma_kernel(M, N, K, intrin=MMA):
    """The GEMM tensorized with mma.sync (its impl launches the warp's threadIdx.x), its
    tile loops bound to blockIdx.x and blockIdx.y."""
    sch = schedule(gemm(M, N, K, intrin, warp=False))
    outer = sch.auto_tensorize(sch.get_block("C"), intrin)
    loops = sch.get_loops(outer)
    sch.bind(loops[0], "blockIdx.x")
    sch.bind(loops[1], "blockIdx.y")
    return sch


@pytest.mark.parametrize("intrin, tile", [(MMA, [16, 8, 16]), (MMA8, [16, 8, 32])])
def test_mma_mapping(intrin, tile):
    sch = schedule(gemm(32, 24, 64, intrin, warp=False))
    m = find_mapping(sch.block_info(sch.get_block("C")).realize, load().get(intrin))
    assert m.feasible and m.extents == tile
    assert [o.layout for o in m.operands] == ["direct", "direct", "direct"]
    assert load().get(intrin).available_on("cuda-sm80")
    assert not load().get(intrin).available_on("llvm")


@pytest.mark.parametrize("intrin, M, N, K", [(MMA, 32, 24, 48), (MMA, 16, 8, 16),
                                             (MMA8, 32, 24, 64), (MMA8, 16, 8, 32)])
def test_mma_runs_in_the_thread_interpreter(intrin, M, N, K):
    sch = mma_kernel(M, N, K, intrin)
    text = sch.script()
    assert tirkit.check(text) == []
    assert "T.ptx_mma(" in text and 'tx = T.launch_thread("threadIdx.x", 32)' in text
    a, acc = TYPES[intrin]
    A, B, ref = operands(M, N, K, intrin, seed=M * N + K)
    C = np.full((M, N), 3, acc)
    run_threads(sch.mod["gemm"], [A, B, C], module=sch.mod)
    check(C, ref, intrin)
    # the sequential interpreter runs the untouched (unbound) kernel through the desc
    sch = schedule(gemm(M, N, K, intrin, warp=False))
    sch.auto_tensorize(sch.get_block("C"), intrin)
    C = np.full((M, N), 3, acc)
    run_reference(sch.mod["gemm"], [A, B, C], module=sch.mod)
    check(C, ref, intrin)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("intrin, K, instruction", [
    (MMA, 48, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"),
    (MMA8, 64, "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32")])
def test_mma_cuda_c_compiles_with_nvcc(arch, intrin, K, instruction):
    if find_nvcc() is None:
        pytest.skip("nvcc is not installed (the cuda-compile extra)")
    src = emit_cuda(mma_kernel(32, 24, K, intrin).mod["gemm"])
    assert src.kernels[0].grid == (2, 3, 1) and src.kernels[0].block == (32, 1, 1)
    ptx = compile_cuda(src.code, arch, "ptx").decode()
    assert instruction in ptx
    assert "bar.warp.sync" in ptx
