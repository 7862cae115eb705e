import numpy as np
import pytest

import tirkit
from tirkit import codegen
from tirkit.codegen.interp import run_reference
from tirkit.schedule import Schedule, ScheduleError
from tirkit.tensorize.library import desc_semantics

from util import AVX2, gemm, inputs, schedule


def tensorized(M, N, K, intrin=AVX2):
    sch = schedule(gemm(M, N, K))
    sch.auto_tensorize(sch.get_block("C"), intrin)
    return sch


@pytest.mark.parametrize("M,N,K", [(16, 32, 64), (9, 13, 10), (5, 8, 4)])
def test_auto_tensorize_runs_bit_exact(M, N, K):
    sch = tensorized(M, N, K)
    text = sch.script()
    assert tirkit.check(text) == []
    f = sch.mod["gemm"]
    A, B, ref = inputs(M, N, K, seed=M + N + K)
    C = np.full((M, N), 7, "int32")
    codegen.build(f, sch.mod)(A, B, C)
    assert np.array_equal(C, ref)
    C2 = np.full((M, N), 7, "int32")
    run_reference(f, [A, B, C2], module=sch.mod)
    assert np.array_equal(C2, ref)


def test_tensorized_block_has_the_impl_and_the_interpreter_reads_its_desc():
    sch = tensorized(16, 16, 16)
    text = sch.script()
    assert '"llvm.x86.avx2.pmadd.ub.sw"' in text and "T.match_buffer(B_reindex[" in text
    blk = sch.get(sch.get_block("C_o"))
    desc = desc_semantics(blk)
    from tirkit.ir import expr as E
    from tirkit.ir.visit import find_all
    assert find_all(blk.body, lambda c: c.op == "call_llvm_pure_intrin", E.Call)
    assert desc is not None and not find_all(desc, lambda c: True, E.Call)
    assert [b.name for b in {id(x.buffer): x.buffer for x in find_all(
        desc, lambda x: True, E.BufferLoad)}.values()] == ["C_1", "A_1", "B_1"]


def test_trace_replays_to_the_same_module():
    sch = tensorized(32, 21, 34)
    lines = sch.trace.as_python()
    assert "sch.auto_tensorize" not in lines
    for step in ("pad_einsum", "reindex", "transform_layout", "split", "reorder", "blockize",
                 "tensorize"):
        assert f"sch.{step}(" in lines
    again = sch.trace.apply(Schedule(sch.original))
    assert tirkit.structural_equal(again.mod, sch.mod)


def test_vnni_compiles_to_vpdpbusd():
    from tirkit.codegen.llvm import engine
    import llvmlite.binding as llvm
    sch = tensorized(16, 32, 64, "x86.vnni.dot_16x4_u8s8s32")
    ir = codegen.emit_llvm(sch.mod["gemm"], sch.mod)
    assert "llvm.x86.avx512.vpdpbusd.512" in ir
    engine.init()
    target = llvm.Target.from_default_triple()
    tm = target.create_target_machine(cpu="znver4", features="+avx512f,+avx512bw,+avx512vnni",
                                      opt=2)
    mod = llvm.parse_assembly(ir)
    mod.verify()
    assert "vpdpbusd" in tm.emit_assembly(mod)


def test_refusals():
    sch = schedule(gemm(16, 16, 16, a="int8"))
    with pytest.raises(ScheduleError) as e:
        sch.auto_tensorize(sch.get_block("C"), AVX2)
    assert e.value.kind == "auto_tensorize/not-feasible"
    sch = schedule(gemm(16, 16, 16))
    with pytest.raises(ScheduleError) as e:
        sch.tensorize(sch.get_block("C"), "no.such.intrinsic")
    assert e.value.kind == "tensorize/unknown-intrinsic"
    # the loop nest not split to the instruction's shape: the inner block is 16 x 16
    i, j, k = sch.get_loops(sch.get_block("C"))
    with pytest.raises(ScheduleError) as e:
        sch.tensorize(j, AVX2)
    assert e.value.kind == "tensorize/mismatch"


def test_transform_layout_checks_its_map():
    sch = schedule(gemm(16, 16, 16))
    b = sch.get_block("C")
    sch.reindex(b, ("read", 1))
    with pytest.raises(ScheduleError) as e:
        sch.transform_layout(b, ("read", 1), "lambda j, k: (j // 2, k // 2)")
    assert e.value.kind == "transform_layout/not-bijective"
    # (j + k, k % 2): (0, 2) and (2, 0) meet; (j + k, k) tells every pair apart
    with pytest.raises(ScheduleError) as e:
        sch.copy().transform_layout(b, ("read", 1), "lambda j, k: (j + k, k % 2)")
    assert e.value.kind == "transform_layout/not-bijective"
    sch.copy().transform_layout(b, ("read", 1), "lambda j, k: (j + k, k)")
    with pytest.raises(ScheduleError) as e:
        sch.transform_layout(b, ("read", 1), "lambda j, k: (__import__('os'), k)")
    assert e.value.kind == "transform_layout/bad-map"
    sch.transform_layout(b, ("read", 1), "lambda j, k: (k // 4, j, k % 4)")
    assert "B_reindex = T.alloc_buffer((4, 16, 4), \"int8\")" in sch.script()
    A, B, ref = inputs(16, 16, 16)
    C = np.zeros((16, 16), "int32")
    codegen.build(sch.mod["gemm"], sch.mod)(A, B, C)
    assert np.array_equal(C, ref)


def test_block_without_declared_regions():
    text = gemm(12, 21, 10).replace("            T.reads(A[vi, vk], B[vk, vj])\n", "") \
        .replace("            T.writes(C[vi, vj])\n", "")
    sch = schedule(text)
    sch.auto_tensorize(sch.get_block("C"), AVX2)
    assert tirkit.check(sch.script()) == []
    A, B, ref = inputs(12, 21, 10, seed=5)
    C = np.zeros((12, 21), "int32")
    codegen.build(sch.mod["gemm"], sch.mod)(A, B, C)
    assert np.array_equal(C, ref)


def test_operation_count_of_a_tensorized_kernel_is_its_descs():
    from tirkit.codegen.flops import count_ops
    from tirkit.codegen.passes import lower
    from tirkit.tensorize.library import with_desc_semantics
    import dataclasses
    plain = schedule(gemm(16, 32, 64))
    sch = tensorized(16, 32, 64)
    f = sch.mod["gemm"]
    counted = dataclasses.replace(f, body=with_desc_semantics(f.body))
    want = count_ops(lower(plain.mod["gemm"], plain.mod).body)
    assert want[1] == 2 * 16 * 32 * 64
    assert count_ops(lower(counted, sch.mod).body) == want
    assert count_ops(lower(f, sch.mod).body)[1] < want[1]      # the impl's calls count nothing
