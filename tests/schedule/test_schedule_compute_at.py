from kernels import CHAIN, HEAD, MATMUL_RELU, elementwise_pair
from sched_util import body_text, check_scheduled, loops_of, refused, sched


def _tiled_relu(sch):
    d = sch.get_block("relu")
    i, j = sch.get_loops(d)
    i0, i1 = sch.split(i, [None, 4])
    j0, j1 = sch.split(j, [None, 8])
    sch.reorder(i0, j0, i1, j1)
    return i0, j0, i1, j1


def test_compute_at_tile():
    sch = sched(MATMUL_RELU)
    i0, j0, i1, j1 = _tiled_relu(sch)
    sch.compute_at(sch.get_block("C"), j0)
    text = body_text(sch)
    assert "for i_0, j_0 in T.grid(4, 2):" in text
    assert "for ax0, ax1, ax2 in T.grid(4, 8, 32):" in text
    assert "vi = T.axis.spatial(16, i_0 * 4 + ax0)" in text
    assert "vj = T.axis.spatial(16, j_0 * 8 + ax1)" in text
    assert "vk = T.axis.reduce(32, ax2)" in text
    # the producer comes first in the loop body
    assert text.index('T.block("C")') < text.index('T.block("relu")')
    assert [sch.get(x).loop_var.name for x in sch.get_loops(sch.get_block("C"))] == \
        ["i_0", "j_0", "ax0", "ax1", "ax2"]
    check_scheduled(sch)


def test_compute_at_innermost_unit_loops_dropped():
    sch = sched(CHAIN)
    i, j = sch.get_loops(sch.get_block("C"))
    sch.compute_at(sch.get_block("B"), j)
    text = body_text(sch)
    assert 'vi, vj = T.axis.remap("SS", [j, i])' in text
    assert text.index('T.block("B")') < text.index('T.block("C")') < text.rindex("for i, j in")
    check_scheduled(sch)


def test_compute_at_preserve_unit_loops():
    sch = sched(CHAIN)
    i, j = sch.get_loops(sch.get_block("C"))
    sch.compute_at(sch.get_block("B"), j, preserve_unit_loops=True)
    assert "for ax0, ax1 in T.grid(1, 1):" in body_text(sch)
    check_scheduled(sch)


def test_compute_at_into_ancestor():
    sch = sched(MATMUL_RELU)
    i, j, k = sch.get_loops(sch.get_block("C"))
    with refused("compute_at/loop-is-ancestor", "j"):
        sch.compute_at(sch.get_block("C"), j)


def test_compute_at_of_output_block():
    sch = sched(CHAIN)
    c = sch.get_block("C")
    i, j = sch.get_loops(c)
    with refused("compute_at/output-block", "D"):
        sch.compute_at(sch.get_block("D"), i)


def test_compute_at_consumer_not_under_loop():
    sch = sched(CHAIN)
    # C is consumed by D; a loop of B's own nest does not hold D
    i, j = sch.get_loops(sch.get_block("B"))
    sch.compute_inline(sch.get_block("B"))
    sch2 = sched(CHAIN)
    bi, bj = sch2.get_loops(sch2.get_block("B"))
    with refused("compute_at/consumers-not-under-loop") as e:
        sch2.compute_at(sch2.get_block("C"), bi)
    assert e.value.node_name == "D" and e.value.span.line == 21


def test_reverse_compute_at_tile():
    sch = sched(MATMUL_RELU)
    i, j, k = sch.get_loops(sch.get_block("C"))
    i0, i1 = sch.split(i, [None, 4])
    sch.reverse_compute_at(sch.get_block("relu"), i0)
    text = body_text(sch)
    assert "for ax0, ax1 in T.grid(4, 16):" in text
    assert "vi = T.axis.spatial(16, i_0 * 4 + ax0)" in text
    assert text.index('T.block("C")') < text.index('T.block("relu")')
    check_scheduled(sch)


def test_reverse_compute_at_producer_not_under_loop():
    sch = sched(CHAIN)
    i, j = sch.get_loops(sch.get_block("B"))
    with refused("reverse_compute_at/producers-not-under-loop", "C"):
        sch.reverse_compute_at(sch.get_block("D"), i)


def test_reverse_compute_at_into_ancestor():
    sch = sched(CHAIN)
    i, j = sch.get_loops(sch.get_block("D"))
    with refused("reverse_compute_at/loop-is-ancestor", "i"):
        sch.reverse_compute_at(sch.get_block("D"), i)


