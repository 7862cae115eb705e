from kernels import CHAIN, HEAD, MATMUL_RELU, elementwise_pair
from sched_util import body_text, check_result, check_scheduled, refused, sched

OPAQUE = HEAD + '''@T.prim_func
def opaque(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,), "float32")
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            T.reads(A[vi])
            T.writes(B[vi])
            B[vi] = A[vi] + T.float32(1)
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            T.reads(B[vi])
            T.writes(C[vi])
            T.evaluate(T.call_extern("float32", "consume", T.address_of(B[vi])))
'''


def test_compute_inline_before_after():
    sch = sched(CHAIN)
    sch.compute_inline(sch.get_block("B"))
    text = body_text(sch)
    assert 'with T.block("B")' not in text
    assert "B = T.alloc_buffer" not in text
    assert "T.reads(A[vj, vi])" in text
    assert "C[vi, vj] = A[vj, vi] * T.float32(2) + T.float32(1)" in text
    check_scheduled(sch)


def test_compute_inline_twice():
    sch = sched(CHAIN)
    sch.compute_inline(sch.get_block("B"))
    sch.compute_inline(sch.get_block("C"))
    text = body_text(sch)
    assert "D[vi, vj] = (A[vj, vi] * T.float32(2) + T.float32(1)) * (A[vj, vi] * " \
        "T.float32(2) + T.float32(1))" in text
    check_scheduled(sch)


def test_compute_inline_output_block():
    sch = sched(CHAIN)
    with refused("compute_inline/writes-output", "D") as e:
        sch.compute_inline(sch.get_block("D"))
    assert e.value.span.line == 21


def test_compute_inline_block_with_init():
    sch = sched(MATMUL_RELU)
    with refused("compute_inline/has-init", "C"):
        sch.compute_inline(sch.get_block("C"))


def test_compute_inline_opaque_reader():
    sch = sched(OPAQUE)
    with refused("compute_inline/opaque-access", "C") as e:
        sch.compute_inline(sch.get_block("B"))
    assert e.value.related[0][0].line == 8        # the inlined block


def test_reverse_compute_inline_before_after():
    sch = sched(CHAIN)
    sch.reverse_compute_inline(sch.get_block("D"))
    text = body_text(sch)
    assert 'with T.block("D")' not in text
    assert "C = T.alloc_buffer" not in text
    assert "D[vi, vj] = (B[vj, vi] + T.float32(1)) * (B[vj, vi] + T.float32(1))" in text
    check_scheduled(sch)


def test_reverse_compute_inline_transposed():
    sch = sched(CHAIN)
    sch.reverse_compute_inline(sch.get_block("C"))
    text = body_text(sch)
    assert "T.writes(C[vj, vi])" in text
    assert "C[vj, vi] = A[vi, vj] * T.float32(2) + T.float32(1)" in text
    check_scheduled(sch)


def test_reverse_compute_inline_into_reduction_is_refused():
    sch = sched(MATMUL_RELU)
    with refused("reverse_compute_inline/producer-not-single-store", "C"):
        sch.reverse_compute_inline(sch.get_block("relu"))


def test_reverse_compute_inline_consumer_with_init():
    sch = sched(MATMUL_RELU)
    with refused("reverse_compute_inline/has-init", "C"):
        sch.reverse_compute_inline(sch.get_block("C"))


SLICE = HEAD + '''@T.prim_func
def slice_(A: T.Buffer((16,), "float32"), C: T.Buffer((10,), "float32")):
    B = T.alloc_buffer((16,), "float32")
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            T.reads(A[vi])
            T.writes(B[vi])
            B[vi] = A[vi] + T.float32(1)
    for i in range(10):
        with T.block("C"):
            vi = T.axis.spatial(10, i)
            T.reads(B[vi])
            T.writes(C[vi])
            C[vi] = B[vi] * T.float32(3)
'''


def test_reverse_compute_inline_of_a_smaller_consumer_adds_a_predicate():
    sch = sched(SLICE)
    sch.reverse_compute_inline(sch.get_block("C"))
    text = body_text(sch)
    assert "T.where(i < 10)" in text
    assert "C[vi] = (A[vi] + T.float32(1)) * T.float32(3)" in text
    check_scheduled(sch)


