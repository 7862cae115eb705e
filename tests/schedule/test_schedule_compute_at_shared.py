"""compute_at of a shared-memory copy under thread-bound loops: the copy covers what all the
threads of a block read (the threadIdx and vthread loops above the target loop are relaxed,
as TVM does for a buffer those threads share); a local buffer is not relaxed, nor a global
one.  Where TVM 0.27 is installed the result is structurally equal to TVM's."""
import pytest

import tirkit

from sched_util import body_text, check_result

SRC = '''# from tvm.script import tirx as T
@T.prim_func(s_tir=True)
def mm(A: T.Buffer((64, 32), "float32"), B: T.Buffer((32, 48), "float32"),
       C: T.Buffer((64, 48), "float32")):
    for i, j, k in T.grid(64, 48, 32):
        with T.sblock("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.reads(A[vi, vk], B[vk, vj])
            T.writes(C[vi, vj])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
'''


def _steps(sch, get, scope="shared"):
    """Tiles bound to blockIdx / vthread / threadIdx, a local accumulator, the operands
    copied to `scope` at the outer reduction loop."""
    b = get(sch, "C")
    i, j, k = sch.get_loops(b)
    it = sch.split(i, [2, 1, 4, 2, 4])
    jt = sch.split(j, [3, 1, 8, 1, 2])
    kt = sch.split(k, [4, 2, 4])
    sch.reorder(it[0], jt[0], it[1], jt[1], it[2], jt[2], kt[0], kt[1], it[3], jt[3], kt[2],
                it[4], jt[4])
    sch.bind(sch.fuse(it[0], jt[0]), "blockIdx.x")
    sch.bind(sch.fuse(it[1], jt[1]), "vthread.x")
    tx = sch.fuse(it[2], jt[2])
    sch.bind(tx, "threadIdx.x")
    sch.reverse_compute_at(sch.cache_write(b, 0, "local"), tx)
    for idx in (0, 1):
        sch.compute_at(sch.cache_read(b, idx, scope), kt[0])
    return sch


def test_a_shared_copy_covers_the_tile_of_the_whole_block():
    sch = _steps(tirkit.Schedule(tirkit.parse(SRC).module), lambda s, n: s.get_block(n))
    text = body_text(sch)
    # the block's 32 x 8 tile of A and 8 x 16 tile of B, not one thread's 8 x 8 and 8 x 2
    assert "for ax0, ax1 in T.grid(32, 8):" in text
    assert "for ax0, ax1 in T.grid(8, 16):" in text
    a_copy = text[text.index('T.sblock("A_shared")'):text.index('T.sblock("B_shared")')]
    assert "i_2_j_2_fused" not in a_copy          # no thread's own offset
    # the write-back of the local accumulator stays one thread's 8 x 2 tile
    wb = text[text.index('T.sblock("C_local")'):]
    assert "i_2_j_2_fused // 8 * 8" in wb
    check_result(sch)


def test_a_global_copy_is_not_relaxed_over_threads():
    sch = _steps(tirkit.Schedule(tirkit.parse(SRC).module), lambda s, n: s.get_block(n),
                 scope="global")
    text = body_text(sch)
    a_copy = text[text.index('T.sblock("A_global")'):text.index('T.sblock("B_global")')]
    assert "i_2_j_2_fused" in a_copy              # each thread copies what it reads
    assert "for ax0, ax1 in T.grid(8, 8):" in text


@pytest.mark.oracle
def test_the_shared_copies_equal_tvms():
    tvm = pytest.importorskip("tvm")
    from tvm import s_tir
    theirs = _steps(s_tir.Schedule(tvm.script.from_source(SRC.split("\n", 1)[1])),
                    lambda s, n: s.get_sblock(n))
    ours = _steps(tirkit.Schedule(tirkit.parse(SRC).module), lambda s, n: s.get_block(n))
    tf = tirkit.parse(theirs.mod["main"].script()).module.functions[0][1]
    assert tirkit.structural_equal(ours.mod.functions[0][1].body, tf.body)
