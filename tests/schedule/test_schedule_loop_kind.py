import pytest

import tirkit
from kernels import HEAD, MATMUL, ROWSUM
from sched_util import body_text, check_scheduled, refused, sched


def test_parallel_vectorize_unroll():
    sch = sched(MATMUL)
    i, j, k = sch.get_loops(sch.get_block("C"))
    sch.parallel(i)
    sch.vectorize(j)
    k0, k1 = sch.split(k, [None, 4])
    sch.unroll(k1)
    text = body_text(sch)
    assert "for i in T.parallel(16):" in text
    assert "for j in T.vectorized(16):" in text
    assert "for k_1 in T.unroll(4):" in text
    assert [sch.get(x).kind for x in (i, j, k1)] == ["parallel", "vectorized", "unrolled"]
    check_scheduled(sch)


@pytest.mark.parametrize("prim", ["parallel", "vectorize"])
def test_loop_feeding_reduction_is_refused(prim):
    sch = sched(MATMUL)
    i, j, k = sch.get_loops(sch.get_block("C"))
    with refused(f"{prim}/feeds-reduction") as e:
        getattr(sch, prim)(k)
    assert e.value.node_name == "k" and e.value.span.line == 7
    assert e.value.related and e.value.related[0][0].line == 8     # the block


def test_parallel_on_inferred_regions():
    sch = sched(ROWSUM)
    i, k = sch.get_loops(sch.get_block("B"))
    sch.parallel(i)
    with pytest.raises(tirkit.ScheduleError):
        sch.parallel(k)
    check_scheduled(sch)


def test_unroll_of_reduction_loop_is_fine():
    sch = sched(ROWSUM)
    i, k = sch.get_loops(sch.get_block("B"))
    sch.unroll(k)
    assert "for k in T.unroll(24):" in body_text(sch)
    check_scheduled(sch)


def test_serial_undoes_parallel():
    sch = sched(MATMUL)
    i, j, k = sch.get_loops(sch.get_block("C"))
    sch.parallel(i)
    sch.serial(i)
    assert sch.get(i).kind == "serial"
    assert tirkit.structural_equal(sch.mod, sch.original)
    assert "sch.serial(loop=l1)" in sch.trace.as_python()


DECOMPOSED = HEAD + '''@T.prim_func
def matmul(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
           C: T.Buffer((16, 16), "float32")):
    for i, j in T.grid(16, 16):
        with T.block("init"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = T.float32(0)
        for k in range(16):
            with T.block("update"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]
'''


def test_loops_over_a_decomposed_reduction():
    # TVM 0.27 refuses these because 'update' has no init; i and j feed only spatial
    # iterators of both blocks, so each (i, j) is independent: legal, and accepted here
    sch = sched(DECOMPOSED)
    i, j, k = sch.get_loops(sch.get_block("update"))
    sch.parallel(i)
    sch.vectorize(j)
    with refused("parallel/feeds-reduction"):
        sch.parallel(k)
    text = body_text(sch)
    assert "for i in T.parallel(16):" in text and "for j in T.vectorized(16):" in text
    check_scheduled(sch)


RUNNING = HEAD + '''@T.prim_func
def running(A: T.Buffer((16, 9), "float32"), B: T.Buffer((16, 8), "float32")):
    for i, j in T.grid(16, 8):
        with T.block("step"):
            A[i, j + 1] = A[i, j] + B[i, j]
'''
STAGES = HEAD + '''@T.prim_func
def stages(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32"),
           C: T.Buffer((16,), "float32")):
    for i in range(15):
        with T.block("X"):
            vi = T.axis.spatial(15, i)
            A[vi] = A[vi] * T.float32(3)
        with T.block("Y"):
            vi = T.axis.spatial(15, i)
            C[vi] = A[vi + 1]
'''


@pytest.mark.parametrize("prim", ["parallel", "vectorize"])
def test_a_loop_whose_iterations_depend_on_each_other_is_refused(prim):
    # iterations of `j` each read the A[i, j] the one before writes (a running sum, in
    # order); `i` runs rows apart, and may run in parallel or as vector lanes
    sch = sched(RUNNING)
    i, j = sch.get_loops(sch.get_block("step"))
    with refused(f"{prim}/dependence") as e:
        getattr(sch, prim)(j)
    assert e.value.node_name == "j"
    assert "`j` = 1 reads `A[0, 1]`" in e.value.message
    getattr(sch, prim)(i)
    check_scheduled(sch)