FLAT = HEAD + '''@T.prim_func
def flat(A: T.Buffer((8, 2), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,), "float32")
    for i, j in T.grid(8, 2):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi, vj])
            T.writes(B[vi * 2 + vj])
            B[vi * 2 + vj] = A[vi, vj] + T.float32(1)
    for i in range(16):
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            T.reads(B[vi])
            T.writes(C[vi])
            C[vi] = B[vi] * T.float32(3)
'''


def test_reverse_compute_inline_into_an_expression_indexed_producer():
    sch = sched(FLAT)
    sch.reverse_compute_inline(sch.get_block("C"))
    assert "C[vi * 2 + vj] = (A[vi, vj] + T.float32(1)) * T.float32(3)" in body_text(sch)
    check_scheduled(sch)


CONST_INDEX = HEAD + '''@T.prim_func
def const_index(A: T.Buffer((1, 12, 8), "float32"), C: T.Buffer((1, 12, 8), "float32")):
    B = T.alloc_buffer((1, 12, 8), "float32")
    for i_0, i_1, j in T.grid(3, 4, 8):
        with T.block("B"):
            vi = T.axis.spatial(12, i_0 * 4 + i_1)
            vj = T.axis.spatial(8, j)
            B[0, vi, vj] = A[0, vi, vj] * T.float32(3)
    for i, j in T.grid(12, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[0, vi, vj] = B[0, vi, vj] - T.float32(1)
'''


def test_compute_inline_store_at_a_constant_index():
    sch = sched(CONST_INDEX)
    sch.compute_inline(sch.get_block("B"))
    text = body_text(sch)
    assert 'with T.block("B")' not in text
    assert "C[0, vi, vj] = A[0, vi, vj] * T.float32(3) - T.float32(1)" in text
    check_scheduled(sch)


POINTER_READ = HEAD + '''@T.prim_func
def pointer_read(T_: T.Buffer((64,), "int8"), X: T.Buffer((8,), "float32"),
                 Y: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,), "float32")
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            T.reads(X[vi])
            T.writes(B[vi])
            B[vi] = X[vi] * T.float32(2)
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            T.reads(T_[0:64], B[vi])
            T.writes(Y[vi])
            T.evaluate(T_.access_ptr("r"))
            Y[vi] = B[vi] + T.float32(1)
'''


def test_compute_inline_keeps_a_read_made_through_a_pointer():
    sch = sched(POINTER_READ)
    sch.compute_inline(sch.get_block("B"))
    text = body_text(sch)
    assert "T.reads(T_[0:64], X[vi])" in text
    assert "Y[vi] = X[vi] * T.float32(2) + T.float32(1)" in text


NESTED_CONSUMER = HEAD + '''@T.prim_func
def nested_consumer(A: T.Buffer((8, 4), "float32"), C: T.Buffer((8, 4), "float32")):
    B = T.alloc_buffer((8, 4), "float32")
    for i, j in T.grid(8, 4):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + T.float32(5)
    for i in range(8):
        with T.block("C_o"):
            vi = T.axis.spatial(8, i)
            T.reads(B[vi, 0:4])
            T.writes(C[vi, 0:4])
            for j in range(4):
                with T.block("C"):
                    vj = T.axis.spatial(4, j)
                    T.reads(B[vi, vj])
                    T.writes(C[vi, vj])
                    C[vi, vj] = B[vi, vj] * T.float32(2)
'''


def test_compute_inline_into_a_nested_block_updates_both_regions():
    sch = sched(NESTED_CONSUMER)
    sch.compute_inline(sch.get_block("B"))
    text = body_text(sch)
    assert "B[" not in text
    assert "T.reads(A[vi, 0:4])" in text and "T.reads(A[vi, vj])" in text
    check_scheduled(sch)


# --- reverse_compute_inline through an inverted iterator map -------------------------------

FLATTEN = HEAD + '''@T.prim_func
def flatten(A: T.Buffer((2, 16), "float32"), C: T.Buffer((4, 8), "float32")):
    B = T.alloc_buffer((2, 16), "float32")
    for i, j in T.grid(2, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(4, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[(vi * 8 + vj) // 16, (vi * 8 + vj) % 16] + T.float32(1)
'''


