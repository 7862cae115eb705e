import pytest

import tirkit
from sched_util import MATMUL, MATMUL_RELU, ROWSUM, body_text, check_result, \
    check_same_results, sched


def test_cache_read_input():
    sch = sched(MATMUL)
    c = sch.get_block("C")
    a = sch.cache_read(c, 0, "shared")
    assert a.name == "A_shared"
    text = body_text(sch)
    assert 'A_shared = T.alloc_buffer((16, 16), "float32", scope="shared")' in text
    assert text.index('T.block("A_shared")') < text.index('T.block("C")')
    assert "A_shared[v0, v1] = A[v0, v1]" in text
    assert "T.reads(A_shared[vi, vk], B[vk, vj])" in text
    check_result(sch)
    check_same_results(sch)


def test_cache_read_of_intermediate_goes_after_producer():
    sch = sched(MATMUL_RELU)
    sch.cache_read(sch.get_block("relu"), 0, "local")
    text = body_text(sch)
    assert text.index('T.block("C")') < text.index('T.block("C_local")') < \
        text.index('T.block("relu")')
    check_result(sch)
    check_same_results(sch)


def test_cache_write_then_compute_at():
    sch = sched(MATMUL)
    c = sch.get_block("C")
    cl = sch.cache_write(c, 0, "local")
    text = body_text(sch)
    assert "C_local[vi, vj] = C_local[vi, vj] + A[vi, vk] * B[vk, vj]" in text
    assert "C[v0, v1] = C_local[v0, v1]" in text
    check_result(sch)
    check_same_results(sch)


def test_cache_read_on_inferred_regions():
    sch = sched(ROWSUM)
    # inferred reads of a reduction leave out the accumulator, as TVM infers them
    sch.cache_read(sch.get_block("B"), 0, "shared")
    assert "B[vi] = B[vi] + A_shared[vi, vk]" in body_text(sch)
    check_result(sch)
    check_same_results(sch)


def test_cache_read_bad_index():
    sch = sched(MATMUL)
    with pytest.raises(tirkit.ScheduleError) as e:
        sch.cache_read(sch.get_block("C"), 5, "shared")
    assert e.value.kind == "cache_read/bad-index" and e.value.node_name == "C"


def test_cache_write_bad_scope():
    sch = sched(MATMUL)
    with pytest.raises(tirkit.ScheduleError) as e:
        sch.cache_write(sch.get_block("C"), 0, "registers")
    assert e.value.kind == "cache_write/bad-scope" and e.value.node_name == "C"


def test_set_scope():
    sch = sched(MATMUL_RELU)
    sch.set_scope(sch.get_block("C"), 0, "shared")
    assert 'C = T.alloc_buffer((16, 16), "float32", scope="shared")' in body_text(sch)
    check_result(sch)
    check_same_results(sch)


def test_set_scope_of_parameter():
    sch = sched(MATMUL_RELU)
    with pytest.raises(tirkit.ScheduleError) as e:
        sch.set_scope(sch.get_block("relu"), 0, "shared")
    assert e.value.kind == "set_scope/parameter" and e.value.node_name == "relu"


SCOPED = '''from tvm.script import tir as T


@T.prim_func
def scoped(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
    for i0, j0 in T.grid(4, 4):
        with T.block("scope"):
            i, j = T.axis.remap("SS", [i0, j0])
            T.reads(A[i * 16:i * 16 + 16, j * 16:j * 16 + 16])
            T.writes(B[i * 16:i * 16 + 16, j * 16:j * 16 + 16])
            for x, y in T.grid(16, 16):
                with T.block("B"):
                    vi = T.axis.spatial(64, i * 16 + x)
                    vj = T.axis.spatial(64, j * 16 + y)
                    T.reads(A[vi, vj])
                    T.writes(B[vi, vj])
                    B[vi, vj] = A[vi, vj] + T.float32(1)
'''


def test_cache_read_in_an_inner_scope_is_compacted():
    sch = sched(SCOPED)
    sch.cache_read(sch.get_block("B"), 0, "shared")
    text = body_text(sch)
    assert 'A_shared = T.alloc_buffer((16, 16), "float32", scope="shared")' in text
    assert "A_shared[v0, v1] = A[i * 16 + v0, j * 16 + v1]" in text
    assert "B[vi, vj] = A_shared[vi - i * 16, vj - j * 16] + T.float32(1)" in text
    check_result(sch)
    check_same_results(sch)
