from kernels import HEAD, MATMUL, MATMUL_RELU, ROWSUM, elementwise_pair
from sched_util import (body_text, check_result, check_same_results_rewritten, check_scheduled,
                        refused, sched)


def test_cache_read_input():
    sch = sched(MATMUL)
    c = sch.get_block("C")
    a = sch.cache_read(c, 0, "shared")
    assert a.name == "A_shared"
    text = body_text(sch)
    assert 'A_shared = T.alloc_buffer((16, 16), "float32", scope="shared")' in text
    assert text.index('T.block("A_shared")') < text.index('T.block("C")')
    assert "A_shared[v0, v1] = A[v0, v1]" in text
    assert "T.reads(A_shared[vi, vk], B[vk, vj])" in text
    check_scheduled(sch)


def test_cache_read_of_intermediate_goes_after_producer():
    sch = sched(MATMUL_RELU)
    sch.cache_read(sch.get_block("relu"), 0, "local")
    text = body_text(sch)
    assert text.index('T.block("C")') < text.index('T.block("C_local")') < \
        text.index('T.block("relu")')
    check_scheduled(sch)


def test_cache_write_then_compute_at():
    sch = sched(MATMUL)
    c = sch.get_block("C")
    cl = sch.cache_write(c, 0, "local")
    text = body_text(sch)
    assert "C_local[vi, vj] = C_local[vi, vj] + A[vi, vk] * B[vk, vj]" in text
    assert "C[v0, v1] = C_local[v0, v1]" in text
    sch.reverse_compute_at(cl, sch.get_loops(c)[0])     # write back each row after it
    text = body_text(sch)
    assert "v0, v1 = T.axis.remap(\"SS\", [i, ax0])" in text
    assert text.index('with T.block("C_local")') > text.index('with T.block("C")')
    check_scheduled(sch)


def test_cache_read_on_inferred_regions():
    sch = sched(ROWSUM)
    # inferred reads of a reduction leave out the accumulator, as TVM infers them
    sch.cache_read(sch.get_block("B"), 0, "shared")
    assert "B[vi] = B[vi] + A_shared[vi, vk]" in body_text(sch)
    check_scheduled(sch)


def test_cache_read_bad_index():
    sch = sched(MATMUL)
    with refused("cache_read/bad-index", "C"):
        sch.cache_read(sch.get_block("C"), 5, "shared")


def test_cache_write_bad_scope():
    sch = sched(MATMUL)
    with refused("cache_write/bad-scope", "C"):
        sch.cache_write(sch.get_block("C"), 0, "registers")


def test_set_scope():
    sch = sched(MATMUL_RELU)
    sch.set_scope(sch.get_block("C"), 0, "shared")
    assert 'C = T.alloc_buffer((16, 16), "float32", scope="shared")' in body_text(sch)
    check_scheduled(sch)


def test_set_scope_of_parameter():
    sch = sched(MATMUL_RELU)
    with refused("set_scope/parameter", "relu"):
        sch.set_scope(sch.get_block("relu"), 0, "shared")


SCOPED = HEAD + '''@T.prim_func
def scoped(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
    for i0, j0 in T.grid(4, 4):
        with T.block("scope"):
            i, j = T.axis.remap("SS", [i0, j0])
            T.reads(A[i * 16:i * 16 + 16, j * 16:j * 16 + 16])
            T.writes(B[i * 16:i * 16 + 16, j * 16:j * 16 + 16])
            for x, y in T.grid(16, 16):
                with T.block("B"):
                    vi = T.axis.spatial(64, i * 16 + x)
                    vj = T.axis.spatial(64, j * 16 + y)
                    T.reads(A[vi, vj])
                    T.writes(B[vi, vj])
                    B[vi, vj] = A[vi, vj] + T.float32(1)
'''


def test_cache_read_in_an_inner_scope_is_compacted():
    sch = sched(SCOPED)
    sch.cache_read(sch.get_block("B"), 0, "shared")
    text = body_text(sch)
    assert 'A_shared = T.alloc_buffer((16, 16), "float32", scope="shared")' in text
    assert "A_shared[v0, v1] = A[i * 16 + v0, j * 16 + v1]" in text
    assert "B[vi, vj] = A_shared[vi - i * 16, vj - j * 16] + T.float32(1)" in text
    check_scheduled(sch)


