from kernels import HEAD, MATMUL, matmul
from sched_util import body_text, check_replay, check_same_results, refused, sched

ODD = matmul(15, 13, 14, name="mm")


def test_pad_einsum_matmul():
    sch = sched(ODD)
    sch.pad_einsum(sch.get_block("C"), [16, 16, 16])
    text = body_text(sch)
    assert "for i, j, k in T.grid(16, 16, 16):" in text
    assert "A_pad[v0, v1] = T.if_then_else(v0 < 15 and v1 < 14, A[v0, v1], T.float32(0))" \
        in text
    assert "C_pad[vi, vj] = C_pad[vi, vj] + A_pad[vi, vk] * B_pad[vk, vj]" in text
    assert "for i0, i1 in T.grid(15, 13):" in text and "C[v0, v1] = C_pad[v0, v1]" in text
    check_same_results(sch)
    check_replay(sch)


def test_pad_einsum_that_changes_nothing():
    sch = sched(MATMUL)
    before = sch.mod
    sch.pad_einsum(sch.get_block("C"), [4, 4, 4])
    assert sch.mod is before


def test_pad_einsum_bad_padding():
    sch = sched(ODD)
    with refused("pad_einsum/bad-padding"):
        sch.pad_einsum(sch.get_block("C"), [16, 0, 16])


def test_pad_einsum_of_non_einsum():
    sch = sched(ODD)
    i, j, k = sch.get_loops(sch.get_block("C"))
    sch.fuse(i, j)
    with refused("pad_einsum/not-einsum"):
        sch.pad_einsum(sch.get_block("C"), [16, 16, 16])


SHARED_NEST = HEAD + '''@T.prim_func
def f(w: T.Buffer((6, 6), "float32"), x: T.Buffer((6,), "float32"), y: T.Buffer((6,), "float32")):
    wbuf = T.alloc_buffer((6, 6), "float32")
    for i0 in range(1):
        for a, b in T.grid(6, 6):
            with T.block("wbuf"):
                va, vb = T.axis.remap("SS", [a, b])
                wbuf[va, vb] = w[va, vb] * T.float32(2)
        for i, k in T.grid(6, 6):
            with T.block("y"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    y[vi] = T.float32(0)
                y[vi] = y[vi] + wbuf[vi, vk] * x[vk]
'''


def test_pad_einsum_refuses_an_output_read_in_the_same_nest():
    # the padded output is copied back after the whole `i0` nest, but block 'y' reads it
    # inside that nest: the copy would come too late
    sch = sched(SHARED_NEST)
    with refused("pad_einsum/shared-nest", "y"):
        sch.pad_einsum(sch.get_block("wbuf"), [8, 8])