# ---- symbolic extents, solved dimensions, predicates, insertion point ----------------------

# a normalisation over a batch of rows whose count is a shape symbol
SYM_NORM = HEAD + '''@T.prim_func
def sym_norm(a: T.handle, c: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (2, n, 8), "float32")
    C = T.match_buffer(c, (2, n, 8), "float32")
    S = T.alloc_buffer((2, n), "float32")
    for b, i, k in T.grid(2, n, 8):
        with T.block("S"):
            vb, vi, vk = T.axis.remap("SSR", [b, i, k])
            T.reads(A[vb, vi, vk])
            T.writes(S[vb, vi])
            with T.init():
                S[vb, vi] = T.float32(1)
            S[vb, vi] = S[vb, vi] + A[vb, vi, vk] * A[vb, vi, vk]
    for b, i, j in T.grid(2, n, 8):
        with T.block("C"):
            vb, vi, vj = T.axis.remap("SSS", [b, i, j])
            T.reads(A[vb, vi, vj], S[vb, vi])
            T.writes(C[vb, vi, vj])
            C[vb, vi, vj] = A[vb, vi, vj] / S[vb, vi]
'''


def test_compute_at_symbolic_extent():
    sch = sched(SYM_NORM)
    b = loops_of(sch, "C")[0]
    sch.compute_at(sch.get_block("S"), b)
    text = body_text(sch)
    assert "for b in range(2):" in text
    assert "for ax0, ax1 in T.grid(n, 8):" in text
    assert 'vb, vi, vk = T.axis.remap("SSR", [b, ax0, ax1])' in text
    assert text.index('T.block("S")') < text.index('T.block("C")')
    check_scheduled(sch, shapes=[(2, 5, 8), (2, 5, 8)], seed=3)


def test_reverse_compute_at_symbolic_extent():
    sch = sched(SYM_NORM)
    b = loops_of(sch, "S")[0]
    sch.reverse_compute_at(sch.get_block("C"), b)
    text = body_text(sch)
    assert "for ax0, ax1 in T.grid(n, 8):" in text
    assert 'vb, vi, vj = T.axis.remap("SSS", [b, ax0, ax1])' in text
    assert text.index('T.block("S")') < text.index('T.block("C")')
    check_scheduled(sch, shapes=[(2, 7, 8), (2, 7, 8)], seed=3)


# a constant first dimension, and an intermediate buffer in a split (v // 4, v % 4) layout
LAYOUT = HEAD + '''@T.prim_func
def layout(A: T.Buffer((1, 16, 8), "float32"), D: T.Buffer((16, 8), "float32")):
    B = T.alloc_buffer((1, 16, 8), "float32")
    C = T.alloc_buffer((4, 8, 4), "float32")
    for i, j in T.grid(16, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[0, vi, vj])
            T.writes(B[0, vi, vj])
            B[0, vi, vj] = A[0, vi, vj] * T.float32(3)
    for i, j in T.grid(16, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(B[0, vi, vj])
            T.writes(C[vi // 4, vj, vi % 4])
            C[vi // 4, vj, vi % 4] = B[0, vi, vj] + T.float32(1)
    for i, j in T.grid(16, 8):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(C[vi // 4, vj, vi % 4])
            T.writes(D[vi, vj])
            D[vi, vj] = C[vi // 4, vj, vi % 4] * T.float32(2)
'''


def test_compute_at_constant_dimension():
    sch = sched(LAYOUT)
    i = loops_of(sch, "C")[0]
    sch.compute_at(sch.get_block("B"), i)
    text = body_text(sch)
    assert "for ax0 in range(8):" in text
    assert 'vi, vj = T.axis.remap("SS", [i, ax0])' in text
    check_scheduled(sch)


def test_compute_at_split_layout_pins_one_row():
    sch = sched(LAYOUT)
    i = loops_of(sch, "D")[0]
    sch.compute_at(sch.get_block("C"), i)
    text = body_text(sch)
    # D's row i needs C[i // 4, 0:8, i % 4]: row i of C's own iteration space, not a tile
    assert "for ax0 in range(8):" in text
    assert 'vi, vj = T.axis.remap("SS", [i, ax0])' in text
    check_scheduled(sch)


