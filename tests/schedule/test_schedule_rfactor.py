from kernels import MATMUL, ROWSUM, row_reduction
from sched_util import body_text, check_scheduled, refused, sched

NOT_A_REDUCER = row_reduction(8, 16, "weird", update="B[vi] * T.float32(0.5) + A[vi, vk]",
                              regions=True)

ROWMAX = row_reduction(8, 16, "rowmax", init='T.min_value("float32")',
                       update="T.max(B[vi], A[vi, vk])", regions=True)


def test_rfactor_inner_loop():
    sch = sched(ROWSUM)
    i, k = sch.get_loops(sch.get_block("B"))
    k0, k1 = sch.split(k, [None, 4])
    rf = sch.rfactor(k1, 0)
    assert rf.name == "B_rf"
    text = body_text(sch)
    assert 'B_rf = T.alloc_buffer((4, 8), "float32")' in text
    assert 'vk_1, vi, vk_0 = T.axis.remap("SSR", [k_1, i, k_0])' in text
    assert "B_rf[vk_1, vi] = B_rf[vk_1, vi] + A[vi, vk_0 * 4 + vk_1]" in text
    assert "for i, k_1 in T.grid(8, 4):" in text
    assert "B[vi] = B[vi] + B_rf[vk_1, vi]" in text
    check_scheduled(sch)


def test_rfactor_outer_loop_last_axis():
    sch = sched(MATMUL)
    i, j, k = sch.get_loops(sch.get_block("C"))
    k0, k1 = sch.split(k, [4, None])
    sch.rfactor(k0, 2)
    assert 'C_rf = T.alloc_buffer((16, 16, 4), "float32")' in body_text(sch)
    check_scheduled(sch)


def test_rfactor_max_reducer():
    sch = sched(ROWMAX)
    i, k = sch.get_loops(sch.get_block("B"))
    k0, k1 = sch.split(k, [None, 4])
    sch.rfactor(k1, 0)
    assert "B[vi] = T.max(B[vi], B_rf[vk_1, vi])" in body_text(sch)
    check_scheduled(sch)


def test_rfactor_without_reducer():
    sch = sched(NOT_A_REDUCER)
    i, k = sch.get_loops(sch.get_block("B"))
    with refused("rfactor/no-reducer", "B") as e:
        sch.rfactor(k, 0)
    assert e.value.span.line == 7


def test_rfactor_of_spatial_loop():
    sch = sched(ROWSUM)
    i, k = sch.get_loops(sch.get_block("B"))
    with refused("rfactor/not-reduction-loop", "i"):
        sch.rfactor(i, 0)


def test_rfactor_bad_axis():
    sch = sched(ROWSUM)
    i, k = sch.get_loops(sch.get_block("B"))
    with refused("rfactor/bad-axis"):
        sch.rfactor(k, 3)


def test_rfactor_of_the_only_reduction_loop_is_a_plain_store():
    sch = sched(ROWSUM)
    i, k = sch.get_loops(sch.get_block("B"))
    sch.rfactor(k, 0)
    text = body_text(sch)
    assert "B_rf[vk, vi] = A[vi, vk]" in text
    assert text.count("with T.init():") == 1          # only the write-back reduces
    check_scheduled(sch)