def test_reverse_compute_inline_inverts_a_fused_then_split_read():
    sch = sched(FLATTEN)
    before = body_text(sch)
    assert "C[vi, vj] = B[(vi * 8 + vj) // 16, (vi * 8 + vj) % 16] + T.float32(1)" in before
    sch.reverse_compute_inline(sch.get_block("C"))
    text = body_text(sch)
    assert 'with T.block("C")' not in text and "B = T.alloc_buffer" not in text
    # each consumer iterator recovered from the producer's store indices
    assert "C[(vj + vi * 16) // 8, (vj + vi * 16) % 8] = A[vi, vj] * T.float32(2) + " \
        "T.float32(1)" in text
    assert "T.where" not in text
    check_scheduled(sch)


TILED = HEAD + '''@T.prim_func
def tiled(A: T.Buffer((8, 8), "float32"), C: T.Buffer((7, 7), "float32")):
    B = T.alloc_buffer((2, 2, 4, 4), "float32")
    for i0, j0, i1, j1 in T.grid(2, 2, 4, 4):
        with T.block("B"):
            vi, vj, vm, vn = T.axis.remap("SSSS", [i0, j0, i1, j1])
            B[vi, vj, vm, vn] = A[vi * 4 + vm, vj * 4 + vn] - T.float32(3)
    for i, j in T.grid(7, 7):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi // 4, vj // 4, vi % 4, vj % 4] * T.float32(5)
'''


def test_reverse_compute_inline_of_a_tiled_read_predicates_the_overcomputed_tail():
    sch = sched(TILED)
    sch.reverse_compute_inline(sch.get_block("C"))
    text = body_text(sch)
    assert "T.where(i0 * 4 + i1 < 7 and j0 * 4 + j1 < 7)" in text
    assert "C[vm + vi * 4, vn + vj * 4] = (A[vi * 4 + vm, vj * 4 + vn] - T.float32(3)) * " \
        "T.float32(5)" in text
    check_scheduled(sch)


UNIT = HEAD + '''@T.prim_func
def unit(A: T.Buffer((4, 4), "float32"), D: T.Buffer((1, 2, 1), "float32")):
    B = T.alloc_buffer((4, 4), "float32")
    for i, j in T.grid(4, 4):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + T.float32(7)
    for a, b, c in T.grid(1, 2, 1):
        with T.block("D"):
            v0, v1, v2 = T.axis.remap("SSS", [a, b, c])
            D[v0, v1, v2] = B[v0, v1] * T.float32(2)
'''


def test_reverse_compute_inline_with_a_unit_iterator_that_does_not_index():
    sch = sched(UNIT)
    sch.reverse_compute_inline(sch.get_block("D"))
    text = body_text(sch)
    assert "T.where(i < 1 and j < 2)" in text
    assert "D[vi, vj, 0] = (A[vi, vj] + T.float32(7)) * T.float32(2)" in text
    check_scheduled(sch)


BLOCKED = HEAD + '''@T.prim_func
def blocked(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16), "float32")
    for i, j in T.grid(4, 4):
        with T.block("B_o"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi * 4:vi * 4 + 4, vj * 4:vj * 4 + 4])
            T.writes(B[vi * 4:vi * 4 + 4, vj * 4:vj * 4 + 4])
            for ii, jj in T.grid(4, 4):
                with T.block("B"):
                    vii, vjj = T.axis.remap("SS", [ii, jj])
                    T.reads(A[vi * 4 + vii, vj * 4 + vjj])
                    T.writes(B[vi * 4 + vii, vj * 4 + vjj])
                    B[vi * 4 + vii, vj * 4 + vjj] = A[vi * 4 + vii, vj * 4 + vjj] * T.float32(3)
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(B[vi, vj])
            T.writes(C[vi, vj])
            C[vi, vj] = B[vi, vj] + T.float32(2)
'''


