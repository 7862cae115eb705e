import pytest
from kernels import MATMUL
from sched_util import body_text, check_result, refused, sched
from test_schedule_loop_kind import RUNNING, STAGES


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


@pytest.mark.parametrize("axis", ["blockIdx.x", "threadIdx.x"])
def test_a_loop_whose_iterations_meet_is_not_bound(axis):
    # the thread blocks of a grid run at once, as a parallel loop's iterations, and so do
    # the threads of one block, with nothing to order their accesses to global memory (TVM
    # puts barriers between accesses to shared memory only): a running sum along `j` is
    # refused with the race rule's witness (loop-nest/parallel-race); rows apart are bound
    sch = sched(RUNNING)
    i, j = sch.get_loops(sch.get_block("step"))
    with refused("bind/dependence", "j") as e:
        sch.bind(j, axis)
    assert e.value.message.startswith(
        "loop 'j': iteration `j` = 1 reads `A[0, 1]`, which iteration `j` = 0 writes: the "
        f"loop bound to {axis} may run them at the same time")
    sch.bind(i, axis)
    check_result(sch)


def test_two_blocks_whose_iterations_meet_are_not_bound_to_blocks():
    # block Y of iteration 0 reads the A[1] that block X of iteration 1 writes
    sch = sched(STAGES)
    (i,) = sch.get_loops(sch.get_block("X"))
    with refused("bind/dependence", "i") as e:
        sch.bind(i, "blockIdx.y")
    assert "iteration `i` = 0 reads `A[1]`, which iteration `i` = 1 writes" in e.value.message


def test_a_reduction_over_the_threads_is_bound():
    # a cross-thread reduction: the threads combine their values
    sch = sched(MATMUL)
    i, j, k = sch.get_loops(sch.get_block("C"))
    sch.bind(i, "blockIdx.x")
    sch.bind(k, "threadIdx.x")
    check_result(sch)

COPY = '''from tvm.script import tir as T


@T.prim_func
def copy(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    S = T.alloc_buffer((64,), "float32", scope="shared")
    for t in range(4):
        for k in range(16):
            with T.block("fill"):
                v = T.axis.spatial(64, t * 16 + k)
                S[v] = A[v] * T.float32(2)
        with T.block("copy"):
            T.block_attr({"auto_copy": True})
            for k in range(64):
                B[k] = S[k]
'''


def test_a_copy_the_threads_share_out_is_bound():
    # every thread would copy all of the shared S to B as written, from what the threads
    # write to S; TVM's LowerAutoCopy spreads a block marked auto_copy over the threads, so
    # binding `t` makes no race; unmarked, it does
    sch = sched(COPY)
    (t,) = sch.get_loops(sch.get_block("copy"))
    sch.bind(t, "threadIdx.x")
    assert sch.get(t).thread_tag == "threadIdx.x"
    sch = sched(COPY.replace('            T.block_attr({"auto_copy": True})\n', ""))
    (t,) = sch.get_loops(sch.get_block("copy"))
    with refused("bind/dependence", "t") as e:
        sch.bind(t, "threadIdx.x")
    assert "iterations `t` = 0 and `t` = 1 of the loop bound to threadIdx.x both write" \
        in e.value.message