SPLIT_READERS = HEAD + '''@T.prim_func
def split_readers(A: T.Buffer((64,), "float32"), C: T.Buffer((32,), "float32"),
                  D: T.Buffer((32,), "float32")):
    B = T.alloc_buffer((64,), "float32")
    for i in range(64):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi] * 3.0
    for i in range(32):
        with T.block("C"):
            vi = T.axis.remap("S", [i])
            C[vi] = B[vi] + 1.0
    for i in range(32):
        with T.block("D"):
            vi = T.axis.remap("S", [i])
            D[vi] = B[vi + 32] - 2.0
'''


def test_cache_read_copies_what_the_writer_writes():
    # both readers read the copy, so it must hold all 64 elements, not only C's half
    sch = sched(SPLIT_READERS)
    sch.cache_read(sch.get_block("C"), 0, "shared")
    text = body_text(sch)
    assert "for ax0 in range(64):" in text
    assert "D[vi] = B_shared[vi + 32] - T.float32(2)" in text
    check_scheduled(sch)


SHIFTED_INPUT = HEAD + '''@T.prim_func
def shifted(A: T.Buffer((40,), "float32"), B: T.Buffer((39,), "float32")):
    for i in range(39):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi + 1] * 2.0
'''


def test_cache_read_of_function_input_copies_the_whole_buffer():
    sch = sched(SHIFTED_INPUT)
    sch.cache_read(sch.get_block("B"), 0, "shared")
    text = body_text(sch)
    assert "for ax0 in range(40):" in text
    assert "A_shared[v0] = A[v0]" in text
    check_scheduled(sch)


GUARDED = elementwise_pair("guarded", (16, 8), producer="* 2.0", consumer="+ 1.0",
                           where="B[i, j] < 0.5")


def test_cache_read_rewrites_the_consumer_predicate():
    sch = sched(GUARDED)
    sch.cache_read(sch.get_block("C"), 0, "local")
    text = body_text(sch)
    assert "T.where(B_local[i, j] < T.float32(0.5))" in text
    assert "C[vi, vj] = B_local[vi, vj] + T.float32(1)" in text
    check_result(sch)


PER_THREAD = HEAD + '''@T.prim_func
def per_thread(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,), "float32", scope="local")
    for t in T.thread_binding(4, thread="threadIdx.x"):
        for i in range(4):
            with T.block("B"):
                vi = T.axis.spatial(16, t * 4 + i)
                B[vi] = A[vi] * 2.0
        for i in range(4):
            with T.block("C"):
                vi = T.axis.spatial(16, t * 4 + i)
                C[vi] = B[vi] + 1.0
'''


def test_cache_read_of_a_local_result_is_copied_by_its_own_thread():
    # B is per-thread storage: the copy under threadIdx.x holds this thread's 4 elements
    sch = sched(PER_THREAD)
    sch.cache_read(sch.get_block("C"), 0, "shared")
    text = body_text(sch)
    assert "for ax0 in range(4):" in text
    assert "v0 = T.axis.spatial(16, t * 4 + ax0)" in text
    check_result(sch)


# ---- symbolic shapes: the cache is shaped (and copied) by the symbolic extents ----

SYMBOLIC = elementwise_pair("symbolic", ("n", 8), producer="* 2.0", consumer="+ 1.0")


def test_cache_read_of_a_symbolic_buffer():
    sch = sched(SYMBOLIC)
    sch.cache_read(sch.get_block("C"), 0, "shared")
    text = body_text(sch)
    assert 'B_shared = T.alloc_buffer((n, 8), "float32", scope="shared")' in text
    assert "for ax0, ax1 in T.grid(n, 8):" in text
    assert "C[vi, vj] = B_shared[vi, vj] + T.float32(1)" in text
    assert text.index('T.block("B")') < text.index('T.block("B_shared")') < \
        text.index('T.block("C")')
    check_scheduled(sch, shapes=[(5, 8), (5, 8)], seed=3)


def test_cache_write_of_a_symbolic_buffer():
    sch = sched(SYMBOLIC)
    sch.cache_write(sch.get_block("C"), 0, "local")
    text = body_text(sch)
    assert 'C_local = T.alloc_buffer((n, 8), "float32", scope="local")' in text
    assert "C_local[vi, vj] = B[vi, vj] + T.float32(1)" in text
    assert "C[v0, v1] = C_local[v0, v1]" in text
    check_scheduled(sch, shapes=[(7, 8), (7, 8)], seed=3)