def test_reverse_compute_at_split_layout():
    sch = sched(LAYOUT)
    i = loops_of(sch, "C")[0]
    sch.reverse_compute_at(sch.get_block("D"), i)
    assert 'vi, vj = T.axis.remap("SS", [i, ax0])' in body_text(sch)
    check_scheduled(sch)


# producer and consumer over a 60-element buffer, each on an 8 x 8 grid with a predicate
PRED = HEAD + '''@T.prim_func
def pred(A: T.Buffer((60,), "float32"), C: T.Buffer((60,), "float32")):
    B = T.alloc_buffer((60,), "float32")
    for i, j in T.grid(8, 8):
        with T.block("B"):
            v = T.axis.spatial(60, i * 8 + j)
            T.where(i * 8 + j < 60)
            T.reads(A[v])
            T.writes(B[v])
            B[v] = A[v] * T.float32(2)
    for i, j in T.grid(8, 8):
        with T.block("C"):
            v = T.axis.spatial(60, i * 8 + j)
            T.where(i * 8 + j < 60)
            T.reads(B[v])
            T.writes(C[v])
            C[v] = B[v] + T.float32(1)
'''


def test_compute_at_block_with_predicate():
    sch = sched(PRED)
    i = loops_of(sch, "C")[0]
    sch.compute_at(sch.get_block("B"), i)
    text = body_text(sch)
    assert "v = T.axis.spatial(60, i * 8 + ax0)" in text
    # the block's own predicate is what its new range needs: written once
    assert text.count("T.where(i * 8 + ax0 < 60)") == 1
    check_scheduled(sch)


def test_reverse_compute_at_block_with_predicate():
    sch = sched(PRED)
    i = loops_of(sch, "B")[0]
    sch.reverse_compute_at(sch.get_block("C"), i)
    text = body_text(sch)
    assert "v = T.axis.spatial(60, i * 8 + ax0)" in text
    assert text.count("T.where(i * 8 + ax0 < 60)") == 1
    check_scheduled(sch)


# the consumer runs only where the produced value is positive
GUARDED = elementwise_pair("guarded", (8, 8), producer="- T.float32(0.25)",
                           consumer="* T.float32(10)", where="B[i, j] > T.float32(0)",
                           regions=True)


def test_reverse_compute_at_keeps_a_data_predicate():
    sch = sched(GUARDED)
    i = loops_of(sch, "B")[0]
    sch.reverse_compute_at(sch.get_block("C"), i)
    text = body_text(sch)
    # the guard is not implied by the new range: it stays, over the new loops
    assert "T.where(B[i, ax0] > T.float32(0))" in text
    check_scheduled(sch)


# B feeds C and D; C's loop nest is inside B's loop, D stays apart
SIBLINGS = HEAD + '''@T.prim_func
def siblings(A: T.Buffer((16,), "float32"), D: T.Buffer((16,), "float32"),
             E: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,), "float32")
    for i in range(4):
        for j in range(4):
            with T.block("B"):
                v = T.axis.spatial(16, i * 4 + j)
                T.reads(A[v])
                T.writes(B[v])
                B[v] = A[v] + T.float32(1)
        for j in range(4):
            with T.block("C"):
                v = T.axis.spatial(16, i * 4 + j)
                T.reads(B[v])
                T.writes(D[v])
                D[v] = B[v] * T.float32(2)
    for i in range(16):
        with T.block("E"):
            v = T.axis.spatial(16, i)
            T.reads(B[v])
            T.writes(E[v])
            E[v] = B[v] * T.float32(3)
'''


def test_reverse_compute_at_goes_last_by_default():
    sch = sched(SIBLINGS)
    i = loops_of(sch, "B")[0]
    sch.reverse_compute_at(sch.get_block("E"), i)
    text = body_text(sch)
    # E does not consume C: it goes at the end of the loop body, after C
    assert text.index('T.block("B")') < text.index('T.block("C")') < text.index('T.block("E")')
    check_scheduled(sch)
    sch2 = sched(SIBLINGS)
    sch2.reverse_compute_at(sch2.get_block("E"), loops_of(sch2, "B")[0], index=-2)
    text = body_text(sch2)
    assert text.index('T.block("B")') < text.index('T.block("E")') < text.index('T.block("C")')
    check_scheduled(sch2)


