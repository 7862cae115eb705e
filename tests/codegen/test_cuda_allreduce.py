"""Cross-thread reductions on the GPU path (codegen/cuda/crossthread.py, allreduce.py): a
reduction block reduced over threadIdx loops, and TVM's own `T.tvm_thread_allreduce`, run by
the thread interpreter (race detector on) against numpy on random inputs, and generated as
CUDA C; the shapes the lowering refuses get a diagnostic at the block."""
from __future__ import annotations

import numpy as np
import pytest

from tirkit.codegen.cuda import emit_cuda
from tirkit.codegen.cuda.threads import run_threads
from tirkit.diagnostics import TirkitError
from tirkit.script.parse import parse

HEAD = "from tvm.script import tir as T\n\n\n"

# 96 threads (not a power of two) and an in-thread loop with a predicate for the tail
ROW_SUM = HEAD + '''@T.prim_func
def row_sum_96(A: T.Buffer((16, 200), "float32"), S: T.Buffer((16,), "float32")):
    for i in T.thread_binding(16, thread="blockIdx.x"):
        for tx in T.thread_binding(96, thread="threadIdx.x"):
            for ko in range(3):
                with T.block("S"):
                    vi = T.axis.spatial(16, i)
                    vk = T.axis.reduce(200, ko * 96 + tx)
                    T.where(ko * 96 + tx < 200)
                    with T.init():
                        S[vi] = T.float32(0)
                    S[vi] = S[vi] + A[vi, vk]
'''

# rows on threadIdx.y, the reduction on threadIdx.x, the serial loop outside the thread loop
ROW_MAX = HEAD + '''@T.prim_func
def row_max_ty(A: T.Buffer((8, 64), "float32"), M: T.Buffer((8,), "float32")):
    for ty in T.thread_binding(8, thread="threadIdx.y"):
        for ko in range(2):
            for tx in T.thread_binding(32, thread="threadIdx.x"):
                with T.block("M"):
                    vi = T.axis.spatial(8, ty)
                    vk = T.axis.reduce(64, ko * 32 + tx)
                    with T.init():
                        M[vi] = T.min_value("float32")
                    M[vi] = T.max(M[vi], A[vi, vk])
'''

# an integer minimum over two thread dimensions at once, and an init that is not the identity
INT_MIN = HEAD + '''@T.prim_func
def min_two_dims(A: T.Buffer((2, 4, 16), "int32"), M: T.Buffer((2,), "int32")):
    for b in T.thread_binding(2, thread="blockIdx.x"):
        for ty in T.thread_binding(4, thread="threadIdx.y"):
            for tx in T.thread_binding(16, thread="threadIdx.x"):
                with T.block("M"):
                    vb, k1, k2 = T.axis.remap("SRR", [b, ty, tx])
                    with T.init():
                        M[vb] = 7
                    M[vb] = T.min(M[vb], A[vb, k1, k2])
'''

# softmax: the maximum in shared memory, the sum of exponentials in a local buffer (every
# thread keeps the result), both read by the threads of the next loop
SOFTMAX = HEAD + '''@T.prim_func
def softmax_rows(A: T.Buffer((4, 64), "float32"), Y: T.Buffer((4, 64), "float32")):
    mx = T.alloc_buffer((4,), "float32", scope="shared")
    sm = T.alloc_buffer((4,), "float32", scope="local")
    for i in T.thread_binding(4, thread="blockIdx.x"):
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            for ko in range(2):
                with T.block("mx"):
                    vi = T.axis.spatial(4, i)
                    vk = T.axis.reduce(64, ko * 32 + tx)
                    with T.init():
                        mx[vi] = T.min_value("float32")
                    mx[vi] = T.max(mx[vi], A[vi, vk])
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            for ko in range(2):
                with T.block("sm"):
                    vi = T.axis.spatial(4, i)
                    vk = T.axis.reduce(64, ko * 32 + tx)
                    with T.init():
                        sm[vi] = T.float32(0)
                    sm[vi] = sm[vi] + T.exp(A[vi, vk] - mx[vi])
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            for jo in range(2):
                with T.block("Y"):
                    vi = T.axis.spatial(4, i)
                    vj = T.axis.spatial(64, jo * 32 + tx)
                    Y[vi, vj] = T.exp(A[vi, vj] - mx[vi]) / sm[vi]
'''

