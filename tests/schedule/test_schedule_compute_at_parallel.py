"""compute_at into a parallel or vectorized loop: the block is computed in each iteration,
so where two iterations would then touch one element, one writing, the move is refused with
the race rule's witness, as `parallel` refuses such a loop; a block whose copies write one
value to each element (a padding recomputed in each tile) or whose tiles are disjoint is
moved."""
import pytest

import tirkit
from kernels import HEAD
from sched_util import check_scheduled, refused, sched

ROWS = HEAD + '''@T.prim_func
def rows(A: T.Buffer((8, 64), "float32"), S: T.Buffer((8, 64), "float32")):
    mx = T.alloc_buffer((8,), "float32")
    for i, k in T.grid(8, 64):
        with T.block("mx"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                mx[vi] = T.min_value("float32")
            mx[vi] = T.max(mx[vi], A[vi, vk])
    for i, j in T.grid(8, 64):
        with T.block("S"):
            vi, vj = T.axis.remap("SS", [i, j])
            S[vi, vj] = A[vi, vj] - mx[vi]
'''


def _column_tiles(sch):
    """S's columns in 4 parallel tiles, each over all the rows: (j_0, i, j_1); for a tirkit
    or a TVM schedule."""
    get = getattr(sch, "get_sblock", None) or sch.get_block
    i, j = sch.get_loops(get("S"))
    j0, j1 = sch.split(j, [4, 16])
    sch.reorder(j0, i, j1)
    sch.parallel(j0)
    return j0, i, j1


def test_a_reduction_computed_again_in_each_parallel_tile_is_refused():
    # each column tile would compute the row maxima into the one mx: tile 1's init could
    # reset mx[0] while tile 0 reads it
    sch = sched(ROWS)
    j0, i, j1 = _column_tiles(sch)
    for loop in (i, j0):
        with refused("compute_at/dependence", "j_0") as e:
            sch.compute_at(sch.get_block("mx"), loop)
        assert e.value.message.startswith(
            "block 'mx' computed in each iteration of loop 'j_0': iterations `j_0` = 0 and "
            "`j_0` = 1 of the parallel loop both write `mx[0]`")
    assert [sch.get(x).loop_var.name for x in sch.get_loops(sch.get_block("mx"))] == ["i", "k"]
    check_scheduled(sch)


@pytest.mark.oracle
def test_tvm_moves_the_reduction_into_the_tiles():
    # TVM 0.27's compute_at does not look at the parallel loop around the place it moves a
    # block to (its print spells a block's allocation T.sblock_alloc_buffer)
    tvm = pytest.importorskip("tvm")
    from tvm import s_tir
    text = tirkit.to_script(tirkit.parse(ROWS).module, spelling="tirx").replace(
        "from tvm.script import tirx as T\n", "").replace(
        "= T.alloc_buffer(", "= T.sblock_alloc_buffer(")
    sch = s_tir.Schedule(tvm.script.from_source(text))
    _column_tiles(sch)
    sch.compute_at(sch.get_sblock("mx"), sch.get_loops(sch.get_sblock("S"))[1])
    moved = sch.mod["main"].script()
    assert moved.index("for j_0 in T.parallel(4):") < moved.index('T.sblock("mx")')


def test_a_reduction_computed_in_its_own_parallel_row_is_moved():
    sch = sched(ROWS)
    i, j = sch.get_loops(sch.get_block("S"))
    sch.parallel(i)
    sch.compute_at(sch.get_block("mx"), i)
    assert [sch.get(x).loop_var.name for x in sch.get_loops(sch.get_block("mx"))] == ["i", "ax0"]
    check_scheduled(sch)


SAMPLED = ROWS.replace('''    for i, k in T.grid(8, 64):
        with T.block("mx"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                mx[vi] = T.min_value("float32")
            mx[vi] = T.max(mx[vi], A[vi, vk])''', '''    for i in range(8):
        with T.block("mx"):
            vi = T.axis.spatial(8, i)
            mx[vi] = T.call_extern("float32", "next_sample")''')


