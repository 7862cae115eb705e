import pytest

import tirkit
from sched_util import (CHAIN, HEAD, MATMUL_RELU, body_text, check_result, check_same_results,
                        sched)

OPAQUE = HEAD + '''@T.prim_func
def opaque(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,), "float32")
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            T.reads(A[vi])
            T.writes(B[vi])
            B[vi] = A[vi] + T.float32(1)
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            T.reads(B[vi])
            T.writes(C[vi])
            T.evaluate(T.call_extern("float32", "consume", T.address_of(B[vi])))
'''


def test_compute_inline_before_after():
    sch = sched(CHAIN)
    sch.compute_inline(sch.get_block("B"))
    text = body_text(sch)
    assert 'with T.block("B")' not in text
    assert "B = T.alloc_buffer" not in text
    assert "T.reads(A[vj, vi])" in text
    assert "C[vi, vj] = A[vj, vi] * T.float32(2) + T.float32(1)" in text
    check_result(sch)
    check_same_results(sch)


def test_compute_inline_twice():
    sch = sched(CHAIN)
    sch.compute_inline(sch.get_block("B"))
    sch.compute_inline(sch.get_block("C"))
    text = body_text(sch)
    assert "D[vi, vj] = (A[vj, vi] * T.float32(2) + T.float32(1)) * (A[vj, vi] * " \
        "T.float32(2) + T.float32(1))" in text
    check_result(sch)
    check_same_results(sch)


def test_compute_inline_output_block():
    sch = sched(CHAIN)
    with pytest.raises(tirkit.ScheduleError) as e:
        sch.compute_inline(sch.get_block("D"))
    assert e.value.kind == "compute_inline/writes-output" and e.value.node_name == "D"
    assert e.value.span.line == 21


def test_compute_inline_block_with_init():
    sch = sched(MATMUL_RELU)
    with pytest.raises(tirkit.ScheduleError) as e:
        sch.compute_inline(sch.get_block("C"))
    assert e.value.kind == "compute_inline/has-init" and e.value.node_name == "C"


def test_compute_inline_opaque_reader():
    sch = sched(OPAQUE)
    with pytest.raises(tirkit.ScheduleError) as e:
        sch.compute_inline(sch.get_block("B"))
    assert e.value.kind == "compute_inline/opaque-access" and e.value.node_name == "C"
    assert e.value.related[0][0].line == 8        # the inlined block


def test_reverse_compute_inline_before_after():
    sch = sched(CHAIN)
    sch.reverse_compute_inline(sch.get_block("D"))
    text = body_text(sch)
    assert 'with T.block("D")' not in text
    assert "C = T.alloc_buffer" not in text
    assert "D[vi, vj] = (B[vj, vi] + T.float32(1)) * (B[vj, vi] + T.float32(1))" in text
    check_result(sch)
    check_same_results(sch)


def test_reverse_compute_inline_transposed():
    sch = sched(CHAIN)
    sch.reverse_compute_inline(sch.get_block("C"))
    text = body_text(sch)
    assert "T.writes(C[vj, vi])" in text
    assert "C[vj, vi] = A[vi, vj] * T.float32(2) + T.float32(1)" in text
    check_result(sch)
    check_same_results(sch)


def test_reverse_compute_inline_into_reduction_is_refused():
    sch = sched(MATMUL_RELU)
    with pytest.raises(tirkit.ScheduleError) as e:
        sch.reverse_compute_inline(sch.get_block("relu"))
    assert e.value.kind == "reverse_compute_inline/producer-not-single-store"
    assert e.value.node_name == "C"


def test_reverse_compute_inline_consumer_with_init():
    sch = sched(MATMUL_RELU)
    with pytest.raises(tirkit.ScheduleError) as e:
        sch.reverse_compute_inline(sch.get_block("C"))
    assert e.value.kind == "reverse_compute_inline/has-init" and e.value.node_name == "C"


SLICE = HEAD + '''@T.prim_func
def slice_(A: T.Buffer((16,), "float32"), C: T.Buffer((10,), "float32")):
    B = T.alloc_buffer((16,), "float32")
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            T.reads(A[vi])
            T.writes(B[vi])
            B[vi] = A[vi] + T.float32(1)
    for i in range(10):
        with T.block("C"):
            vi = T.axis.spatial(10, i)
            T.reads(B[vi])
            T.writes(C[vi])
            C[vi] = B[vi] * T.float32(3)
'''