# TVM's lowered form: an argmax as a reducer of two values
ALLREDUCE_ARGMAX = HEAD + '''@T.prim_func
def allreduce_argmax(A: T.Buffer((8, 48), "float32"), Idx: T.Buffer((8,), "int32"),
                     Val: T.Buffer((8,), "float32")):
    red_idx = T.alloc_buffer((1,), "int32", scope="local")
    red_val = T.alloc_buffer((1,), "float32", scope="local")
    for i in T.thread_binding(8, thread="blockIdx.x"):
        for k in T.thread_binding(48, thread="threadIdx.x"):
            with T.block("argmax_cross_thread"):
                T.reads(A[i, k])
                T.writes(red_idx[0], red_val[0])
                T.attr(T.comm_reducer(lambda x0, x1, y0, y1: (T.Select(x1 >= y1, x0, y0),
                                                              T.Select(x1 >= y1, x1, y1)),
                                      [-1, T.min_value("float32")]),
                       "reduce_scope", T.reinterpret(T.uint64(0), dtype="handle"))
                T.evaluate(T.tvm_thread_allreduce(T.uint32(2), k, A[i, k], True, red_idx[0],
                                                  red_val[0], k, dtype="handle"))
            with T.block("argmax_write_back"):
                T.where(k == 0)
                T.reads(red_idx[0], red_val[0])
                T.writes(Idx[i], Val[i])
                Idx[i] = red_idx[0]
                Val[i] = red_val[0]
'''


# TVM's lowered form with an in-thread part: the in-thread block keeps the reduction iterator
# its thread feeds, into each thread's own accumulator (the body already holds the allreduce,
# so the block-level lowering leaves it alone)
LOWERED_ROW_SUM = HEAD + '''@T.prim_func
def lowered_row_sum(A: T.Buffer((4, 96), "float32"), B: T.Buffer((4,), "float32")):
    acc = T.alloc_buffer((1,), "float32", scope="local")
    res = T.alloc_buffer((1,), "float32", scope="local")
    for i in T.thread_binding(4, thread="blockIdx.x"):
        for t in T.thread_binding(32, thread="threadIdx.x"):
            with T.block("B_init"):
                acc[0] = T.float32(0)
            for ko in range(3):
                with T.block("B_in_thread"):
                    vi = T.axis.spatial(4, i)
                    vk = T.axis.reduce(96, ko * 32 + t)
                    acc[0] = acc[0] + A[vi, vk]
            with T.block("B_cross_thread"):
                T.attr(T.comm_reducer(lambda x, y: x + y, [T.float32(0)]), "reduce_scope",
                       T.reinterpret(T.uint64(0), dtype="handle"))
                T.evaluate(T.tvm_thread_allreduce(T.uint32(1), acc[0], True, res[0], t,
                                                  dtype="handle"))
            with T.block("B_write_back"):
                vi = T.axis.spatial(4, i)
                T.where(t == 0)
                B[vi] = res[0]
'''


def func_of(text):
    r = parse(text, "k.py")
    assert not [d for d in r.diagnostics if d.severity == "error"], r.diagnostics
    (_, f), = r.module.prim_funcs()
    return f, r.module


def run_in_threads(text, arrays):
    f, m = func_of(text)
    run_threads(f, arrays, module=m)
    return arrays


def test_sum_over_96_threads_with_an_in_thread_tail():
    rng = np.random.default_rng(3)
    A = rng.standard_normal((16, 200)).astype(np.float32)
    S = rng.standard_normal(16).astype(np.float32)
    run_in_threads(ROW_SUM, [A, S])
    np.testing.assert_allclose(S, A.astype(np.float64).sum(1), rtol=1e-5, atol=1e-5)


def test_max_on_threadidx_x_with_rows_on_threadidx_y():
    rng = np.random.default_rng(4)
    A = rng.standard_normal((8, 64)).astype(np.float32)
    M = np.full(8, 100, np.float32)
    run_in_threads(ROW_MAX, [A, M])
    np.testing.assert_array_equal(M, A.max(1))


