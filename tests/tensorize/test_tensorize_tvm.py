"""Where TVM 0.27's tensorize accepts the same schedule, our tensorized IR is structurally
equal to TVM's (the VNNI and AVX-512 forms of the 16x4 dot product). The mapping's agreement
with TVM's `get_auto_tensorize_mapping_info` is benchmarks/tensorize_oracle.py's."""
import importlib.util
import pathlib
import sys

import pytest

import tirkit

tvm = pytest.importorskip("tvm")

SRC = '''# from tvm.script import tirx as T
@T.prim_func(s_tir=True)
def gemm(A: T.Buffer((32, 64), "uint8"), B: T.Buffer((64, 48), "int8"),
         C: T.Buffer((32, 48), "int32")):
    for i, j, k in T.grid(32, 48, 64):
        with T.sblock("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.reads(A[vi, vk], B[vk, vj])
            T.writes(C[vi, vj])
            with T.init():
                C[vi, vj] = 0
            C[vi, vj] = C[vi, vj] + T.Cast("int32", A[vi, vk]) * T.Cast("int32", B[vk, vj])
'''
PACK = "lambda vj, vk: (vj // 16, vk // 4, vj % 16, vk % 4)"


def _ours(intrin):
    sch = tirkit.Schedule(tirkit.parse(SRC).module)
    b = sch.get_block("C")
    sch.reindex(b, ("read", 1))
    sch.transform_layout(b, ("read", 1), PACK)
    i, j, k = sch.get_loops(b)
    j0, j1 = sch.split(j, [None, 16])
    k0, k1 = sch.split(k, [None, 4])
    sch.reorder(i, j0, k0, j1, k1)
    ob = sch.blockize(j1)
    sch.decompose_reduction(ob, k0)
    sch.tensorize(ob, intrin)
    return sch.mod.functions[0][1]


def _register_x86_intrinsics():
    """Register TVM's x86 tensor intrinsics. `import tvm.s_tir.tensor_intrin.x86` first runs
    the package's __init__, which defines every target's intrinsics (CUDA's alone take 32 s on
    a Zen 1 host); the x86 module needs only `tvm.s_tir`, so it is loaded by itself, under its
    own name (a later import of the package finds it and does not register it twice)."""
    name = "tvm.s_tir.tensor_intrin.x86"
    if name in sys.modules:
        return
    from tvm import s_tir
    spec = importlib.util.spec_from_file_location(
        name, pathlib.Path(s_tir.__file__).parent / "tensor_intrin" / "x86.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise


def _theirs(intrin):
    from tvm import s_tir
    _register_x86_intrinsics()
    sch = s_tir.Schedule(tvm.script.from_source(SRC.split("\n", 1)[1]))
    b = sch.get_sblock("C")
    sch.reindex(b, ("read", 1))
    sch.transform_layout(b, ("read", 1), lambda vj, vk: (vj // 16, vk // 4, vj % 16, vk % 4))
    i, j, k = sch.get_loops(b)
    j0, j1 = sch.split(j, [None, 16])
    k0, k1 = sch.split(k, [None, 4])
    sch.reorder(i, j0, k0, j1, k1)
    ob = sch.blockize(j1)
    sch.decompose_reduction(ob, k0)
    sch.tensorize(ob, intrin)
    return tirkit.parse(sch.mod["main"].script()).module.functions[0][1]


@pytest.mark.parametrize("ours,theirs", [("x86.vnni.dot_16x4_u8s8s32", "dot_16x4_vnni"),
                                         ("x86.avx512.dot_16x4_u8s8s32", "dot_16x4_avx512")])
def test_tensorized_ir_equals_tvms(ours, theirs):
    a, b = _ours(ours), _theirs(theirs)
    assert tirkit.structural_equal(a.body, b.body)
    assert not tirkit.structural_equal(_ours("x86.vnni.dot_16x4_u8s8s32").body,
                                       _theirs("dot_16x4_avx512").body)