GUARDED_SPLIT = HEAD + '''@T.prim_func
def guarded_split(a: T.handle, b: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    for i0, i1 in T.grid((n + 3) // 4, 4):
        with T.block("B"):
            vi = T.axis.spatial(n, i0 * 4 + i1)
            T.where(i0 * 4 + i1 < n)
            B[vi] = A[vi] * 3.0
'''


def test_cache_write_region_ends_where_the_predicate_does():
    # the loops run to (n + 3) // 4 * 4; the predicate stops the writes at n, so does the copy
    sch = sched(GUARDED_SPLIT)
    sch.cache_write(sch.get_block("B"), 0, "local")
    text = body_text(sch)
    assert "for ax0 in range(n):" in text
    check_scheduled(sch, shapes=[(10,), (10,)], seed=3)


SYMBOLIC_INNER = HEAD + '''@T.prim_func
def symbolic_inner(a: T.handle, c: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (4, n), "float32")
    C = T.match_buffer(c, (4, n), "float32")
    B = T.alloc_buffer((4, n), "float32")
    for i in range(4):
        for j in range(n):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * 2.0
        for j in range(n):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] + 1.0
'''


def test_cache_read_relaxes_a_symbolic_inner_loop():
    # the copy sits under loop i and must hold the whole row B[i, 0:n], not one element
    sch = sched(SYMBOLIC_INNER)
    sch.cache_read(sch.get_block("C"), 0, "shared")
    text = body_text(sch)
    assert "for ax0, ax1 in T.grid(1, n):" in text
    assert "v0 = T.axis.spatial(4, i + ax0)" in text
    check_scheduled(sch, shapes=[(4, 6), (4, 6)], seed=3)


# ---- a copy at the scope's top level holds only its region (compacted, indices shifted) ----

SHIFTED_WRITER = HEAD + '''@T.prim_func
def shifted_writer(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((16,), "float32")
    for i in range(8):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi + 1] = A[vi] * 2.0
    for i in range(8):
        with T.block("C"):
            vi = T.axis.remap("S", [i])
            C[vi] = B[vi + 1] + 1.0
'''


def test_cache_read_at_the_root_is_sized_to_the_copied_region():
    sch = sched(SHIFTED_WRITER)
    sch.cache_read(sch.get_block("C"), 0, "shared")
    text = body_text(sch)
    assert 'B_shared = T.alloc_buffer((8,), "float32", scope="shared")' in text
    assert "B_shared[v0] = B[1 + v0]" in text
    assert "C[vi] = B_shared[vi] + T.float32(1)" in text
    check_scheduled(sch)


def test_cache_write_at_the_root_is_sized_to_the_copied_region():
    sch = sched(SHIFTED_WRITER)
    sch.cache_write(sch.get_block("B"), 0, "local")
    text = body_text(sch)
    assert 'B_local = T.alloc_buffer((8,), "float32", scope="local")' in text
    assert "B_local[vi] = A[vi] * T.float32(2)" in text
    assert "B[1 + v0] = B_local[v0]" in text
    check_scheduled(sch)


TRIANGLE = HEAD + '''@T.prim_func
def triangle(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    B = T.alloc_buffer((8, 8), "float32")
    for i in range(8):
        for j in range(i):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * 2.0
    for i in range(8):
        for j in range(i):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] + 1.0
'''


def test_cache_read_relaxes_a_loop_bounded_by_another_loop():
    # j < i < 8: B is written in columns 0..6, so the copy is 8 x 7 (not one column by i)
    sch = sched(TRIANGLE)
    sch.cache_read(sch.get_block("C"), 0, "shared")
    text = body_text(sch)
    assert 'B_shared = T.alloc_buffer((8, 7), "float32", scope="shared")' in text
    assert "for ax0, ax1 in T.grid(8, 7):" in text
    assert "C[vi, vj] = B_shared[vi, vj] + T.float32(1)" in text
    check_scheduled(sch)


def _same_results_threads_serial(sch):
    """check_same_results with every thread loop run as a serial loop (the interpreter runs
    CPU kernels): one thread after another must give the original's results too."""
    import dataclasses

    from tirkit.ir import stmt as S

    def serial(y, x):
        if isinstance(y, S.For) and y.kind == "thread_binding":
            return dataclasses.replace(y, kind="serial", thread_tag=None)
        return None
    check_same_results_rewritten(sch, serial)


