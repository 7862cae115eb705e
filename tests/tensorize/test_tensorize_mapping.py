import tirkit
from tirkit.tensorize import find_mapping, load

from util import AVX2, EXAMPLE, gemm, schedule


def realize(text, name="C"):
    sch = schedule(text)
    return sch.block_info(sch.get_block(name)).realize


def test_gemm_maps_j_to_lanes_and_k_to_the_dot():
    m = find_mapping(realize(gemm(64, 64, 64)), load().get("x86.vnni.dot_16x4_u8s8s32"))
    assert m.feasible
    assert m.chosen == ["vj", "vk"] and m.extents == [16, 4]
    assert [(o.buffer.name, o.layout) for o in m.operands] == \
        [("A", "direct"), ("B", "reindex+pack"), ("C", "direct")]
    assert m.operands[1].index_map == "lambda vj, vk: (vj // 16, vk // 4, vj % 16, vk % 4)"
    assert m.padded == [] and m.waste == 0


def test_padding_is_reported_with_its_waste():
    m = find_mapping(realize(gemm(32, 61, 250)), load().get(AVX2))
    assert m.padded == [("vj", 61, 64), ("vk", 250, 252)]
    assert 0 < m.waste < 0.1
    m = find_mapping(realize(gemm(32, 9, 64)), load().get("x86.vnni.dot_16x4_u8s8s32"))
    assert not m.feasible and m.code == "padding-waste"


def test_an_iterator_without_values_is_not_tensorized():
    # a reduction over an empty range (`k` in -3): nothing to map, and no division by the
    # work it would do (the hint rule used to fail there)
    text = gemm(32, 64, 256)
    empty = text.replace("T.grid(32, 64, 256)", "T.grid(32, 64, -3)")
    assert empty != text
    m = find_mapping(realize(empty), load().get("x86.vnni.dot_16x4_u8s8s32"))
    assert not m.feasible and m.code == "padding"
    assert m.message == "iterator `vk` has no value (extent -3)"
    assert [d for d in tirkit.check(empty) if d.code in ("internal", "tensorize/available")] == []


def test_reasons():
    lib = load()
    vnni = lib.get("x86.vnni.dot_16x4_u8s8s32")
    fp32 = realize((EXAMPLE / "matmul.py").read_text())
    assert find_mapping(fp32, vnni).code == "dtype"
    assert find_mapping(realize(gemm(16, 16, 16, a="int8")), vnni).code == "dtype"
    transposed = gemm(16, 16, 16).replace("A[vi, vk]", "A[vk, vi]")
    assert find_mapping(realize(transposed), vnni).code == "stride"
    copy = '''from tvm.script import tir as T


@T.prim_func
def f(A: T.Buffer((16, 16), "int32"), C: T.Buffer((16, 16), "int32")):
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] + 1
'''
    assert find_mapping(realize(copy), vnni).code == "no-reduction"


def test_example_file_maps():
    text = (EXAMPLE / "matmul_u8s8s32.py").read_text()
    assert [d.code for d in tirkit.check(text)] == ["tensorize/available"]
    assert find_mapping(realize(text), load().get(AVX2)).feasible