READ_AHEAD = HEAD + '''@T.prim_func
def read_ahead(A: T.Buffer((16,), "float32"), C: T.Buffer((15,), "float32")):
    B = T.alloc_buffer((16,), "float32")
    for i in range(16):
        with T.block("B"):
            v = T.axis.spatial(16, i)
            T.reads(A[v])
            T.writes(B[v])
            B[v] = A[v] * T.float32(2)
    for i in range(15):
        with T.block("C"):
            v = T.axis.spatial(15, i)
            T.reads(B[v:v + 2])
            T.writes(C[v])
            C[v] = B[v] + B[v + 1]
'''


def test_reverse_compute_at_reading_ahead_is_refused():
    sch = sched(READ_AHEAD)
    i = loops_of(sch, "B")[0]
    with refused("reverse_compute_at/region", "C"):
        sch.reverse_compute_at(sch.get_block("C"), i)


def test_compute_at_reading_ahead_computes_the_window():
    sch = sched(READ_AHEAD)
    i = loops_of(sch, "C")[0]
    sch.compute_at(sch.get_block("B"), i)
    text = body_text(sch)
    assert "for ax0 in range(2):" in text
    assert "v = T.axis.spatial(16, i + ax0)" in text
    check_scheduled(sch)


# the consumer reads B at a fused index: each of its row iterators is pinned by B's row
FUSED = HEAD + '''@T.prim_func
def fused(A: T.Buffer((32, 8), "float32"), C: T.Buffer((4, 8, 8), "float32")):
    B = T.alloc_buffer((32, 8), "float32")
    for i, j in T.grid(32, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi, vj])
            T.writes(B[vi, vj])
            B[vi, vj] = A[vi, vj] + T.float32(5)
    for i, j, k in T.grid(4, 8, 8):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSS", [i, j, k])
            T.reads(B[vi * 8 + vj, vk])
            T.writes(C[vi, vj, vk])
            C[vi, vj, vk] = B[vi * 8 + vj, vk] * T.float32(0.5)
'''


def test_reverse_compute_at_fused_index():
    sch = sched(FUSED)
    i = loops_of(sch, "B")[0]
    sch.reverse_compute_at(sch.get_block("C"), i)
    text = body_text(sch)
    assert "vi = T.axis.spatial(4, i // 8)" in text
    assert "vj = T.axis.spatial(8, i % 8)" in text
    assert "for ax0 in range(8):" in text
    check_scheduled(sch)


# C pads B by one element on each side
PADDED = HEAD + '''@T.prim_func
def padded(A: T.Buffer((8,), "float32"), C: T.Buffer((10,), "float32")):
    B = T.alloc_buffer((8,), "float32")
    for i in range(8):
        with T.block("B"):
            v = T.axis.spatial(8, i)
            T.reads(A[v])
            T.writes(B[v])
            B[v] = A[v] * T.float32(2)
    for i in range(10):
        with T.block("C"):
            v = T.axis.spatial(10, i)
            T.reads(B[v - 1])
            T.writes(C[v])
            C[v] = T.if_then_else(1 <= v and v < 9, B[v - 1], T.float32(0))
'''


def test_compute_at_shifted_start_gets_domain_predicates():
    sch = sched(PADDED)
    i = loops_of(sch, "C")[0]
    sch.compute_at(sch.get_block("B"), i)
    text = body_text(sch)
    # the start keeps its subtraction; the predicates carry the constant on the bound's side
    assert "v = T.axis.spatial(8, i - 1)" in text
    assert "T.where(1 <= i and i < 9)" in text
    check_scheduled(sch)


# the producer iterates in int64, the consumer in int32
WIDE = elementwise_pair("wide", ("T.int64(8)", "T.int64(8)"), (8, 8), producer="+ T.float32(1)",
                        consumer="* T.float32(3)", regions=True)


def test_compute_at_int64_iterators_from_int32_loops():
    sch = sched(WIDE)
    i = loops_of(sch, "C")[0]
    sch.compute_at(sch.get_block("B"), i)
    text = body_text(sch)
    # the needed row is widened to the iterator's type; the new loop is int64 as well
    assert 'vi = T.axis.spatial(T.int64(8), T.Cast("int64", i))' in text
    assert "for ax0 in range(T.int64(8)):" in text
    assert "T.where" not in text
    check_scheduled(sch)