def _same_results_without_pointers(sch):
    """check_same_results with the `T.evaluate(X.access_ptr(...))` statements (which compute
    nothing) left out, as the interpreter does not take pointers."""
    import dataclasses

    from tirkit.ir import expr as E
    from tirkit.ir import stmt as S

    def strip(y, x):
        if isinstance(y, S.Evaluate) and isinstance(y.value, E.Call):
            return dataclasses.replace(y, value=E.IntImm("int32", 0))
        return None
    check_same_results_rewritten(sch, strip)


VTHREADS = HEAD + '''@T.prim_func
def vthreads(A: T.Buffer((64,), "float32"), C: T.Buffer((64,), "float32")):
    B = T.alloc_buffer((64,), "float32", scope="shared")
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        for v in T.thread_binding(2, thread="vthread.x"):
            for t in T.thread_binding(4, thread="threadIdx.x"):
                for i in range(4):
                    with T.block("B"):
                        vi = T.axis.spatial(64, bx * 32 + v * 16 + t * 4 + i)
                        B[vi] = A[vi] * 2.0
                for i in range(4):
                    with T.block("C"):
                        vi = T.axis.spatial(64, bx * 32 + v * 16 + t * 4 + i)
                        C[vi] = B[vi] + 1.0
'''


def test_cache_write_of_shared_memory_spans_the_threads_of_the_block():
    # B is shared by the threads (and virtual threads) of a block: the copy back into it
    # covers the block's 32 elements, not this thread's 4 (the rank of B decides, not of
    # the local cache)
    sch = sched(VTHREADS)
    sch.cache_write(sch.get_block("B"), 0, "local")
    text = body_text(sch)
    assert "for ax0 in range(32):" in text
    assert "v0 = T.axis.spatial(64, bx * 32 + ax0)" in text
    check_result(sch)
    _same_results_threads_serial(sch)


def test_cache_read_of_shared_memory_spans_virtual_threads():
    sch = sched(VTHREADS)
    sch.cache_read(sch.get_block("C"), 0, "shared")
    text = body_text(sch)
    assert "for ax0 in range(32):" in text
    assert "B_shared[v0] = B[v0]" in text
    check_result(sch)
    _same_results_threads_serial(sch)


RING = HEAD + '''@T.prim_func
def ring(A: T.Buffer((4, 8), "int32"), C: T.Buffer((4, 8), "int32")):
    B = T.alloc_buffer((4, 6), "int32")
    for c, i0 in T.grid(4, 2):
        for i1 in range(4):
            with T.block("B"):
                vc = T.axis.spatial(4, c)
                vi = T.axis.opaque(8, i0 * 4 + i1)
                B[vc, vi % 6] = A[vc, vi] * 2
        for i1 in range(4):
            with T.block("C"):
                vc = T.axis.spatial(4, c)
                vi = T.axis.opaque(8, i0 * 4 + i1)
                C[vc, vi] = B[vc, vi % 6] + 1
'''


def test_cache_write_bounds_each_dimension_on_its_own():
    # the ring index `vi % 6` spans the whole row, but the row is still the one of `c`
    sch = sched(RING)
    sch.cache_write(sch.get_block("B"), 0, "local")
    text = body_text(sch)
    assert "for ax0, ax1 in T.grid(1, 6):" in text
    assert "v0 = T.axis.spatial(4, c + ax0)" in text
    check_scheduled(sch)


HALO = HEAD + '''@T.prim_func
def halo(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,), "float32")
    for io in range(4):
        for ii in range(6):
            with T.block("B"):
                vi = T.axis.spatial(16, io * 4 - 1 + ii)
                T.where(0 <= io * 4 - 1 + ii and io * 4 - 1 + ii < 16)
                B[vi] = A[vi] * 2.0
        for ii in range(4):
            with T.block("C"):
                vi = T.axis.spatial(16, io * 4 + ii)
                C[vi] = B[T.max(vi - 1, 0)] + B[T.min(vi + 1, 15)]
'''


def test_cache_write_window_is_cut_at_the_buffer_edges():
    # the window io * 4 - 1 .. io * 4 + 4 leaves B at both ends, where the predicate stops
    # the block: the copy starts at 0 for io = 0 and stops at 15 for io = 3 (TVM's form),
    # never touching B[-1] or B[16]
    sch = sched(HALO)
    sch.cache_write(sch.get_block("B"), 0, "local")
    text = body_text(sch)
    assert "for ax0 in range(17 - T.max(io * 4, 11) - T.max(1 - io * 4, 0)):" in text
    assert "v0 = T.axis.spatial(16, T.max(io * 4 - 1, 0) + ax0)" in text
    check_scheduled(sch)