def test_integer_min_over_two_thread_dimensions_with_an_init_that_is_not_the_identity():
    rng = np.random.default_rng(5)
    A = rng.integers(-50, 50, (2, 4, 16)).astype(np.int32)
    A[1] = rng.integers(10, 50, (4, 16))          # every value above the init of 7
    M = np.full(2, 99, np.int32)
    run_in_threads(INT_MIN, [A, M])
    np.testing.assert_array_equal(M, np.minimum(A.reshape(2, -1).min(1), 7))
    assert M[1] == 7


def test_softmax_with_a_shared_maximum_and_a_local_sum():
    rng = np.random.default_rng(6)
    A = (rng.standard_normal((4, 64)) * 3).astype(np.float32)
    Y = rng.standard_normal((4, 64)).astype(np.float32)
    run_in_threads(SOFTMAX, [A, Y])
    e = np.exp(A.astype(np.float64) - A.max(1, keepdims=True))
    np.testing.assert_allclose(Y, e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-6)


def test_tvm_thread_allreduce_of_a_two_value_reducer():
    rng = np.random.default_rng(7)
    A = rng.standard_normal((8, 48)).astype(np.float32)
    Idx = np.full(8, 99, np.int32)
    Val = np.zeros(8, np.float32) + 5
    run_in_threads(ALLREDUCE_ARGMAX, [A, Idx, Val])
    np.testing.assert_array_equal(Idx, A.argmax(1))
    np.testing.assert_array_equal(Val, A.max(1))


def test_tvm_lowered_form_with_an_in_thread_part():
    rng = np.random.default_rng(8)
    A = rng.standard_normal((4, 96)).astype(np.float32)
    B = np.zeros(4, np.float32) + 3
    run_in_threads(LOWERED_ROW_SUM, [A, B])
    np.testing.assert_allclose(B, A.astype(np.float64).sum(1), rtol=1e-5, atol=1e-5)


def test_the_cuda_source_reduces_in_shared_memory_with_barriers():
    f, m = func_of(ROW_SUM)
    code = emit_cuda(f, m).code
    assert "__shared__ __align__(16) float red_buf0[96];" in code
    # 96 = 64 + 32: a fold of the top 32, then halving from 32 down to 1
    for s in (32, 16, 8, 4, 2, 1):
        assert f"if ((tx < {s}))" in code, s
    assert code.count("__syncthreads();") >= 7
    assert code.count("if ((tx < 32))") == 2 and "red_buf0[(tx + 64)]" in code
    assert "if ((tx == 0))" in code


def test_a_barrier_separates_a_shared_result_from_the_next_thread_loop():
    """The maximum written by thread 0 after its reduction is read by every thread of the
    next threadIdx loop: a barrier between the two loops (the race detector would report
    the read otherwise)."""
    f, m = func_of(SOFTMAX)
    code = emit_cuda(f, m).code
    first = code.index("mx[0] = ")
    nxt = code.index("for (int ko", first)
    assert "__syncthreads();" in code[first:nxt]


NOT_INNERMOST = HEAD + '''@T.prim_func
def reduce_not_innermost(A: T.Buffer((4, 32, 2), "float32"), B: T.Buffer((4, 2), "float32")):
    for i in T.thread_binding(4, thread="blockIdx.x"):
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            for j in range(2):
                with T.block("B"):
                    vi, vk, vj = T.axis.remap("SRS", [i, tx, j])
                    with T.init():
                        B[vi, vj] = T.float32(0)
                    B[vi, vj] = B[vi, vj] + A[vi, vk, vj]
'''

OTHER_THREADS = HEAD + '''@T.prim_func
def reduce_beside_threadidx_y(A: T.Buffer((4, 32), "float32"), B: T.Buffer((4,), "float32"),
                              C: T.Buffer((4, 4), "float32")):
    for i in T.thread_binding(4, thread="blockIdx.x"):
        for ty in T.thread_binding(4, thread="threadIdx.y"):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, ty])
                C[vi, vj] = A[vi, vj]
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, tx])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]
'''