def test_reverse_compute_inline_into_a_nested_producer_updates_the_outer_regions():
    sch = sched(BLOCKED)
    sch.reverse_compute_inline(sch.get_block("C"))
    text = body_text(sch)
    assert "T.writes(C[vi * 4:vi * 4 + 4, vj * 4:vj * 4 + 4])" in text
    assert "T.where(0 <= vi * 4 + ii and vi < 4 and 0 <= vj * 4 + jj and vj < 4)" in text
    assert "C[vi * 4 + vii, vj * 4 + vjj] = A[vi * 4 + vii, vj * 4 + vjj] * T.float32(3) + " \
        "T.float32(2)" in text
    check_scheduled(sch)


UNCOVERED = BLOCKED.replace("for ii, jj in T.grid(4, 4)", "for ii, jj in T.grid(2, 2)") \
    .replace("vi * 4:vi * 4 + 4, vj * 4:vj * 4 + 4", "vi * 4:vi * 4 + 2, vj * 4:vj * 4 + 2")


def test_reverse_compute_inline_into_a_producer_that_does_not_cover_the_read_is_refused():
    sch = sched(UNCOVERED)
    with refused("reverse_compute_inline/not-covered", "B"):
        sch.reverse_compute_inline(sch.get_block("C"))


COPY_OF_INIT = HEAD + '''@T.prim_func
def copy_of_init(A: T.Buffer((4, 8), "float32"), D: T.Buffer((8, 4), "float32")):
    B = T.alloc_buffer((4, 8), "float32")
    for i, j in T.grid(4, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            with T.init():
                B[vi, vj] = T.float32(1)
            B[vi, vj] = B[vi, vj] * A[vi, vj]
    for i, j in T.grid(8, 4):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = B[vj, vi]
'''


def test_reverse_compute_inline_of_a_copy_into_a_spatial_block_with_init():
    sch = sched(COPY_OF_INIT)
    sch.reverse_compute_inline(sch.get_block("D"))
    text = body_text(sch)
    assert "D[vj, vi] = T.float32(1)" in text
    assert "D[vj, vi] = D[vj, vi] * A[vi, vj]" in text
    check_scheduled(sch)


def test_reverse_compute_inline_of_more_than_a_copy_into_a_block_with_init_is_refused():
    sch = sched(COPY_OF_INIT.replace("D[vi, vj] = B[vj, vi]", "D[vi, vj] = B[vj, vi] + "
                                     "T.float32(1)"))
    with refused("reverse_compute_inline/producer-not-single-store"):
        sch.reverse_compute_inline(sch.get_block("D"))


def test_reverse_compute_inline_copy_of_a_reduction_is_refused():
    sch = sched(MATMUL_RELU.replace("T.max(C[vi, vj], T.float32(0))", "C[vi, vj]"))
    with refused("reverse_compute_inline/not-complete", "C"):
        sch.reverse_compute_inline(sch.get_block("relu"))


PRED_PRODUCER = HEAD + '''@T.prim_func
def pred_producer(A: T.Buffer((8, 4), "float32"), C: T.Buffer((7, 4), "float32")):
    B = T.alloc_buffer((7, 4), "float32")
    for i, j in T.grid(8, 4):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.where(i < 7)
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(7, 4):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + B[vi, vj]
'''


def test_reverse_compute_inline_keeps_one_copy_of_a_predicate_it_already_has():
    sch = sched(PRED_PRODUCER)
    sch.reverse_compute_inline(sch.get_block("C"))
    text = body_text(sch)
    assert "T.where(i < 7)\n" in text
    assert "C[vi, vj] = A[vi, vj] * T.float32(2) + A[vi, vj] * T.float32(2)" in text
    check_scheduled(sch)


def _refused(text, block, kind):
    sch = sched(text)
    with refused(kind) as e:
        sch.reverse_compute_inline(sch.get_block(block))
    return e.value


