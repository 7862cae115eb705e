import pytest

import tirkit
from sched_util import CHAIN, MATMUL_RELU, body_text, check_result, check_same_results, sched


def _tiled_relu(sch):
    d = sch.get_block("relu")
    i, j = sch.get_loops(d)
    i0, i1 = sch.split(i, [None, 4])
    j0, j1 = sch.split(j, [None, 8])
    sch.reorder(i0, j0, i1, j1)
    return i0, j0, i1, j1


def test_compute_at_tile():
    sch = sched(MATMUL_RELU)
    i0, j0, i1, j1 = _tiled_relu(sch)
    sch.compute_at(sch.get_block("C"), j0)
    text = body_text(sch)
    assert "for i_0, j_0 in T.grid(4, 2):" in text
    assert "for ax0, ax1, ax2 in T.grid(4, 8, 32):" in text
    assert "vi = T.axis.spatial(16, i_0 * 4 + ax0)" in text
    assert "vj = T.axis.spatial(16, j_0 * 8 + ax1)" in text
    assert "vk = T.axis.reduce(32, ax2)" in text
    # the producer comes first in the loop body
    assert text.index('T.block("C")') < text.index('T.block("relu")')
    assert [sch.get(x).loop_var.name for x in sch.get_loops(sch.get_block("C"))] == \
        ["i_0", "j_0", "ax0", "ax1", "ax2"]
    check_result(sch)
    check_same_results(sch)


def test_compute_at_innermost_unit_loops_dropped():
    sch = sched(CHAIN)
    i, j = sch.get_loops(sch.get_block("C"))
    sch.compute_at(sch.get_block("B"), j)
    text = body_text(sch)
    assert 'vi, vj = T.axis.remap("SS", [j, i])' in text
    assert text.index('T.block("B")') < text.index('T.block("C")') < text.rindex("for i, j in")
    check_result(sch)
    check_same_results(sch)


def test_compute_at_preserve_unit_loops():
    sch = sched(CHAIN)
    i, j = sch.get_loops(sch.get_block("C"))
    sch.compute_at(sch.get_block("B"), j, preserve_unit_loops=True)
    assert "for ax0, ax1 in T.grid(1, 1):" in body_text(sch)
    check_result(sch)
    check_same_results(sch)


def test_compute_at_into_ancestor():
    sch = sched(MATMUL_RELU)
    i, j, k = sch.get_loops(sch.get_block("C"))
    with pytest.raises(tirkit.ScheduleError) as e:
        sch.compute_at(sch.get_block("C"), j)
    assert e.value.kind == "compute_at/loop-is-ancestor" and e.value.node_name == "j"


def test_compute_at_of_output_block():
    sch = sched(CHAIN)
    c = sch.get_block("C")
    i, j = sch.get_loops(c)
    with pytest.raises(tirkit.ScheduleError) as e:
        sch.compute_at(sch.get_block("D"), i)
    assert e.value.kind == "compute_at/output-block" and e.value.node_name == "D"


def test_compute_at_consumer_not_under_loop():
    sch = sched(CHAIN)
    # C is consumed by D; a loop of B's own nest does not hold D
    i, j = sch.get_loops(sch.get_block("B"))
    sch.compute_inline(sch.get_block("B"))
    sch2 = sched(CHAIN)
    bi, bj = sch2.get_loops(sch2.get_block("B"))
    with pytest.raises(tirkit.ScheduleError) as e:
        sch2.compute_at(sch2.get_block("C"), bi)
    assert e.value.kind == "compute_at/consumers-not-under-loop"
    assert e.value.node_name == "D" and e.value.span.line == 21


def test_reverse_compute_at_tile():
    sch = sched(MATMUL_RELU)
    i, j, k = sch.get_loops(sch.get_block("C"))
    i0, i1 = sch.split(i, [None, 4])
    sch.reverse_compute_at(sch.get_block("relu"), i0)
    text = body_text(sch)
    assert "for ax0, ax1 in T.grid(4, 16):" in text
    assert "vi = T.axis.spatial(16, i_0 * 4 + ax0)" in text
    assert text.index('T.block("C")') < text.index('T.block("relu")')
    check_result(sch)
    check_same_results(sch)


def test_reverse_compute_at_producer_not_under_loop():
    sch = sched(CHAIN)
    i, j = sch.get_loops(sch.get_block("B"))
    with pytest.raises(tirkit.ScheduleError) as e:
        sch.reverse_compute_at(sch.get_block("D"), i)
    assert e.value.kind == "reverse_compute_at/producers-not-under-loop"
    assert e.value.node_name == "C"


def test_reverse_compute_at_into_ancestor():
    sch = sched(CHAIN)
    i, j = sch.get_loops(sch.get_block("D"))
    with pytest.raises(tirkit.ScheduleError) as e:
        sch.reverse_compute_at(sch.get_block("D"), i)
    assert e.value.kind == "reverse_compute_at/loop-is-ancestor" and e.value.node_name == "i"