INIT_ELSEWHERE = HEAD + '''@T.prim_func
def reduce_init_elsewhere(A: T.Buffer((4, 4, 32), "float32"), B: T.Buffer((4, 4), "float32")):
    for i in T.thread_binding(4, thread="blockIdx.x"):
        for j in range(4):
            for tx in T.thread_binding(32, thread="threadIdx.x"):
                with T.block("B"):
                    vi, vj, vk = T.axis.remap("SSR", [i, j, tx])
                    with T.init():
                        B[vj, vi] = T.float32(0)
                    B[vi, vj] = B[vi, vj] + A[vi, vj, vk]
'''


@pytest.mark.parametrize("text, line, words", [
    (INIT_ELSEWHERE, 9, "its init is not one store to each element its update writes"),
    (NOT_INNERMOST, 9, "which must be the innermost statements around it"),
    (OTHER_THREADS, 13, "binds threadIdx.y elsewhere"),
])
def test_what_the_lowering_refuses_is_a_diagnostic_at_the_block(text, line, words):
    f, m = func_of(text)
    with pytest.raises(TirkitError) as exc:
        emit_cuda(f, m)
    (d,) = exc.value.diagnostics
    assert d.code == "codegen/unsupported" and d.span.line == line, d
    assert words in d.message


MATMUL = HEAD + '''@T.prim_func
def mm(A: T.Buffer((8, 64), "float32"), B: T.Buffer((64, 4), "float32"),
       C: T.Buffer((8, 4), "float32")):
    for i, j, k in T.grid(8, 4, 64):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
'''


def test_a_reduction_loop_bound_to_threadidx_by_the_schedule_runs():
    """What `sch.bind(k1, "threadIdx.x")` on a split reduction loop makes runs as a
    cross-thread reduction and checks clean."""
    import tirkit
    from tirkit.schedule import Schedule
    sch = Schedule(parse(MATMUL, "mm.py").module)
    i, j, k = sch.get_loops(sch.get_block("C"))
    k0, k1 = sch.split(k, [None, 16])
    sch.bind(i, "blockIdx.x")
    sch.bind(k1, "threadIdx.x")
    text = tirkit.to_script(sch.mod)
    assert not [d for d in tirkit.check(text, "mm.py", target="cuda-sm90")
                if d.severity == "error"]
    rng = np.random.default_rng(9)
    A = rng.standard_normal((8, 64)).astype(np.float32)
    B = rng.standard_normal((64, 4)).astype(np.float32)
    C = rng.standard_normal((8, 4)).astype(np.float32)
    run_in_threads(text, [A, B, C])
    np.testing.assert_allclose(C, A.astype(np.float64) @ B, rtol=1e-5, atol=1e-5)


UNDER_CONDITION = HEAD + '''@T.prim_func
def reduce_under_thread_condition(A: T.Buffer((4, 32), "float32"), B: T.Buffer((4,), "float32")):
    for ty in T.thread_binding(4, thread="threadIdx.y"):
        if ty < 3:
            for tx in T.thread_binding(32, thread="threadIdx.x"):
                with T.block("B"):
                    vi, vk = T.axis.remap("SR", [ty, tx])
                    with T.init():
                        B[vi] = T.float32(0)
                    B[vi] = B[vi] + A[vi, vk]
'''


def test_a_reduction_under_a_condition_on_the_thread_index_is_refused():
    """Its barriers would be reached by some threads of the block only."""
    f, m = func_of(UNDER_CONDITION)
    with pytest.raises(TirkitError) as exc:
        emit_cuda(f, m)
    (d,) = exc.value.diagnostics
    assert d.code == "codegen/unsupported" and d.span.line == 9
    assert "every thread of the block must reach its barriers" in d.message
    assert d.related[0][0].line == 7


# a local result every thread holds, read by a statement outside the thread loops (every
# thread runs it on a GPU) into another local buffer, which the next loop's threads read
LOCAL_BETWEEN = HEAD + '''@T.prim_func
def local_between_loops(A: T.Buffer((4, 32), "float32"), B: T.Buffer((4, 32), "float32")):
    total = T.alloc_buffer((4,), "float32", scope="local")
    shifted = T.alloc_buffer((1,), "float32", scope="local")
    for i in T.thread_binding(4, thread="blockIdx.x"):
        for k in T.thread_binding(32, thread="threadIdx.x"):
            with T.block("total"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    total[vi] = T.float32(0)
                total[vi] = total[vi] + A[vi, vk]
        with T.block("shift"):
            vi = T.axis.spatial(4, i)
            shifted[0] = total[vi] + T.float32(1)
        for j in T.thread_binding(32, thread="threadIdx.x"):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * shifted[0]
'''


