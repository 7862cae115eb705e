"""Cross-thread reductions of several values (codegen/cuda/crossthread.py with the reducers
of analysis/reducers.py): argmax, argmin and a pair of sums whose reduction loop is bound
to threadIdx, run by the thread interpreter (race detector on) against numpy on random
inputs and generated as CUDA C; updates that are not a reducer's combination, and inits
that miss a buffer, get a diagnostic at the block."""
from __future__ import annotations

import numpy as np
import pytest

from test_cuda_allreduce import HEAD, func_of, run_in_threads
from tirkit.analysis.reducers import match_updates
from tirkit.codegen.cuda import emit_cuda
from tirkit.diagnostics import TirkitError
from tirkit.ir import stmt as S
from tirkit.ir.visit import find_all

# 48 threads (the shared-memory tree, 48 = 32 + 16), TVM's printed form of argmax
ARGMAX = HEAD + '''@T.prim_func
def block_argmax_48(A: T.Buffer((8, 96), "float32"), Idx: T.Buffer((8,), "int32"),
                    Val: T.Buffer((8,), "float32")):
    for i in T.thread_binding(8, thread="blockIdx.x"):
        for ko in range(2):
            for tx in T.thread_binding(48, thread="threadIdx.x"):
                with T.block("argmax"):
                    vi = T.axis.spatial(8, i)
                    vk = T.axis.reduce(96, ko * 48 + tx)
                    with T.init():
                        Idx[vi] = -1
                        Val[vi] = T.min_value("float32")
                    v_idx: T.int32 = T.Select(Val[vi] >= A[vi, vk], Idx[vi], vk)
                    v_val: T.float32 = T.Select(Val[vi] >= A[vi, vk], Val[vi], A[vi, vk])
                    Idx[vi] = v_idx
                    Val[vi] = v_val
'''

# 32 threads of threadIdx.x beside threadIdx.y (warp shuffles); integers with many ties,
# the strict argmin that keeps the smaller index; the stores in the other order, the
# comparisons mirrored
ARGMIN = HEAD + '''@T.prim_func
def block_argmin_ties(A: T.Buffer((4, 2, 64), "int32"), Val: T.Buffer((4, 2), "int32"),
                      Idx: T.Buffer((4, 2), "int32")):
    for b in T.thread_binding(4, thread="blockIdx.x"):
        for ty in T.thread_binding(2, thread="threadIdx.y"):
            for ko in range(2):
                for tx in T.thread_binding(32, thread="threadIdx.x"):
                    with T.block("argmin"):
                        vb, vj = T.axis.remap("SS", [b, ty])
                        vk = T.axis.reduce(64, ko * 32 + tx)
                        with T.init():
                            Val[vb, vj] = T.max_value("int32")
                            Idx[vb, vj] = -1
                        v_idx: T.int32 = T.Select(A[vb, vj, vk] > Val[vb, vj] or Val[vb, vj] == A[vb, vj, vk] and Idx[vb, vj] < vk, Idx[vb, vj], vk)
                        v_val: T.int32 = T.Select(A[vb, vj, vk] > Val[vb, vj], Val[vb, vj], A[vb, vj, vk])
                        Val[vb, vj] = v_val
                        Idx[vb, vj] = v_idx
'''

# layer norm's pair of sums (TVM's layer_norm_tuple_sum), 64 threads over two dimensions,
# without an init: the result is added to what the buffers hold
TUPLE_SUM = HEAD + '''@T.prim_func
def block_sum_and_squares(A: T.Buffer((4, 256), "float32"), S1: T.Buffer((4,), "float32"),
                          S2: T.Buffer((4,), "float32")):
    for i in T.thread_binding(4, thread="blockIdx.x"):
        for ty in T.thread_binding(2, thread="threadIdx.y"):
            for tx in T.thread_binding(32, thread="threadIdx.x"):
                for ki in range(4):
                    with T.block("moments"):
                        vi = T.axis.spatial(4, i)
                        vk = T.axis.reduce(256, (ty * 32 + tx) * 4 + ki)
                        v_s1: T.float32 = S1[vi] + A[vi, vk]
                        v_s2: T.float32 = S2[vi] + A[vi, vk] * A[vi, vk]
                        S1[vi] = v_s1
                        S2[vi] = v_s2
'''


