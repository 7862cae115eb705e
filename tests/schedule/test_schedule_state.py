import pytest

import tirkit
from kernels import CHAIN, MATMUL, MATMUL_RELU
from sched_util import body_text, check_result, refused, sched

MODULE = '''from tvm.script import ir as I
from tvm.script import tir as T


@I.ir_module
class Mod:
    @T.prim_func
    def add(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        for i in range(8):
            with T.block("add"):
                vi = T.axis.spatial(8, i)
                T.reads(A[vi])
                T.writes(B[vi])
                B[vi] = A[vi] + T.float32(1)

    @T.prim_func
    def mul(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        for i in range(8):
            with T.block("mul"):
                vi = T.axis.spatial(8, i)
                T.reads(A[vi])
                T.writes(B[vi])
                B[vi] = A[vi] * T.float32(2)
'''


def test_schedule_is_exported_and_takes_a_prim_func():
    r = tirkit.parse(MATMUL)
    f = r.module.functions[0][1]
    sch = tirkit.Schedule(f)
    assert sch.get(sch.get_block("C")).name_hint == "C"
    assert sch.mod["matmul"] is f


def test_get_block_unknown_name():
    sch = sched(MATMUL)
    with refused("stale-handle"):
        sch.get_block("nope")


def test_get_loops_and_child_blocks():
    sch = sched(MATMUL_RELU)
    c = sch.get_block("C")
    loops = sch.get_loops(c)
    assert [sch.get(x).loop_var.name for x in loops] == ["i", "j", "k"]
    root = sch.get_block("root")
    assert [b.name for b in sch.get_child_blocks(root)] == ["C", "relu"]
    assert [b.name for b in sch.get_child_blocks(loops[0])] == ["C"]


def test_producers_and_consumers():
    sch = sched(CHAIN)
    b, c, d = (sch.get_block(n) for n in "BCD")
    assert [x.name for x in sch.get_producers(c)] == ["B"]
    assert [x.name for x in sch.get_consumers(c)] == ["D"]
    assert sch.get_producers(b) == [] and sch.get_consumers(d) == []


def test_handles_survive_replaces():
    sch = sched(MATMUL_RELU)
    c = sch.get_block("C")
    i, j, k = sch.get_loops(c)
    sch.reorder(k, i)
    sch.parallel(j)
    assert sch.get(i).loop_var.name == "i" and sch.get(j).kind == "parallel"
    sch.compute_inline  # attribute lookup through the registry
    with pytest.raises(AttributeError):
        sch.no_such_primitive


def test_module_with_two_functions():
    r = tirkit.parse(MODULE)
    sch = tirkit.Schedule(r.module)
    b = sch.get_block("mul", func_name="mul")
    (i,) = sch.get_loops(b)
    sch.vectorize(i)
    assert "for i in T.vectorized(8):" in body_text(sch)
    assert "vectorized" not in tirkit.to_script(sch.mod["add"])
    assert 'sch.get_block(name="mul", func_name="mul")' in sch.trace.as_python()
    check_result(sch)


def test_replace_keeps_untouched_subtrees():
    sch = sched(MATMUL_RELU)
    before = sch.mod.functions[0][1].body.block.body.seq[1]
    c = sch.get_block("C")
    i, j, k = sch.get_loops(c)
    sch.split(i, [4, 4])
    after = sch.mod.functions[0][1].body.block.body.seq[1]
    assert after is before           # the relu nest is shared, not copied
