from kernels import MATMUL
from sched_util import body_text, check_result, refused, sched


def test_bind_block_and_thread():
    sch = sched(MATMUL)
    i, j, k = sch.get_loops(sch.get_block("C"))
    sch.bind(i, "blockIdx.x")
    sch.bind(j, "threadIdx.x")
    text = body_text(sch)
    assert 'for i in T.thread_binding(16, thread="blockIdx.x"):' in text
    assert 'for j in T.thread_binding(16, thread="threadIdx.x"):' in text
    check_result(sch)


def test_bind_reduction_loop_to_block_index_is_refused():
    sch = sched(MATMUL)
    i, j, k = sch.get_loops(sch.get_block("C"))
    with refused("bind/feeds-reduction", "k"):
        sch.bind(k, "blockIdx.y")


def test_bind_reduction_loop_to_thread_is_a_cross_thread_reduction():
    sch = sched(MATMUL)
    i, j, k = sch.get_loops(sch.get_block("C"))
    sch.bind(k, "threadIdx.x")
    assert sch.get(k).thread_tag == "threadIdx.x"


def test_bind_unknown_axis():
    sch = sched(MATMUL)
    i, j, k = sch.get_loops(sch.get_block("C"))
    with refused("bind/unknown-axis", "i"):
        sch.bind(i, "warpIdx.x")


def test_split_of_bound_loop_is_refused():
    sch = sched(MATMUL)
    i, j, k = sch.get_loops(sch.get_block("C"))
    sch.bind(i, "blockIdx.x")
    with refused("split/annotated-loop", "i"):
        sch.split(i, [2, 8])
    with refused("fuse/annotated-loop"):
        sch.fuse(i, j)