def test_two_blocks_whose_iterations_meet_are_refused():
    # each block's instances are independent, but iteration 1's block X writes the A[1]
    # that iteration 0's block Y reads (after, in the loop; TVM parallelizes and
    # vectorizes this loop, each block having compact dataflow)
    sch = sched(STAGES)
    (i,) = sch.get_loops(sch.get_block("X"))
    with refused("parallel/dependence") as e:
        sch.parallel(i)
    assert "iteration `i` = 0 reads `A[1]`, which iteration `i` = 1 writes" in e.value.message
    with refused("vectorize/dependence") as e:
        sch.vectorize(i)
    assert "lane `i` = 0 reads `A[1]` after lane `i` = 1 writes it" in e.value.message
    from tirkit.schedule.actions import actions_at
    titles = [a.title for a in actions_at(tirkit.parse(STAGES), 7)]
    assert "Unroll loop 'i'" in titles and "Parallelize loop 'i'" not in titles


OVERLAPPED = HEAD + '''@T.prim_func
def overlapped(A: T.Buffer((14, 4), "float32"), B: T.Buffer((14, 4), "float32")):
    for v0, v1, v2 in T.grid(6, 4, 4):
        with T.block("block"):
            i = T.axis.spatial(14, v0 * 2 + v1)
            j = T.axis.spatial(4, v2)
            B[i, j] = A[i, j] + T.float32(1)
'''


def test_iterations_that_write_one_value_to_an_element_may_run_in_parallel():
    # iterations 0 and 1 of v0 both write B[2, :], each the same A[2, :] + 1 (as TVM's
    # reorder test `overlapped_access` does): any order leaves that value
    sch = sched(OVERLAPPED)
    v0, v1, v2 = sch.get_loops(sch.get_block("block"))
    sch.parallel(v0)
    assert sch.get(v0).kind == "parallel"


PADDED_CONV = HEAD + '''@T.prim_func
def conv(X: T.Buffer((64,), "float32"), W: T.Buffer((3,), "float32"),
         Y: T.Buffer((64,), "float32")):
    P = T.alloc_buffer((66,), "float32")
    for h in range(66):
        with T.block("pad"):
            vh = T.axis.spatial(66, h)
            P[vh] = T.if_then_else(1 <= vh and vh < 65, X[vh - 1], T.float32(0))
    for o, r in T.grid(64, 3):
        with T.block("conv"):
            vo, vr = T.axis.remap("SR", [o, r])
            with T.init():
                Y[vo] = T.float32(0)
            Y[vo] = Y[vo] + P[vo + vr] * W[vr]
'''


def test_a_pad_recomputed_in_each_parallel_tile_is_accepted():
    # compute_at puts the pad in each tile, with the two elements of its halo that the
    # next tile computes too: the same value, so the tiles may run at once
    sch = sched(PADDED_CONV)
    o, r = sch.get_loops(sch.get_block("conv"))
    o0, o1 = sch.split(o, [8, 8])
    sch.parallel(o0)
    sch.compute_at(sch.get_block("pad"), o0)
    assert [sch.get(x).extent.value for x in sch.get_loops(sch.get_block("pad"))] == [8, 10]
    sch.parallel(sch.get_loops(sch.get_block("pad"))[0])
    assert sch.get(o0).kind == "parallel"
    check_scheduled(sch)


DOUBLED_FIRST = HEAD + '''@T.prim_func
def doubled_first(A: T.Buffer((9,), "float32"), C: T.Buffer((8, 2), "float32")):
    for i in range(8):
        with T.block("Y"):
            vi = T.axis.spatial(8, i)
            A[vi] = A[vi] * T.float32(2)
        for k in range(2):
            with T.block("X"):
                vi, vk = T.axis.remap("SS", [i, k])
                C[vi, vk] = A[vi + vk]
'''


