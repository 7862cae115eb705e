from kernels import CHAIN, HEAD, MATMUL
from sched_util import body_text, check_result, check_scheduled, refused, sched

DEPENDENT = HEAD + '''@T.prim_func
def tri(A: T.Buffer((8, 8), "float32")):
    for i in range(8):
        for j in range(i + 1):
            with T.block("A"):
                vi = T.axis.spatial(8, i)
                vj = T.axis.spatial(8, j)
                T.reads()
                T.writes(A[vi, vj])
                A[vi, vj] = T.float32(1)
'''


def test_fuse_before_after():
    sch = sched(MATMUL)
    i, j, k = sch.get_loops(sch.get_block("C"))
    ij = sch.fuse(i, j)
    assert sch.get(ij).extent.value == 256
    text = body_text(sch)
    assert "for i_j_fused, k in T.grid(256, 16):" in text
    assert "vi = T.axis.spatial(16, i_j_fused // 16)" in text
    assert "vj = T.axis.spatial(16, i_j_fused % 16)" in text
    check_scheduled(sch)


def test_split_then_fuse_folds_back():
    sch = sched(MATMUL)
    i, j, k = sch.get_loops(sch.get_block("C"))
    a, b = sch.split(i, [4, 4])
    sch.fuse(a, b)
    assert "T.axis.remap(\"SSR\", [i_0_i_1_fused, j, k])" in body_text(sch)
    check_result(sch)


def test_fuse_not_directly_nested():
    sch = sched(MATMUL)
    i, j, k = sch.get_loops(sch.get_block("C"))
    with refused("fuse/not-directly-nested", "k"):
        sch.fuse(i, k)


def test_fuse_loops_of_different_blocks():
    sch = sched(CHAIN)
    i, _ = sch.get_loops(sch.get_block("B"))
    _, j = sch.get_loops(sch.get_block("C"))
    with refused("fuse/not-directly-nested", "j"):
        sch.fuse(i, j)


def test_fuse_dependent_extent():
    sch = sched(DEPENDENT)
    i, j = sch.get_loops(sch.get_block("A"))
    with refused("fuse/dependent-extent", "j") as e:
        sch.fuse(i, j)
    assert e.value.span.line == 7


def test_fuse_symbolic_extents():
    from sched_util import EXAMPLES_VALID
    sch = sched((EXAMPLES_VALID / "batch_matmul_symbolic.py").read_text())
    b = sch.get_block("C")
    bb, i, j, k = sch.get_loops(b)
    f = sch.fuse(bb, i)
    assert sch.get(f).loop_var.name == "bb_i_fused"
    text = body_text(sch)
    assert "vb = T.axis.spatial(n, bb_i_fused // m)" in text
    assert "vi = T.axis.spatial(m, bb_i_fused % m)" in text
    check_result(sch)