def test_reverse_compute_inline_refuses_reads_that_cannot_be_inverted():
    # a diagonal: one iterator for two indices, another never used
    diag = FLATTEN.replace("B[(vi * 8 + vj) // 16, (vi * 8 + vj) % 16]", "B[vi // 2, vi]")
    assert "iterator" in _refused(diag, "C", "reverse_compute_inline/not-bijective").message
    # only the low part of an iterator: two consumer rows would share a producer position
    part = FLATTEN.replace("B[(vi * 8 + vj) // 16, (vi * 8 + vj) % 16]", "B[0, vi % 2 * 8 + vj]")
    _refused(part, "C", "reverse_compute_inline/not-bijective")
    # a strided read leaves positions between
    stride = FLATTEN.replace("B[(vi * 8 + vj) // 16, (vi * 8 + vj) % 16]", "B[vi // 2, vj * 2]")
    _refused(stride, "C", "reverse_compute_inline/not-bijective")
    # a constant index where the producer writes several positions
    const = TILED.replace("B[vi // 4, vj // 4, vi % 4, vj % 4]", "B[0, vj // 4, vi % 4, vj % 4]")
    _refused(const, "C", "reverse_compute_inline/not-bijective")


def test_reverse_compute_inline_refuses_a_buffer_with_other_readers():
    other = CHAIN.replace("D[vi, vj] = C[vi, vj] * C[vi, vj]", "D[vi, vj] = C[vi, vj] * "
                          "B[vj, vi]").replace("T.reads(C[vi, vj])", "T.reads(C[vi, vj], "
                                               "B[vj, vi])")
    err = _refused(other, "C", "reverse_compute_inline/other-readers")
    assert err.node_name == "D"


def test_reverse_compute_inline_accepts_equal_reads_written_twice():
    sch = sched(FLATTEN.replace(
        "B[(vi * 8 + vj) // 16, (vi * 8 + vj) % 16] + T.float32(1)",
        "B[(vi * 8 + vj) // 16, (vi * 8 + vj) % 16] * B[(vi * 8 + vj) // 16, (vi * 8 + vj) % 16]"))
    sch.reverse_compute_inline(sch.get_block("C"))
    assert "A[vi, vj] * T.float32(2) * (A[vi, vj] * T.float32(2))" in body_text(sch)
    check_scheduled(sch)


def test_reverse_compute_inline_refuses_reads_at_different_indices():
    text = CHAIN.replace("D[vi, vj] = C[vi, vj] * C[vi, vj]", "D[vi, vj] = C[vi, vj] * "
                         "C[7 - vi, vj]").replace("T.reads(C[vi, vj])", "T.reads(C[0:8, vj])")
    _refused(text, "D", "reverse_compute_inline/several-indices")


SYMBOLIC = elementwise_pair("symbolic", (4, "n"))


def test_reverse_compute_inline_over_a_symbolic_extent():
    sch = sched(SYMBOLIC)
    sch.reverse_compute_inline(sch.get_block("C"))
    text = body_text(sch)
    assert "T.where" not in text
    assert "C[vi, vj] = A[vi, vj] * T.float32(2) + T.float32(1)" in text
    check_result(sch)


ROW = HEAD + '''@T.prim_func
def row(A: T.Buffer((2, 8), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((2, 8), "float32")
    for i, j in T.grid(2, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] - T.float32(4)
    for j in range(8):
        with T.block("C"):
            vj = T.axis.spatial(8, j)
            C[vj] = B[0, vj] * B[0, vj]
'''


def test_reverse_compute_inline_of_one_row_predicates_the_other_rows_away():
    # the read's constant index: producer instances of row 1 must not write C
    sch = sched(ROW)
    sch.reverse_compute_inline(sch.get_block("C"))
    text = body_text(sch)
    assert "T.where(i < 1)" in text
    assert "C[vj] = (A[vi, vj] - T.float32(4)) * (A[vi, vj] - T.float32(4))" in text
    check_scheduled(sch)


GUARDED = elementwise_pair("guarded", (8, 8), where="B[i, j] < T.float32(1)")


def test_compute_inline_into_a_predicate_that_reads_the_buffer():
    # the consumer's T.where reads B too: it is computed there as well, or nothing defines B
    sch = sched(GUARDED)
    sch.compute_inline(sch.get_block("B"))
    text = body_text(sch)
    assert "B = T.alloc_buffer" not in text
    assert "T.where(A[i, j] * T.float32(2) < T.float32(1))" in text
    assert "C[vi, vj] = A[vi, vj] * T.float32(2) + T.float32(1)" in text
    check_scheduled(sch)