def test_argmax_over_48_threads_in_shared_memory():
    rng = np.random.default_rng(21)
    A = rng.standard_normal((8, 96)).astype(np.float32)
    Idx = np.full(8, 77, np.int32)
    Val = rng.standard_normal(8).astype(np.float32)
    run_in_threads(ARGMAX, [A, Idx, Val])
    np.testing.assert_array_equal(Idx, A.argmax(1))
    np.testing.assert_array_equal(Val, A.max(1))
    code = emit_cuda(*func_of(ARGMAX)).code
    assert "float red_buf1[48];" in code and "int red_buf0[48];" in code
    assert "__shfl" not in code


def test_argmin_with_ties_keeps_the_smallest_index_in_warp_shuffles():
    rng = np.random.default_rng(22)
    A = rng.integers(0, 4, (4, 2, 64)).astype(np.int32)     # many ties in each row
    Val = rng.integers(-9, 9, (4, 2)).astype(np.int32)
    Idx = np.full((4, 2), 77, np.int32)
    run_in_threads(ARGMIN, [A, Val, Idx])
    np.testing.assert_array_equal(Idx, A.argmin(2))
    np.testing.assert_array_equal(Val, A.min(2))
    code = emit_cuda(*func_of(ARGMIN)).code
    assert "red_buf" not in code and "__shfl_down_sync" in code


