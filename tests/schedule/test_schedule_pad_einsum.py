import pytest

import tirkit
from sched_util import HEAD, MATMUL, body_text, check_same_results, sched

ODD = HEAD + '''@T.prim_func
def mm(A: T.Buffer((15, 14), "float32"), B: T.Buffer((14, 13), "float32"),
       C: T.Buffer((15, 13), "float32")):
    for i, j, k in T.grid(15, 13, 14):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.reads(A[vi, vk], B[vk, vj])
            T.writes(C[vi, vj])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
'''


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
    replayed = sch.trace.apply(tirkit.Schedule(sch.original))
    assert tirkit.structural_equal(replayed.mod, sch.mod)


def test_pad_einsum_that_changes_nothing():
    sch = sched(MATMUL)
    before = sch.mod
    sch.pad_einsum(sch.get_block("C"), [4, 4, 4])
    assert sch.mod is before


def test_pad_einsum_bad_padding():
    sch = sched(ODD)
    with pytest.raises(tirkit.ScheduleError) as e:
        sch.pad_einsum(sch.get_block("C"), [16, 0, 16])
    assert e.value.kind == "pad_einsum/bad-padding"


def test_pad_einsum_of_non_einsum():
    sch = sched(ODD)
    i, j, k = sch.get_loops(sch.get_block("C"))
    sch.fuse(i, j)
    with pytest.raises(tirkit.ScheduleError) as e:
        sch.pad_einsum(sch.get_block("C"), [16, 16, 16])
    assert e.value.kind == "pad_einsum/not-einsum"
