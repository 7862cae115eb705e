from kernels import MATMUL, ROWSUM
from sched_util import body_text, check_scheduled, refused, sched


def test_decompose_reduction_at_reduction_loop():
    sch = sched(MATMUL)
    c = sch.get_block("C")
    i, j, k = sch.get_loops(c)
    init = sch.decompose_reduction(c, k)
    assert init.name == "C_init"
    text = body_text(sch)
    assert "with T.init()" not in text
    assert 'with T.block("C_init"):' in text and 'with T.block("C_update"):' in text
    assert "C[vi_init, vj_init] = T.float32(0)" in text
    # the handle follows the renamed block
    assert sch.get(c).name_hint == "C_update"
    assert len(sch.get_loops(c)) == 3
    check_scheduled(sch)


def test_decompose_reduction_above_spatial_loops():
    sch = sched(MATMUL)
    c = sch.get_block("C")
    i, j, k = sch.get_loops(c)
    sch.reorder(i, k, j)
    sch.decompose_reduction(c, i)
    text = body_text(sch)
    assert "for i_init, j_init in T.grid(16, 16):" in text
    check_scheduled(sch)


def test_decompose_reduction_below_reduction_loop():
    sch = sched(MATMUL)
    c = sch.get_block("C")
    i, j, k = sch.get_loops(c)
    sch.reorder(k, j)
    with refused("decompose_reduction/below-reduction-loop", "j") as e:
        sch.decompose_reduction(c, j)
    assert any(msg == "reduction loop" for _, msg in e.value.related)


def test_decompose_reduction_without_init():
    sch = sched(MATMUL)
    c = sch.get_block("C")
    i, j, k = sch.get_loops(c)
    sch.decompose_reduction(c, k)
    with refused("decompose_reduction/no-init", "C_update"):
        sch.decompose_reduction(c, k)


def test_decompose_reduction_not_ancestor():
    sch = sched(ROWSUM)
    b = sch.get_block("B")
    i, k = sch.get_loops(b)
    init = sch.decompose_reduction(b, k)
    with refused(("decompose_reduction/no-init", "decompose_reduction/not-ancestor")):
        sch.decompose_reduction(b, sch.get_loops(init)[0])
