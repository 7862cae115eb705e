"""AVX-512 BF16 vdpbf16ps 16x2 (bf16·bf16→f32) on a bf16 GEMM: mapped (B packed to
[N/16, K/2, 16, 2]), offered for a target with +avx512bf16 only, compiled to `vdpbf16ps`,
run where this CPU has AVX-512 BF16 (else the assembly is checked instead: executing the
instruction would fault) against numpy's float32 product of the bf16 inputs, and run by the
sequential interpreter through the desc."""
from __future__ import annotations

import numpy as np
import pytest

import tirkit
from tirkit import codegen
from tirkit.codegen.interp import run_reference
from tirkit.tensorize.library import host_features, load
from tirkit.tensorize.mapping import find_mapping
from tirkit.tensorize.suggest import block_mappings, hover_lines

from util import schedule

ml_dtypes = pytest.importorskip("ml_dtypes")
BF16 = "x86.avx512bf16.dot_16x2_bf16bf16f32"
TARGET = "llvm -mattr=+avx512f,+avx512bf16"


def gemm(M, N, K):
    return f'''from tvm.script import tir as T


@T.prim_func
def gemm(A: T.Buffer(({M}, {K}), "bfloat16"), B: T.Buffer(({K}, {N}), "bfloat16"),
         C: T.Buffer(({M}, {N}), "float32")):
    T.func_attr({{"global_symbol": "gemm", "tir.noalias": True}})
    for i, j, k in T.grid({M}, {N}, {K}):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + T.Cast("float32", A[vi, vk]) * T.Cast("float32", B[vk, vj])
'''


def inputs(M, N, K, seed):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((M, K)).astype(ml_dtypes.bfloat16)
    B = rng.standard_normal((K, N)).astype(ml_dtypes.bfloat16)
    return A, B, A.astype(np.float32) @ B.astype(np.float32)


def test_mapping_and_hint():
    sch = schedule(gemm(32, 32, 64))
    r = sch.block_info(sch.get_block("C")).realize
    m = find_mapping(r, load().get(BF16))
    assert m.feasible and m.chosen == ["vj", "vk"] and m.extents == [16, 2]
    assert [o.layout for o in m.operands] == ["direct", "reindex+pack", "direct"]
    ok, _ = block_mappings(r, TARGET)
    assert [x.intrin.name for x in ok] == [BF16]
    assert hover_lines(r, TARGET)[0].startswith("- **x86 AVX-512 BF16 (bf16·bf16→f32, 16x2)**")
    assert "flushes subnormal" in hover_lines(r, TARGET)[0]                 # the caveat
    assert not block_mappings(r, "llvm -mattr=+avx512f,+avx512vnni")[0]
    # an fp32 GEMM is not a bf16 one
    sch = schedule(gemm(32, 32, 64).replace('"bfloat16"', '"float32"'))
    m = find_mapping(sch.block_info(sch.get_block("C")).realize, load().get(BF16))
    assert not m.feasible and m.code == "dtype"


@pytest.mark.parametrize("M,N,K", [(16, 32, 64), (9, 28, 7)])
def test_compiles_and_runs(M, N, K):
    sch = schedule(gemm(M, N, K))
    sch.auto_tensorize(sch.get_block("C"), BF16)
    assert tirkit.check(sch.script()) == []
    f = sch.mod["gemm"]
    A, B, ref = inputs(M, N, K, seed=M + N + K)
    C = np.full((M, N), 2, "float32")
    run_reference(f, [A, B, C], module=sch.mod)
    assert np.allclose(C, ref, rtol=1e-5, atol=1e-5)
    ir = codegen.emit_llvm(f, sch.mod)
    assert "llvm.x86.avx512bf16.dpbf16ps.512" in ir
    if "+avx512bf16" in host_features():
        C = np.full((M, N), 2, "float32")
        codegen.build(f, sch.mod)(A, B, C)
        assert np.allclose(C, ref, rtol=1e-5, atol=1e-5), np.abs(C - ref).max()
    else:
        # this CPU lacks AVX-512 BF16: running would fault, so check the instruction is there
        import llvmlite.binding as llvm
        from tirkit.codegen.llvm import engine
        engine.init()
        tm = llvm.Target.from_default_triple().create_target_machine(
            cpu="sapphirerapids", features="+avx512f,+avx512bf16", opt=2)
        mod = llvm.parse_assembly(ir)
        mod.verify()
        assert "vdpbf16ps" in tm.emit_assembly(mod)


def test_assembly_holds_vdpbf16ps():
    """On every host: the instruction in the compiled code for a BF16 CPU."""
    import llvmlite.binding as llvm
    from tirkit.codegen.llvm import engine
    sch = schedule(gemm(16, 32, 64))
    sch.auto_tensorize(sch.get_block("C"), BF16)
    engine.init()
    tm = llvm.Target.from_default_triple().create_target_machine(
        cpu="sapphirerapids", features="+avx512f,+avx512bf16", opt=2)
    mod = llvm.parse_assembly(codegen.emit_llvm(sch.mod["gemm"], sch.mod))
    assert "vdpbf16ps" in tm.emit_assembly(mod)