# each element of B is repeated 4 times; the consumer is tiled by 2
REPEAT = HEAD + '''@T.prim_func
def repeat(A: T.Buffer((4,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((4,), "float32")
    for i in range(4):
        with T.block("B"):
            v = T.axis.spatial(4, i)
            T.reads(A[v])
            T.writes(B[v])
            B[v] = A[v] + T.float32(1)
    for i0, i1 in T.grid(8, 2):
        with T.block("C"):
            v = T.axis.spatial(16, i0 * 2 + i1)
            T.reads(B[v // 4])
            T.writes(C[v])
            C[v] = B[v // 4]
'''


def test_compute_at_divided_index_over_a_tile():
    sch = sched(REPEAT)
    i0 = loops_of(sch, "C")[0]
    sch.compute_at(sch.get_block("B"), i0)
    text = body_text(sch)
    # (i0 * 2 + i1) // 4 over i1 in [0, 2) is the one element i0 // 2
    assert "v = T.axis.spatial(4, i0 // 2)" in text
    check_scheduled(sch)


# P is zeroed by one block and then partly overwritten by another
TWO_WRITERS = HEAD + '''@T.prim_func
def two_writers(A: T.Buffer((6,), "float32"), C: T.Buffer((6,), "float32")):
    P = T.alloc_buffer((8,), "float32")
    for i in range(8):
        with T.block("zero"):
            v = T.axis.spatial(8, i)
            T.reads()
            T.writes(P[v])
            P[v] = T.float32(0)
    for i in range(6):
        with T.block("fill"):
            v = T.axis.spatial(6, i)
            T.reads(A[v])
            T.writes(P[v + 1])
            P[v + 1] = A[v]
    for i in range(6):
        with T.block("C"):
            v = T.axis.spatial(6, i)
            T.reads(P[v:v + 3])
            T.writes(C[v])
            C[v] = P[v] + P[v + 1] + P[v + 2]
'''


def test_compute_at_of_one_of_two_writers_is_refused():
    sch = sched(TWO_WRITERS)
    i = loops_of(sch, "C")[0]
    # moving "zero" under C's loop would run it after "fill" and wipe what fill wrote
    with refused("compute_at/several-writers", "fill"):
        sch.compute_at(sch.get_block("zero"), i)
    with refused("reverse_compute_at/several-writers"):
        sch.reverse_compute_at(sch.get_block("fill"), loops_of(sch, "zero")[0])


# B is A reversed; C reads B transposed
REVERSED = HEAD + '''@T.prim_func
def reversed_(A: T.Buffer((6, 4), "float32"), C: T.Buffer((4, 6), "float32")):
    B = T.alloc_buffer((6, 4), "float32")
    for i, j in T.grid(6, 4):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi, vj])
            T.writes(B[5 - vi, 3 - vj])
            B[5 - vi, 3 - vj] = A[vi, vj] + T.float32(1)
    for i, j in T.grid(4, 6):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(B[vj, vi])
            T.writes(C[vi, vj])
            C[vi, vj] = B[vj, vi] * T.float32(2)
'''


def test_compute_at_reversed_index():
    sch = sched(REVERSED)
    i = loops_of(sch, "C")[0]
    sch.compute_at(sch.get_block("B"), i)
    text = body_text(sch)
    # C's row i needs column i of B: written by B at vj = 3 - i, all vi
    assert "vi = T.axis.spatial(6, ax0)" in text
    assert "vj = T.axis.spatial(4, 3 - i)" in text
    check_scheduled(sch)


# C reads one element more than B writes (the last one comes from the input's own value)
UNCOVERED = HEAD + '''@T.prim_func
def uncovered(A: T.Buffer((9,), "float32"), C: T.Buffer((9,), "float32")):
    for i in range(8):
        with T.block("B"):
            v = T.axis.spatial(8, i)
            T.reads()
            T.writes(A[v])
            A[v] = T.float32(1)
    for i in range(9):
        with T.block("C"):
            v = T.axis.spatial(9, i)
            T.reads(A[v])
            T.writes(C[v])
            C[v] = A[v] * T.float32(2)
'''


def test_reverse_compute_at_consumer_not_covered_is_refused():
    sch = sched(UNCOVERED)
    # under B's loop, C's instance v = 8 would never run
    with refused("reverse_compute_at/not-covered", "C"):
        sch.reverse_compute_at(sch.get_block("C"), loops_of(sch, "B")[0])


