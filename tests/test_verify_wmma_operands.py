"""The wmma-operands rule: tensor-core builtins whose fragment index is past the fragments
of their buffer, whose tile leaves the memory behind their pointer, or whose fragment and
memory differ in type, reported while the user types; the legal calls it leaves alone."""
import pytest

import tirkit

WMMA = '''from tvm.script import tir as T


@T.prim_func
def k(A: T.Buffer(({na},), "float16"), B: T.Buffer((256,), "float16"), C: T.Buffer((256,), "float32")):
    a = T.alloc_buffer((16, 16), "float16", scope="wmma.matrix_a")
    b = T.alloc_buffer((16, 16), "float16", scope="wmma.matrix_b")
    c = T.alloc_buffer(({nc}, 16), "float32", scope="wmma.accumulator")
    for tx in T.thread_binding(32, thread="threadIdx.x"):
        T.evaluate(T.tvm_fill_fragment(c.data, 16, 16, 16, {fill}, T.float32(0)))
        for i in range({loops}):
            T.evaluate(T.tvm_load_matrix_sync(a.data, 16, 16, 16, 0, T.tvm_access_ptr(T.type_annotation("{at}"), A.data, {a_off}, 256, 1), {stride}, "{layout}"))
        T.evaluate(T.tvm_load_matrix_sync(b.data, 16, 16, 16, 0, T.tvm_access_ptr(T.type_annotation("float16"), B.data, 0, 256, 1), 16, "row_major"))
        T.evaluate(T.tvm_mma_sync(c.data, {mma_c}, a.data, 0, b.data, 0, c.data, {mma_c}))
        T.evaluate(T.tvm_store_matrix_sync(c.data, 16, 16, 16, 0, T.tvm_access_ptr(T.type_annotation("float32"), C.data, 0, 256, 2), 16, "row_major"))
'''
FILL, LOAD, MMA = 10, 12, 14


def check(na=256, nc=16, fill="0", loops=1, at="float16", a_off="0", stride=16,
          layout="row_major", mma_c="0"):
    text = WMMA.format(na=na, nc=nc, fill=fill, loops=loops, at=at, a_off=a_off,
                       stride=stride, layout=layout, mma_c=mma_c)
    return [d for d in tirkit.check(text, "k.py") if d.severity == "error"]


def found(diags):
    return [(d.span.line, d.code) for d in diags]


def test_a_legal_gemm_tile_is_left_alone():
    assert check() == []
    assert check(nc=32, fill="1", mma_c="1") == []          # the second of two fragments
    assert check(na=512, loops=2, a_off="i * 256") == []


@pytest.mark.parametrize("kw, line, words", [
    ({"fill": "1"}, FILL, "uses fragment 1 of 'c', which holds 1 fragment of 16×16 elements"),
    ({"nc": 32, "mma_c": "2"}, MMA,
     "uses fragment 2 of 'c', which holds 2 fragments of 16×16 elements"),
    ({"a_off": "128"}, LOAD, "reads its tile from 'A'[128:384], past its 256 elements"),
    ({"na": 512, "loops": 3, "a_off": "i * 256"}, LOAD,
     "reads its tile from 'A'[512:768], past its 512 elements"),
    ({"stride": 32}, LOAD, "reads its tile from 'A'[0:496], past its 256 elements"),
])
def test_out_of_bounds(kw, line, words):
    d = check(**kw)
    assert found(d) == [(line, "bounds/out-of-bounds")] * len(d) and d
    assert words in d[0].message


TALL = '''from tvm.script import tir as T


@T.prim_func
def tall(A: T.Buffer((512,), "float16")):
    a = T.alloc_buffer((32, 16), "float16", scope="wmma.matrix_a")
    for tx in T.thread_binding(32, thread="threadIdx.x"):
        T.evaluate(T.tvm_load_matrix_sync(a.data, 32, 8, 16, 0, T.tvm_access_ptr(T.type_annotation("float16"), A.data, 0, 512, 1), 32, {layout}))
'''


def test_a_column_major_tile_reaches_as_far_as_its_columns():
    """m32n8k16's A tile is 32 x 16: with stride 32, its 16 columns of 32 end at element
    15 * 32 + 32 = 512; its 32 rows of 16 would end at 31 * 32 + 16 = 1008."""
    assert tirkit.check(TALL.format(layout='"col_major"'), "t.py") == []
    (d,) = tirkit.check(TALL.format(layout='"row_major"'), "t.py")
    assert (d.code, d.span.line) == ("bounds/out-of-bounds", 8)
    assert "'A'[0:1008], past its 512 elements" in d.message


def test_a_fragment_loaded_from_memory_of_another_type():
    d = check(at="float32")
    assert found(d) == [(LOAD, "type/mismatch")]
    assert "loads the float16 fragment 'a' from float32 memory" in d[0].message


def test_a_guard_keeps_the_rule_quiet():
    text = WMMA.format(na=512, nc=16, fill="0", loops=3, at="float16", a_off="i * 256",
                       stride=16, layout="row_major", mma_c="0")
    line = text.splitlines()[LOAD - 1]
    text = text.replace(line, "            if i < 2:\n    " + line)
    assert [d for d in tirkit.check(text, "k.py") if d.severity == "error"] == []