def test_lanes_that_meet_in_a_loop_inside_are_refused():
    # the vector form doubles every lane's A[i] before the loop over k reads A[i + 1]:
    # lane 0 reads the A[1] lane 1 doubled, where the loop reads it before
    sch = sched(DOUBLED_FIRST)
    i = sch.get_loops(sch.get_block("Y"))[0]
    with refused("vectorize/dependence") as e:
        sch.vectorize(i)
    assert "lane `i` = 0 reads `A[1]` at `k` = 1 after lane `i` = 1 writes it" \
        in e.value.message
    # the reads first: every lane reads the old A[i + 1], as the loop does
    sch = sched(DOUBLED_FIRST.replace('''        with T.block("Y"):
            vi = T.axis.spatial(8, i)
            A[vi] = A[vi] * T.float32(2)
''', "").replace("C[vi, vk] = A[vi + vk]\n", '''C[vi, vk] = A[vi + vk]
        with T.block("Y"):
            vi = T.axis.spatial(8, i)
            A[vi] = A[vi] * T.float32(2)
'''))
    i = sch.get_loops(sch.get_block("Y"))[0]
    sch.vectorize(i)
    check_scheduled(sch)


REPEATED = HEAD + '''@T.prim_func
def repeated(x: T.Buffer((4,), "float32"), R: T.Buffer((64,), "float32")):
    T_add = T.alloc_buffer((4,), "float32")
    for i in range(4):
        with T.block("add"):
            vi = T.axis.spatial(4, i)
            T_add[vi] = x[vi] + T.float32(1)
    for j in range(64):
        with T.block("repeat"):
            vj = T.axis.spatial(64, j)
            R[vj] = T_add[vj // 16]
'''


def test_a_producer_recomputed_in_each_lane_is_accepted():
    # computed at the tiles of 8, `add` writes T_add[j_0 // 2]: lanes 0 and 1 of the
    # vectorized tiles both store x[0] + 1 to T_add[0], each before its loop over the tile
    # reads it (as TVM vectorizes its test `tiled_repeat_op_after_compute_at`)
    sch = sched(REPEATED)
    (j,) = sch.get_loops(sch.get_block("repeat"))
    j0, _ = sch.split(j, [8, 8])
    sch.compute_at(sch.get_block("add"), j0)
    sch.vectorize(j0)
    assert sch.get(j0).kind == "vectorized"
    check_scheduled(sch)


VIEWS = HEAD + '''@T.prim_func
def views(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32")):
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            S = T.match_buffer(B[vi, vj], [], offset_factor=1)
            S[()] = A[vi, vj] * T.float32(2)
'''


def test_a_view_of_each_instance_s_own_element_is_no_shared_element():
    # `S[()]` is B[vi, vj] for each instance (as TVM's `element_wise_subregion_match`)
    sch = sched(VIEWS)
    i, j = sch.get_loops(sch.get_block("B"))
    sch.parallel(i)
    assert sch.get(i).kind == "parallel"


TOTAL = HEAD + '''@T.prim_func
def total(A: T.Buffer((1024, 1024), "float32"), B: T.Buffer((1,), "float32")):
    for i, j in T.grid(1024, 1024):
        with T.block("s"):
            B[0] = B[0] + A[i, j]
'''


def test_a_large_nest_is_checked_in_part():
    # a million points under `i`: a prefix of each loop is read, and two rows adding into
    # B[0] are found there
    sch = sched(TOTAL)
    i, j = sch.get_loops(sch.get_block("s"))
    with refused("parallel/dependence") as e:
        sch.parallel(i)
    assert "iterations `i` = 0 and `i` = 1 of the parallel loop both write `B[0]`" \
        in e.value.message


def test_a_large_nest_whose_copies_write_one_value_is_accepted():
    # every thread copies the same tile of B into B_shared, then reads it: the copies are
    # read in part (a prefix of a billion points), and one store of one value may be read
    # after a write outside that part, so the elements it writes are not judged
    from sched_util import EXAMPLES_VALID
    sch = sched((EXAMPLES_VALID / "gpu_matmul_shared.py").read_text())
    by = sch.get_loops(sch.get_block("C"))[0]
    sch.parallel(by)
    assert sch.get(by).kind == "parallel"


TRSV = HEAD + '''@T.prim_func
def trsv(L: T.Buffer((16, 16), "float32"), x: T.Buffer((16,), "float32")):
    for i in range(16):
        for j in range(i):
            with T.block("s"):
                x[i] = x[i] - L[i, j] * x[j]
'''


def test_a_triangular_loop_is_read_within_its_bounds():
    # row i reads the x[j] of the rows before it: the inner loop's bounds move with `i`
    sch = sched(TRSV)
    i, j = sch.get_loops(sch.get_block("s"))
    with refused("parallel/dependence", "i") as e:
        sch.parallel(i)
    assert "iteration `i` = 2 reads `x[1]`, which iteration `i` = 1 writes" in e.value.message