# B reads T before "bump" overwrites it; C reads B
PASSING = HEAD + '''@T.prim_func
def passing(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32"),
            D: T.Buffer((8,), "float32")):
    T_ = T.alloc_buffer((8,), "float32")
    B = T.alloc_buffer((8,), "float32")
    for i in range(8):
        with T.block("load"):
            v = T.axis.spatial(8, i)
            T.reads(A[v])
            T.writes(T_[v])
            T_[v] = A[v]
    for i in range(8):
        with T.block("B"):
            v = T.axis.spatial(8, i)
            T.reads(T_[v])
            T.writes(B[v])
            B[v] = T_[v] * T.float32(2)
    for i in range(8):
        with T.block("bump"):
            v = T.axis.spatial(8, i)
            T.reads(A[v])
            T.writes(T_[v])
            T_[v] = A[v] + T.float32(100)
    for i in range(8):
        with T.block("C"):
            v = T.axis.spatial(8, i)
            T.reads(B[v], T_[v])
            T.writes(C[v])
            C[v] = B[v] + T_[v]
'''


def test_compute_at_past_a_writer_of_its_input_is_refused():
    sch = sched(PASSING)
    with refused("compute_at/dependency-order", "bump"):
        sch.compute_at(sch.get_block("B"), loops_of(sch, "C")[0])


# C reads B through a flattening it cannot be solved for, but needs all of B
RELAYOUT = HEAD + '''@T.prim_func
def relayout(A: T.Buffer((1, 2, 8), "float32"), C: T.Buffer((1, 4, 4), "float32")):
    B = T.alloc_buffer((1, 2, 8), "float32")
    for i0, i1, i2 in T.grid(1, 2, 8):
        with T.block("B"):
            v0, v1, v2 = T.axis.remap("SSS", [i0, i1, i2])
            T.reads(A[v0, v1, v2])
            T.writes(B[v0, v1, v2])
            B[v0, v1, v2] = A[v0, v1, v2] - T.float32(1)
    for i0, i1, i2 in T.grid(1, 4, 4):
        with T.block("C"):
            v0, v1, v2 = T.axis.remap("SSS", [i0, i1, i2])
            T.reads(B[v0, (v1 * 4 + v2) // 8, (v1 * 4 + v2) % 8])
            T.writes(C[v0, v1, v2])
            C[v0, v1, v2] = B[v0, (v1 * 4 + v2) // 8, (v1 * 4 + v2) % 8] * T.float32(4)
'''


def test_reverse_compute_at_whole_dimensions_need_no_solving():
    sch = sched(RELAYOUT)
    sch.reverse_compute_at(sch.get_block("C"), loops_of(sch, "B")[0])
    text = body_text(sch)
    assert "for ax0, ax1 in T.grid(4, 4):" in text
    # the unit loop i0 is its value, 0
    assert "v0 = T.axis.spatial(1, 0)" in text
    assert 'v1, v2 = T.axis.remap("SS", [ax0, ax1])' in text
    check_scheduled(sch)


# one bias per group of 16 channels; the consumer's channel loop is split in two halves
GROUPED = HEAD + '''@T.prim_func
def grouped(X: T.Buffer((80,), "float32"), Y: T.Buffer((80,), "float32")):
    B = T.alloc_buffer((5,), "float32")
    for i in range(5):
        with T.block("bias"):
            v = T.axis.spatial(5, i)
            T.reads()
            T.writes(B[v])
            B[v] = T.Cast("float32", v) + T.float32(0.5)
    for c_o, c_i in T.grid(2, 40):
        with T.block("Y"):
            c = T.axis.spatial(80, c_o * 40 + c_i)
            T.reads(X[c], B[c // 16])
            T.writes(Y[c])
            Y[c] = X[c] + B[c // 16]
'''


def test_compute_at_group_index_takes_whole_multiples_out():
    sch = sched(GROUPED)
    sch.compute_at(sch.get_block("bias"), loops_of(sch, "Y")[0])
    text = body_text(sch)
    # (c_o * 40 + c_i) // 16 over c_i in [0, 40): from c_o * 2 + (c_o * 8) // 16 = c_o * 2
    # to c_o * 2 + 2; three groups, inside the domain for c_o in [0, 2)
    assert "for ax0 in range(3):" in text
    assert "v = T.axis.spatial(5, c_o * 2 + ax0)" in text
    assert "T.where" not in text
    check_scheduled(sch)