def test_local_buffers_above_the_thread_loops_are_one_per_thread():
    rng = np.random.default_rng(10)
    A = rng.standard_normal((4, 32)).astype(np.float32)
    B = rng.standard_normal((4, 32)).astype(np.float32)
    run_in_threads(LOCAL_BETWEEN, [A, B])
    want = A.astype(np.float64) * (A.astype(np.float64).sum(1, keepdims=True) + 1)
    np.testing.assert_allclose(B, want, rtol=1e-5, atol=1e-5)


# the warp path: 32 reducing threads on threadIdx.x, here bound outside threadIdx.y (the
# lanes of a warp still run along threadIdx.x), and a reducer of two values
ARGMAX_WARP = HEAD + '''@T.prim_func
def allreduce_argmax_warp(A: T.Buffer((4, 2, 32), "float32"), Idx: T.Buffer((4, 2), "int32"),
                          Val: T.Buffer((4, 2), "float32")):
    red_idx = T.alloc_buffer((1,), "int32", scope="local")
    red_val = T.alloc_buffer((1,), "float32", scope="local")
    for i in T.thread_binding(4, thread="blockIdx.x"):
        for k in T.thread_binding(32, thread="threadIdx.x"):
            for j in T.thread_binding(2, thread="threadIdx.y"):
                with T.block("argmax_cross_thread"):
                    T.reads(A[i, j, k])
                    T.writes(red_idx[0], red_val[0])
                    T.attr(T.comm_reducer(lambda x0, x1, y0, y1: (T.Select(x1 >= y1, x0, y0),
                                                                  T.Select(x1 >= y1, x1, y1)),
                                          [-1, T.min_value("float32")]),
                           "reduce_scope", T.reinterpret(T.uint64(0), dtype="handle"))
                    T.evaluate(T.tvm_thread_allreduce(T.uint32(2), k, A[i, j, k], True,
                                                      red_idx[0], red_val[0], k,
                                                      dtype="handle"))
                with T.block("argmax_write_back"):
                    T.where(k == 0)
                    T.reads(red_idx[0], red_val[0])
                    T.writes(Idx[i, j], Val[i, j])
                    Idx[i, j] = red_idx[0]
                    Val[i, j] = red_val[0]
'''


def test_warp_shuffles_reduce_32_threads_of_threadidx_x():
    rng = np.random.default_rng(11)
    A = rng.standard_normal((4, 2, 32)).astype(np.float32)
    Idx = np.full((4, 2), 99, np.int32)
    Val = np.zeros((4, 2), np.float32) + 5
    run_in_threads(ARGMAX_WARP, [A, Idx, Val])
    np.testing.assert_array_equal(Idx, A.argmax(2))
    np.testing.assert_array_equal(Val, A.max(2))
    f, m = func_of(ARGMAX_WARP)
    code = emit_cuda(f, m).code
    assert "red_buf" not in code and "__syncthreads();" not in code
    for s in (16, 8, 4, 2, 1):
        assert f"__shfl_down_sync(4294967295U, red_val0[0], {s}, 32)" in code, s
        assert f"__shfl_down_sync(4294967295U, red_val1[0], {s}, 32)" in code, s
    assert "__shfl_sync(4294967295U, red_val1[0], 0, 32)" in code


def test_the_shared_tree_stays_where_a_warp_does_not_fit():
    """16 reducing threads in a block of 16: not a whole warp, so shared memory (the
    matmul of the schedule test); 96: not a power of two (ROW_SUM)."""
    f, m = func_of(ROW_SUM)
    assert "__shfl" not in emit_cuda(f, m).code
    f, m = func_of(ROW_MAX)
    code = emit_cuda(f, m).code
    assert "__shfl_down_sync" in code and "red_buf" not in code
