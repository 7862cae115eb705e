"""ARM NEON sdot/udot 4x4 (Armv8.2-A dot product): offered for an aarch64 target with
+dotprod only; this host cannot run them, so the tensorized GEMM is compiled for aarch64
through llvmlite and its assembly holds `sdot`/`udot`, and the sequential interpreter (which
runs the intrinsic's desc) matches numpy."""
from __future__ import annotations

import numpy as np
import pytest

import tirkit
from tirkit import codegen
from tirkit.codegen.interp import run_reference
from tirkit.tensorize.library import load
from tirkit.tensorize.mapping import find_mapping
from tirkit.tensorize.suggest import block_mappings

from util import gemm, schedule

ARM = "llvm -mtriple=aarch64-linux-gnu -mattr=+dotprod"
CASES = {"arm.neon.sdot_4x4_s8s8s32": ("int8", "sdot"),
         "arm.neon.udot_4x4_u8u8u32": ("uint8", "udot")}


def aarch64_assembly(ir):
    import llvmlite.binding as llvm
    from tirkit.codegen.llvm import engine
    engine.init()
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    tm = llvm.Target.from_triple("aarch64-linux-gnu").create_target_machine(
        cpu="generic", features="+neon,+dotprod", opt=2)
    mod = llvm.parse_assembly(ir)
    mod.triple = "aarch64-linux-gnu"
    mod.data_layout = str(tm.target_data)
    mod.verify()
    return tm.emit_assembly(mod)


def test_offered_for_aarch64_with_dotprod_only():
    lib = load()
    names = [i.name for i in lib.for_target(ARM)]
    assert set(CASES) <= set(names) and not any(n.startswith("x86.") for n in names)
    for n in CASES:
        assert not lib.get(n).available_on("llvm -mtriple=aarch64-linux-gnu -mattr=+neon")
        assert not lib.get(n).available_on("llvm -mattr=+avx2,+avx512f,+avx512bw")
    assert lib.get("dot_4x4_i8i8s32_sdot").name == "arm.neon.sdot_4x4_s8s8s32"   # TVM's


@pytest.mark.parametrize("intrin", sorted(CASES))
def test_mapping_and_hint(intrin):
    dt, _ = CASES[intrin]
    sch = schedule(gemm(16, 32, 64, a=dt, b=dt))
    r = sch.block_info(sch.get_block("C")).realize
    m = find_mapping(r, load().get(intrin))
    assert m.feasible and m.chosen == ["vj", "vk"] and m.extents == [4, 4]
    ok, _ = block_mappings(r, ARM)
    assert [x.intrin.name for x in ok] == [intrin]
    # the other one's types differ
    other = next(n for n in CASES if n != intrin)
    assert find_mapping(r, load().get(other)).code == "dtype"


@pytest.mark.parametrize("intrin", sorted(CASES))
@pytest.mark.parametrize("M,N,K", [(16, 32, 64), (7, 10, 13)])
def test_compiles_to_the_instruction_and_the_desc_runs(intrin, M, N, K):
    dt, mnemonic = CASES[intrin]
    sch = schedule(gemm(M, N, K, a=dt, b=dt))
    sch.auto_tensorize(sch.get_block("C"), intrin)
    assert tirkit.check(sch.script()) == []
    ir = codegen.emit_llvm(sch.mod["gemm"], sch.mod)
    assert f"llvm.aarch64.neon.{mnemonic}.v4i32.v16i8" in ir
    asm = aarch64_assembly(ir)
    assert f"\t{mnemonic}\tv" in asm and ".4s" in asm
    rng = np.random.default_rng(M * N + K)
    lo, hi = (-128, 128) if dt == "int8" else (0, 256)
    A = rng.integers(lo, hi, (M, K)).astype(dt)
    B = rng.integers(lo, hi, (K, N)).astype(dt)
    C = np.full((M, N), 4, "int32")
    run_reference(sch.mod["gemm"], [A, B, C], module=sch.mod)
    assert np.array_equal(C, (A.astype(np.int64) @ B.astype(np.int64)).astype(np.int32))
