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