def test_cache_read_window_is_cut_at_the_buffer_edges():
    sch = sched(HALO)
    sch.cache_read(sch.get_block("C"), 0, "shared")
    text = body_text(sch)
    assert "for ax0 in range(17 - T.max(io * 4, 11) - T.max(1 - io * 4, 0)):" in text
    check_scheduled(sch)


POINTER = HEAD + '''@T.prim_func
def pointer(A: T.Buffer((8, 4), "float32"), C: T.Buffer((8, 4), "float32")):
    B = T.alloc_buffer((8, 4), "float32")
    with T.block("B"):
        T.reads(A[0:4, 0:4])
        T.writes(B[0:4, 0:4])
        T.evaluate(B.access_ptr("w", extent=16))
        for i, j in T.grid(4, 4):
            B[i, j] = A[i, j] * 2.0
    for i, j in T.grid(4, 4):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + 1.0
'''


def test_cache_write_moves_a_pointer_when_the_cache_keeps_the_layout():
    # rows 0..3 of an 8 x 4 buffer: the 4 x 4 cache has every element at the same offset
    sch = sched(POINTER)
    sch.cache_write(sch.get_block("B"), 0, "local")
    text = body_text(sch)
    assert 'B_local = T.alloc_buffer((4, 4), "float32", scope="local")' in text
    assert 'B_local.access_ptr("w", extent=16)' in text
    assert "B_local[i, j] = A[i, j] * T.float32(2)" in text
    check_result(sch)
    _same_results_without_pointers(sch)


def test_cache_write_refuses_a_pointer_when_the_cache_changes_the_layout():
    # columns 0..1 of each row: the cache's offsets differ from the buffer's
    sch = sched(POINTER.replace("T.writes(B[0:4, 0:4])", "T.writes(B[0:4, 0:2])")
                .replace("T.grid(4, 4):\\n            B[i, j]",
                         "T.grid(4, 2):\\n            B[i, j]"))
    with refused("cache_write/opaque-access", "B"):
        sch.cache_write(sch.get_block("B"), 0, "local")


def test_cache_read_moves_a_pointer_when_the_cache_keeps_the_layout():
    sch = sched(POINTER.replace('B.access_ptr("w", extent=16)', 'A.access_ptr("r", extent=16)'))
    sch.cache_read(sch.get_block("B"), 0, "shared")
    text = body_text(sch)
    assert 'A_shared = T.alloc_buffer((8, 4), "float32", scope="shared")' in text
    assert 'A_shared.access_ptr("r", extent=16)' in text
    check_result(sch)
    _same_results_without_pointers(sch)


SUMMATION = HEAD + '''@T.prim_func
def summation(A: T.Buffer((8, 4), "float32"), B: T.Buffer((1,), "float32")):
    B[0] = T.float32(0)
    for i, j in T.grid(8, 4):
        with T.block("sum"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[0] = B[0] + A[vi, vj]
'''


def test_cache_write_moves_an_initial_store_outside_the_blocks():
    # `B[0] = 0` sets up what the block accumulates: it must go to the cache too, or the
    # cache would start from garbage
    sch = sched(SUMMATION)
    sch.cache_write(sch.get_block("sum"), 0, "local")
    text = body_text(sch)
    assert "B_local[0] = T.float32(0)" in text
    assert "B_local[0] = B_local[0] + A[vi, vj]" in text
    assert "B[v0] = B_local[v0]" in text
    check_scheduled(sch)


def test_cache_write_refuses_a_read_outside_the_blocks():
    sch = sched(SUMMATION.replace("B[0] = T.float32(0)", "B[0] = B[0] * T.float32(0.5)"))
    with refused("cache_write/loose-access", "sum"):
        sch.cache_write(sch.get_block("sum"), 0, "local")


def test_cache_read_refuses_a_store_outside_the_blocks_after_the_copy():
    # the copy of the input A goes first; the later store to A would make it stale
    sch = sched(SUMMATION.replace("    B[0] = T.float32(0)\n", "").replace(
        'B[0] = B[0] + A[vi, vj]\n', 'B[0] = B[0] + A[vi, vj]\n    A[0, 0] = T.float32(1)\n'))
    with refused("cache_read/loose-access", "sum"):
        sch.cache_read(sch.get_block("sum"), 1, "shared")