def test_a_vectorized_loop_keeps_its_lanes_in_order_too():
    # an extern call may give each lane its own value of mx[vi]: in the vector form lane 0
    # reads the one lane 1 wrote, where the loop it stands for reads its own
    assert "next_sample" in SAMPLED
    sch = sched(SAMPLED)
    i, j = sch.get_loops(sch.get_block("S"))
    sch.vectorize(j)
    with refused("compute_at/dependence", "j") as e:
        sch.compute_at(sch.get_block("mx"), j)
    assert "lane `j` = 0 reads `mx[0]` after lane `j` = 1 writes it" in e.value.message
    # computed once per row, outside the vector
    sch.compute_at(sch.get_block("mx"), i)
    assert [sch.get(x).loop_var.name for x in sch.get_loops(sch.get_block("mx"))] == ["i"]


def _compute_at_titles(sch):
    """The editor's compute_at actions on block mx of the scheduled kernel."""
    from tirkit.schedule.actions import actions_at
    text = tirkit.to_script(sch.mod)
    line = next(n for n, s in enumerate(text.split("\n"), 1) if 'T.block("mx")' in s)
    return [a.title for a in actions_at(tirkit.parse(text), line, 20)
            if a.title.startswith("Compute 'mx'")]


def test_the_editor_offers_only_the_moves_that_keep_the_tiles_apart():
    sch = sched(ROWS)
    _column_tiles(sch)
    assert _compute_at_titles(sch) == []
    sch = sched(ROWS)
    i, j = sch.get_loops(sch.get_block("S"))
    sch.parallel(i)
    assert _compute_at_titles(sch) == ["Compute 'mx' at loop 'i' of 'S'",
                                       "Compute 'mx' at loop 'j' of 'S'"]


def test_a_reduction_computed_again_in_each_lane_of_a_vectorized_loop():
    # the lanes compute the row maximum in step from their own inits, each the same values
    # as the loop's lanes compute one after another: the block is moved
    sch = sched(ROWS)
    i, j = sch.get_loops(sch.get_block("S"))
    sch.vectorize(j)
    sch.compute_at(sch.get_block("mx"), j)
    assert [sch.get(x).loop_var.name for x in sch.get_loops(sch.get_block("mx"))] == [
        "i", "j", "ax0"]
    check_scheduled(sch)
    # a sample in each step of the reduction: the lanes' maxima differ, and in step lane
    # 0 reads the mx[0] lane 1 wrote last, where the loop's lane 0 reads its own; the
    # accesses in the block's own loop are read
    sampled = ROWS.replace("T.max(mx[vi], A[vi, vk])",
                           'T.max(mx[vi], A[vi, vk] * T.call_extern("float32", "next_sample"))')
    sch = sched(sampled)
    i, j = sch.get_loops(sch.get_block("S"))
    sch.vectorize(j)
    with refused("compute_at/dependence", "j") as e:
        sch.compute_at(sch.get_block("mx"), j)
    assert "lane `j` = 0 reads `mx[0]` after lane `j` = 1 writes it at `ax0` = 0" \
        in e.value.message


def test_a_reduction_computed_again_in_each_thread_is_refused():
    # the column tiles bound to the threads of one block: each thread would compute the row
    # maxima into the one global mx, as the parallel tiles would
    sch = sched(ROWS)
    i, j = sch.get_loops(sch.get_block("S"))
    j0, j1 = sch.split(j, [4, 16])
    sch.reorder(j0, i, j1)
    sch.bind(j0, "threadIdx.x")
    with refused("compute_at/dependence", "j_0") as e:
        sch.compute_at(sch.get_block("mx"), i)
    assert e.value.message.startswith(
        "block 'mx' computed in each iteration of loop 'j_0': iterations `j_0` = 0 and "
        "`j_0` = 1 of the loop bound to threadIdx.x both write `mx[0]`")