def test_pair_of_sums_without_init_adds_to_what_the_buffers_hold():
    rng = np.random.default_rng(23)
    A = rng.standard_normal((4, 256)).astype(np.float32)
    S1 = rng.standard_normal(4).astype(np.float32)
    S2 = rng.standard_normal(4).astype(np.float32)
    s1, s2 = S1.astype(np.float64), S2.astype(np.float64)
    run_in_threads(TUPLE_SUM, [A, S1, S2])
    a = A.astype(np.float64)
    np.testing.assert_allclose(S1, s1 + a.sum(1), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(S2, s2 + (a * a).sum(1), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("text, name", [(ARGMAX, "argmax"), (ARGMIN, "argmin"),
                                        (TUPLE_SUM, "sum of pairs")])
def test_the_reducer_is_read_from_the_update(text, name):
    f, _ = func_of(text)
    b, = find_all(f.body, lambda x: x.name_hint in ("argmax", "argmin", "moments"), S.Block)
    m = match_updates(b.body)
    assert m is not None and m.reducer.name == name and len(m.values) == 2
    # the index (or first sum) first, in the reducer's order, whatever the stores' order
    assert [x.dtype for x in m.buffers()][0] == ("int32" if "arg" in name else "float32")


BAD = HEAD + '''@T.prim_func
def BAD_NAME(A: T.Buffer((4, 32), "float32"), Idx: T.Buffer((4,), "int32"),
             Val: T.Buffer((4,), "float32")):
    for i in T.thread_binding(4, thread="blockIdx.x"):
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            with T.block("argmax"):
                vi, vk = T.axis.remap("SR", [i, tx])
                with T.init():
INIT
                UPDATE
'''
FULL_INIT = '''                    Idx[vi] = -1
                    Val[vi] = T.min_value("float32")'''
ARGMAX_UPDATE = '''v_idx: T.int32 = T.Select(Val[vi] >= A[vi, vk], Idx[vi], vk)
                v_val: T.float32 = T.Select(Val[vi] >= A[vi, vk], Val[vi], A[vi, vk])
                Idx[vi] = v_idx
                Val[vi] = v_val'''
# the second store reads the index the first one stored: not one combination
SEQUENTIAL = '''Idx[vi] = T.Select(Val[vi] >= A[vi, vk], Idx[vi], vk)
                Val[vi] = T.Select(Val[vi] >= A[vi, vk] and Idx[vi] >= 0, Val[vi], A[vi, vk])'''
# the index kept where the value is smaller: argmax's index with argmin's value
MIXED = ARGMAX_UPDATE.replace("T.Select(Val[vi] >= A[vi, vk], Val[vi]",
                              "T.Select(Val[vi] <= A[vi, vk], Val[vi]")


REFUSED = {
    "init_one_buffer": ('                    Idx[vi] = -1', ARGMAX_UPDATE,
                        "init is not one store to each element"),
    "stores_in_sequence": (FULL_INIT, SEQUENTIAL, "only an update that combines"),
    "argmax_index_argmin_value": (FULL_INIT, MIXED, "only an update that combines"),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_what_is_not_a_reducer_is_a_diagnostic_at_the_block(name):
    init, update, words = REFUSED[name]
    text = BAD.replace("BAD_NAME", name).replace("INIT", init).replace("UPDATE", update)
    f, m = func_of(text)
    with pytest.raises(TirkitError) as e:
        emit_cuda(f, m)
    (d,) = e.value.diagnostics
    assert d.code == "codegen/unsupported" and words in d.message
    assert d.span.line == 9, d                  # the block's line


MIXED_SCOPES = HEAD + '''@T.prim_func
def argmax_local_index(A: T.Buffer((4, 32), "float32"), Idx: T.Buffer((4,), "int32"),
                       Val: T.Buffer((4,), "float32")):
    for i in T.thread_binding(4, thread="blockIdx.x"):
        idx_local = T.alloc_buffer((4,), "int32", scope="local")
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            with T.block("argmax"):
                vi, vk = T.axis.remap("SR", [i, tx])
                with T.init():
                    idx_local[vi] = -1
                    Val[vi] = T.min_value("float32")
                v_idx: T.int32 = T.Select(Val[vi] >= A[vi, vk], idx_local[vi], vk)
                v_val: T.float32 = T.Select(Val[vi] >= A[vi, vk], Val[vi], A[vi, vk])
                idx_local[vi] = v_idx
                Val[vi] = v_val
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            with T.block("copy"):
                vi = T.axis.spatial(4, i)
                T.where(tx == 0)
                Idx[vi] = idx_local[vi]
'''


def test_a_reduction_into_local_and_global_buffers_at_once_is_refused():
    """A local result is written back by every thread, a global one by the first: one
    write-back cannot do both."""
    f, m = func_of(MIXED_SCOPES)
    with pytest.raises(TirkitError) as e:
        emit_cuda(f, m)
    (d,) = e.value.diagnostics
    assert d.code == "codegen/unsupported" and "local and non-local" in d.message
    assert d.span.line == 10, d


PLAIN_ARGMAX = HEAD + '''@T.prim_func
def plain_argmax(A: T.Buffer((8, 128), "float32"), Idx: T.Buffer((8,), "int32"),
                 Val: T.Buffer((8,), "float32")):
    for i, k in T.grid(8, 128):
        with T.block("argmax"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                Idx[vi] = -1
                Val[vi] = T.min_value("float32")
            v_idx: T.int32 = T.Select(Val[vi] >= A[vi, vk], Idx[vi], vk)
            v_val: T.float32 = T.Select(Val[vi] >= A[vi, vk], Val[vi], A[vi, vk])
            Idx[vi] = v_idx
            Val[vi] = v_val
'''


def test_argmax_whose_reduction_loop_the_schedule_binds_to_threadidx_runs():
    import tirkit
    from tirkit.schedule import Schedule
    sch = Schedule(func_of(PLAIN_ARGMAX)[1])
    i, k = sch.get_loops(sch.get_block("argmax"))
    k0, k1 = sch.split(k, [None, 64])
    sch.bind(i, "blockIdx.x")
    sch.bind(k1, "threadIdx.x")
    text = tirkit.to_script(sch.mod)
    assert not [d for d in tirkit.check(text, "a.py", target="cuda-sm90")
                if d.severity == "error"]
    rng = np.random.default_rng(24)
    A = rng.standard_normal((8, 128)).astype(np.float32)
    Idx = np.full(8, 77, np.int32)
    Val = rng.standard_normal(8).astype(np.float32)
    run_in_threads(text, [A, Idx, Val])
    np.testing.assert_array_equal(Idx, A.argmax(1))
    np.testing.assert_array_equal(Val, A.max(1))