SUBREGION = HEAD + '''@T.prim_func
def subregion(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    B = T.alloc_buffer((8, 8), "float32")
    for i, j in T.grid(8, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B_sub0 = T.match_buffer(B[vi, vj], (), offset_factor=1)
            B_sub0[()] = A[vi, vj] * 2.0
    for i, j in T.grid(8, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            B_sub1 = T.match_buffer(B[vi, vj], (), offset_factor=1)
            C[vi, vj] = B_sub1[()] + 1.0
'''


def test_cache_write_refuses_a_view_the_block_declares():
    # B_sub0 exists only inside block B: no copy outside it can name it
    sch = sched(SUBREGION)
    with refused("cache_write/match-buffer", "B"):
        sch.cache_write(sch.get_block("B"), 0, "local")


def test_cache_read_refuses_a_buffer_viewed_through_a_match_buffer():
    # B and C use B through views: their accesses would escape the cache
    text = SUBREGION.replace("C: T.Buffer((8, 8), \"float32\")",
                             "C: T.Buffer((8, 8), \"float32\"), D: T.Buffer((8, 8), \"float32\")")
    text += '''    for i, j in T.grid(8, 8):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = B[vi, vj] * 3.0
'''
    sch = sched(text)
    with refused("cache_read/match-buffer", "B"):
        sch.cache_read(sch.get_block("D"), 0, "shared")
    with refused("cache_read/match-buffer", "C"):
        sch.cache_read(sch.get_block("C"), 0, "shared")


def test_cache_write_window_without_a_predicate_is_not_cut():
    # every index is in bounds: the loops alone bound the window
    where = "                T.where(0 <= io * 4 - 1 + ii and io * 4 - 1 + ii < 16)\n"
    sch = sched(HALO.replace(where, "")
                .replace("for ii in range(6):", "for ii in range(4):")
                .replace("io * 4 - 1 + ii", "io * 4 + ii")
                .replace("B[T.max(vi - 1, 0)] + B[T.min(vi + 1, 15)]", "B[vi] + 1.0"))
    sch.cache_write(sch.get_block("B"), 0, "local")
    text = body_text(sch)
    assert "for ax0 in range(4):" in text
    assert "v0 = T.axis.spatial(16, io * 4 + ax0)" in text
    check_scheduled(sch)


STRIDED = elementwise_pair("strided", (4, 8), producer="* 2.0", consumer="+ 1.0",
                           alloc=", strides=(8, 1)")


def test_cache_keeps_the_buffers_strides():
    # the cache is the buffer's declaration in another scope: its strides come along
    sch = sched(STRIDED)
    sch.cache_write(sch.get_block("B"), 0, "local")
    sch.cache_read(sch.get_block("C"), 0, "shared")
    text = body_text(sch)
    assert 'B_local = T.alloc_buffer((4, 8), "float32", strides=(8, 1), scope="local")' in text
    assert 'B_shared = T.alloc_buffer((4, 8), "float32", strides=(8, 1), scope="shared")' in text
    check_scheduled(sch)


GUARDED_ROWS = HEAD + '''@T.prim_func
def guarded_rows(A: T.Buffer((8, 4), "float32"), B: T.Buffer((8, 4), "float32")):
    for i in range(8):
        with T.block("row"):
            vi = T.axis.spatial(8, i)
            T.reads(A[0:8, 0:4])
            T.writes(B[0:8, 0:4])
            B[vi, 0] = A[vi, 0]
            if A[vi, 0] > T.float32(0):
                for j in range(4):
                    with T.block("pos"):
                        vj = T.axis.spatial(4, j)
                        B[vi, vj] = A[vi, vj] * 3.0
'''


def test_cache_read_of_an_input_serves_the_loads_outside_the_blocks():
    # in the scope of block `row`, A is an input: the copy goes first, and the row's own
    # loads (outside any block) read the copy like block `pos` does
    sch = sched(GUARDED_ROWS)
    sch.cache_read(sch.get_block("pos"), 0, "shared")
    text = body_text(sch)
    assert "B[vi, 0] = A_shared[vi, 0]" in text
    assert "if A_shared[vi, 0] > T.float32(0):" in text
    assert "B[vi, vj] = A_shared[vi, vj] * T.float32(3)" in text
    check_scheduled(sch)
