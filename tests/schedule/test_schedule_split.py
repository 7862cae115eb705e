import pytest

import tirkit
from kernels import MATMUL
from sched_util import body_text, check_scheduled, refused, sched


def test_split_before_after():
    sch = sched(MATMUL)
    i, j, k = sch.get_loops(sch.get_block("C"))
    i0, i1 = sch.split(i, [None, 4])
    assert [sch.get(x).extent.value for x in (i0, i1)] == [4, 4]
    text = body_text(sch)
    assert "for i_0, i_1, j, k in T.grid(4, 4, 16, 16):" in text
    assert "vi = T.axis.spatial(16, i_0 * 4 + i_1)" in text
    assert "T.where" not in text
    check_scheduled(sch)


def test_split_three_ways():
    sch = sched(MATMUL)
    i, j, k = sch.get_loops(sch.get_block("C"))
    a, b, c = sch.split(k, [2, None, 2])
    assert sch.get(b).extent.value == 4
    assert "vk = T.axis.reduce(16, k_0 * 8 + k_1 * 2 + k_2)" in body_text(sch)
    check_scheduled(sch)


def test_non_divisible_split_adds_predicate():
    sch = sched(MATMUL)
    i, j, k = sch.get_loops(sch.get_block("C"))
    j0, j1 = sch.split(j, [None, 5])
    assert sch.get(j0).extent.value == 4
    text = body_text(sch)
    assert "T.where(j_0 * 5 + j_1 < 16)" in text
    check_scheduled(sch)


@pytest.mark.parametrize("factors,kind", [
    ([0, None], "split/non-positive-factor"),
    ([-2, 8], "split/non-positive-factor"),
    ([3, 5], "split/factors-too-small"),
    ([None, None], "split/several-none"),
    ([16], "split/bad-factors"),
])
def test_split_errors_name_the_loop(factors, kind):
    sch = sched(MATMUL)
    i, j, k = sch.get_loops(sch.get_block("C"))
    before = sch.mod
    with refused(kind) as e:
        sch.split(j, factors)
    assert e.value.node_name == "j"
    assert e.value.span.line == 7           # `for i, j, k in T.grid(...)`
    assert sch.mod is before                 # nothing replaced
    assert all(ins.name != "split" for ins in sch.trace.instructions)


def test_split_error_renders_carets():
    sch = sched(MATMUL)
    i, j, k = sch.get_loops(sch.get_block("C"))
    with pytest.raises(tirkit.ScheduleError) as e:
        sch.split(k, [0, 16])
    text = e.value.render(MATMUL, "mm.py")
    lines = text.splitlines()
    assert lines[0].startswith("mm.py:7:15: error: split:")
    assert "[schedule/split/non-positive-factor]" in lines[0]
    assert lines[2].index("^") == lines[1].index("k in") and lines[2].count("^") == 1
    d = e.value.diagnostic()
    assert d.code == "schedule/split/non-positive-factor" and d.span.line == 7


def test_old_loop_handle_goes_stale():
    sch = sched(MATMUL)
    i, j, k = sch.get_loops(sch.get_block("C"))
    sch.split(i, [2, 8])
    with refused("stale-handle"):
        sch.split(i, [2, 8])
    # the other handles still resolve
    assert sch.get(j).loop_var.name == "j"
