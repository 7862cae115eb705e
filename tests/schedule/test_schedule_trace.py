import tirkit
from kernels import MATMUL_RELU
from sched_util import check_scheduled, sched
from tirkit.schedule import Schedule


def _schedule(sch):
    c = sch.get_block("C")
    d = sch.get_block("relu")
    i, j = sch.get_loops(d)
    i0, i1 = sch.split(i, [None, 4])
    j0, j1 = sch.split(j, [2, None])
    sch.reorder(i0, j0, i1, j1)
    sch.compute_at(c, j0)
    f = sch.fuse(i0, j0)
    sch.parallel(f)
    sch.vectorize(j1)
    ax = sch.get_loops(c)
    sch.decompose_reduction(c, ax[-1])
    sch.annotate(d, "tag", "x")
    return sch


def test_trace_prints_runnable_python():
    sch = _schedule(sched(MATMUL_RELU))
    py = sch.trace.as_python()
    lines = py.splitlines()
    assert lines[0] == 'b0 = sch.get_block(name="C")'
    assert 'l2, l3 = sch.get_loops(block=b1)' in lines
    assert 'l4, l5 = sch.split(loop=l2, factors=[None, 4], preserve_unit_iters=True)' in lines
    assert "sch.reorder(l4, l6, l5, l7)" in lines
    assert "sch.compute_at(block=b0, loop=l6, preserve_unit_loops=False, index=-1)" in lines
    assert "l8 = sch.fuse(l4, l6, preserve_unit_iters=True)" in lines
    assert "b13 = sch.decompose_reduction(block=b0, loop=l12)" in lines
    assert 'sch.annotate(block_or_loop=b1, ann_key="tag", ann_val="x")' in lines
    check_scheduled(sch)


def test_replay_on_original_reproduces_result():
    sch = _schedule(sched(MATMUL_RELU))
    fresh = Schedule(sch.original)
    sch.trace.apply(fresh)
    assert tirkit.structural_equal(fresh.mod, sch.mod)
    assert tirkit.to_script(fresh.mod) == tirkit.to_script(sch.mod)
    assert len(fresh.trace) == len(sch.trace)


def test_failed_primitive_is_not_recorded():
    sch = sched(MATMUL_RELU)
    c = sch.get_block("C")
    i, j, k = sch.get_loops(c)
    n = len(sch.trace)
    try:
        sch.parallel(k)
    except tirkit.ScheduleError:
        pass
    assert len(sch.trace) == n
