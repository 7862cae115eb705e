from kernels import CHAIN, HEAD, MATMUL, row_reduction
from sched_util import body_text, check_scheduled, refused, sched

SCAN = HEAD + '''@T.prim_func
def prefix(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
    for i, j in T.grid(4, 8):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            vj = T.axis.scan(8, j)
            T.reads(A[vi, vj])
            T.writes(B[vi, vj])
            B[vi, vj] = A[vi, vj]
'''

NON_AFFINE = HEAD + '''@T.prim_func
def nonaffine(A: T.Buffer((16,), "float32")):
    for i, j in T.grid(4, 4):
        with T.block("A"):
            vi = T.axis.spatial(16, i * j)
            T.reads()
            T.writes(A[vi])
            A[vi] = T.float32(1)
'''

TWO_CHILDREN = HEAD + '''@T.prim_func
def two(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32")):
    for i in range(4):
        for j in range(4):
            with T.block("A"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads()
                T.writes(A[vi, vj])
                A[vi, vj] = T.float32(1)
        for j in range(4):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads()
                T.writes(B[vi, vj])
                B[vi, vj] = T.float32(2)
'''


def test_reorder_before_after():
    sch = sched(MATMUL)
    i, j, k = sch.get_loops(sch.get_block("C"))
    sch.reorder(k, i)
    assert "for k, j, i in T.grid(16, 16, 16):" in body_text(sch)
    assert [sch.get(x).loop_var.name for x in sch.get_loops(sch.get_block("C"))] == \
        ["k", "j", "i"]
    check_scheduled(sch)


def test_reorder_after_split_tiles():
    sch = sched(MATMUL)
    i, j, k = sch.get_loops(sch.get_block("C"))
    i0, i1 = sch.split(i, [None, 4])
    j0, j1 = sch.split(j, [None, 4])
    sch.reorder(i0, j0, k, i1, j1)
    assert "for i_0, j_0, k, i_1, j_1 in T.grid(4, 4, 16, 4, 4):" in body_text(sch)
    check_scheduled(sch)


def test_reorder_repeated_loop():
    sch = sched(MATMUL)
    i, j, k = sch.get_loops(sch.get_block("C"))
    with refused("reorder/repeated-loop", "k"):
        sch.reorder(k, j, k)


def test_reorder_scan_iterator():
    sch = sched(SCAN)
    i, j = sch.get_loops(sch.get_block("B"))
    with refused("reorder/scan-iterator", "B") as e:
        sch.reorder(j, i)
    assert e.value.span.line == 7


def test_reorder_non_affine_binding():
    sch = sched(NON_AFFINE)
    i, j = sch.get_loops(sch.get_block("A"))
    with refused("reorder/non-affine", "A"):
        sch.reorder(j, i)


def test_reorder_several_children_between():
    sch = sched(TWO_CHILDREN)
    i, j = sch.get_loops(sch.get_block("A"))
    _, j2 = sch.get_loops(sch.get_block("B"))
    with refused("reorder/not-single-branch", "i"):
        sch.reorder(j2, i)


def test_reorder_loops_of_different_nests():
    sch = sched(CHAIN)
    i, _ = sch.get_loops(sch.get_block("B"))
    _, j = sch.get_loops(sch.get_block("C"))
    with refused(("reorder/not-one-nest",)):
        sch.reorder(j, i)


COLUMNS = HEAD + '''@T.prim_func
def columns(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32"),
            C: T.Buffer((4, 8), "float32")):
    for j, i in T.grid(7, 4):
        with T.block("X"):
            vi, vj = T.axis.remap("SS", [i, j])
            A[vi, vj + 1] = B[vi, vj]
        with T.block("Y"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[(vi + 1) % 4, vj]
'''


def test_a_parallel_loop_moved_out_of_a_serial_one_keeps_its_iterations_apart():
    # column by column, row i reads the A[i + 1, j] that row i + 1 wrote in the column
    # before; with the rows parallel outside the columns, it reads it while row i + 1 runs
    sch = sched(COLUMNS)
    j, i = sch.get_loops(sch.get_block("X"))
    sch.parallel(i)
    with refused("reorder/dependence", "i") as e:
        sch.reorder(i, j)
    assert e.value.message.startswith(
        "loop 'i' moved out of loop 'j': iteration `i` = 3 reads `A[0, 1]`, which iteration "
        "`i` = 0 writes")
    assert [sch.get(x).loop_var.name for x in sch.get_loops(sch.get_block("X"))] == ["j", "i"]
    check_scheduled(sch)
    # each row reading its own: the rows stay apart outside the columns
    sch = sched(COLUMNS.replace("A[(vi + 1) % 4, vj]", "A[vi, vj]"))
    j, i = sch.get_loops(sch.get_block("X"))
    sch.parallel(i)
    sch.reorder(i, j)
    assert [sch.get(x).loop_var.name for x in sch.get_loops(sch.get_block("X"))] == ["i", "j"]
    check_scheduled(sch)


def test_a_race_the_loop_already_had_does_not_block_the_reorder():
    # the rows of B summed by a parallel loop over k (TVM's `rowsum_not_serial`): racy as
    # written (loop-nest/reduction-on-parallel), and no more so outside the rows
    sch = sched(row_reduction(8, 16, parallel_k=True))
    i, k = sch.get_loops(sch.get_block("B"))
    sch.reorder(k, i)
    assert [sch.get(x).loop_var.name for x in sch.get_loops(sch.get_block("B"))] == ["k", "i"]
