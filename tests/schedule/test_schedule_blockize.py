import pytest

import tirkit
from sched_util import CHAIN, MATMUL, body_text, check_result, check_same_results, sched


def test_blockize_tile_of_elementwise():
    sch = sched(CHAIN)
    i, j = sch.get_loops(sch.get_block("B"))
    i0, i1 = sch.split(i, [None, 4])
    outer = sch.blockize(i1)
    assert outer.name == "B_o"
    text = body_text(sch)
    assert 'with T.block("B_o"):' in text
    assert "vi_o = T.axis.spatial(4, i_0)" in text
    assert "T.reads(A[vi_o * 4:vi_o * 4 + 4, 0:8])" in text
    assert "B[vi_o * 4 + vi_i, vj_i] = A[vi_o * 4 + vi_i, vj_i] * T.float32(2)" in text
    assert [b.name for b in sch.get_child_blocks(outer)] == ["B"]
    check_result(sch)
    check_same_results(sch)


def test_blockize_reduction_moves_init_outside():
    sch = sched(MATMUL)
    i, j, k = sch.get_loops(sch.get_block("C"))
    sch.blockize(j)
    text = body_text(sch)
    assert "vk_o = T.axis.reduce(1, 0)" in text
    assert 'with T.block("C_init"):' in text
    assert "T.reads(C[vi_o, vj_i], A[vi_o, vk_i], B[vk_i, vj_i])" in text
    check_result(sch)
    check_same_results(sch)


def test_blockize_of_several_blocks():
    sch = sched(CHAIN)
    i, j = sch.get_loops(sch.get_block("C"))
    sch.compute_at(sch.get_block("B"), i)
    with pytest.raises(tirkit.ScheduleError) as e:
        sch.blockize(i)
    assert e.value.kind == "blockize/several-blocks" and e.value.node_name == "i"


def test_blockize_not_divisible():
    sch = sched(CHAIN)
    i, j = sch.get_loops(sch.get_block("B"))
    f = sch.fuse(i, j)
    a, b = sch.split(f, [None, 12])
    with pytest.raises(tirkit.ScheduleError) as e:
        sch.blockize(b)
    assert e.value.kind in ("blockize/mixed-binding", "blockize/not-divisible")
    assert e.value.node_name == "B"
