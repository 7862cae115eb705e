from kernels import CHAIN, HEAD, MATMUL
from sched_util import body_text, check_scheduled, refused, sched

TWO_PLACES = HEAD + '''@T.prim_func
def two(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32")):
    for i, j in T.grid(8, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi, vj], A[vj, vi])
            T.writes(B[vi, vj])
            B[vi, vj] = A[vi, vj] + A[vj, vi]
'''


def test_reindex_transposed_read():
    sch = sched(CHAIN)
    rb = sch.reindex(sch.get_block("C"), ("read", 0))
    assert rb.name == "B_reindex_reindex"
    text = body_text(sch)
    assert 'B_reindex = T.alloc_buffer((8, 16), "float32")' in text
    assert "B_reindex[v0, v1] = B[v1, v0]" in text
    assert "C[vi, vj] = B_reindex[vi, vj] + T.float32(1)" in text
    check_scheduled(sch)


def test_reindex_write_of_reduction():
    sch = sched(MATMUL)
    sch.reindex(sch.get_block("C"), ("write", 0))
    text = body_text(sch)
    assert "C_reindex[vi, vj] = C_reindex[vi, vj] + A[vi, vk] * B[vk, vj]" in text
    assert "C[v0, v1] = C_reindex[v0, v1]" in text
    check_scheduled(sch)


def test_reindex_of_buffer_read_at_two_places():
    sch = sched(TWO_PLACES)
    with refused("reindex/several-accesses", "B"):
        sch.reindex(sch.get_block("B"), ("read", 0))


def test_reindex_bad_index():
    sch = sched(MATMUL)
    with refused("reindex/bad-index"):
        sch.reindex(sch.get_block("C"), ("write", 3))