def test_reverse_compute_inline_of_a_smaller_consumer_adds_a_predicate():
    sch = sched(SLICE)
    sch.reverse_compute_inline(sch.get_block("C"))
    text = body_text(sch)
    assert "T.where(i < 10)" in text
    assert "C[vi] = (A[vi] + T.float32(1)) * T.float32(3)" in text
    check_result(sch)
    check_same_results(sch)


FLAT = HEAD + '''@T.prim_func
def flat(A: T.Buffer((8, 2), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,), "float32")
    for i, j in T.grid(8, 2):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi, vj])
            T.writes(B[vi * 2 + vj])
            B[vi * 2 + vj] = A[vi, vj] + T.float32(1)
    for i in range(16):
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            T.reads(B[vi])
            T.writes(C[vi])
            C[vi] = B[vi] * T.float32(3)
'''


def test_reverse_compute_inline_into_an_expression_indexed_producer():
    sch = sched(FLAT)
    sch.reverse_compute_inline(sch.get_block("C"))
    assert "C[vi * 2 + vj] = (A[vi, vj] + T.float32(1)) * T.float32(3)" in body_text(sch)
    check_result(sch)
    check_same_results(sch)


CONST_INDEX = HEAD + '''@T.prim_func
def const_index(A: T.Buffer((1, 12, 8), "float32"), C: T.Buffer((1, 12, 8), "float32")):
    B = T.alloc_buffer((1, 12, 8), "float32")
    for i_0, i_1, j in T.grid(3, 4, 8):
        with T.block("B"):
            vi = T.axis.spatial(12, i_0 * 4 + i_1)
            vj = T.axis.spatial(8, j)
            B[0, vi, vj] = A[0, vi, vj] * T.float32(3)
    for i, j in T.grid(12, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[0, vi, vj] = B[0, vi, vj] - T.float32(1)
'''


def test_compute_inline_store_at_a_constant_index():
    sch = sched(CONST_INDEX)
    sch.compute_inline(sch.get_block("B"))
    text = body_text(sch)
    assert 'with T.block("B")' not in text
    assert "C[0, vi, vj] = A[0, vi, vj] * T.float32(3) - T.float32(1)" in text
    check_result(sch)
    check_same_results(sch)


POINTER_READ = HEAD + '''@T.prim_func
def pointer_read(T_: T.Buffer((64,), "int8"), X: T.Buffer((8,), "float32"),
                 Y: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,), "float32")
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            T.reads(X[vi])
            T.writes(B[vi])
            B[vi] = X[vi] * T.float32(2)
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            T.reads(T_[0:64], B[vi])
            T.writes(Y[vi])
            T.evaluate(T_.access_ptr("r"))
            Y[vi] = B[vi] + T.float32(1)
'''


def test_compute_inline_keeps_a_read_made_through_a_pointer():
    sch = sched(POINTER_READ)
    sch.compute_inline(sch.get_block("B"))
    text = body_text(sch)
    assert "T.reads(T_[0:64], X[vi])" in text
    assert "Y[vi] = X[vi] * T.float32(2) + T.float32(1)" in text


NESTED_CONSUMER = HEAD + '''@T.prim_func
def nested_consumer(A: T.Buffer((8, 4), "float32"), C: T.Buffer((8, 4), "float32")):
    B = T.alloc_buffer((8, 4), "float32")
    for i, j in T.grid(8, 4):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + T.float32(5)
    for i in range(8):
        with T.block("C_o"):
            vi = T.axis.spatial(8, i)
            T.reads(B[vi, 0:4])
            T.writes(C[vi, 0:4])
            for j in range(4):
                with T.block("C"):
                    vj = T.axis.spatial(4, j)
                    T.reads(B[vi, vj])
                    T.writes(C[vi, vj])
                    C[vi, vj] = B[vi, vj] * T.float32(2)
'''


def test_compute_inline_into_a_nested_block_updates_both_regions():
    sch = sched(NESTED_CONSUMER)
    sch.compute_inline(sch.get_block("B"))
    text = body_text(sch)
    assert "B[" not in text
    assert "T.reads(A[vi, 0:4])" in text and "T.reads(A[vi, vj])" in text
    check_result(sch)
    check_same_results(sch)
