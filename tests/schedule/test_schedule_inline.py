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
