import numpy as np
import pytest

from kernels import HEAD, MATMUL, ROWSUM, row_reduction
from sched_util import body_text, check_scheduled, refused, sched

NOT_A_REDUCER = row_reduction(8, 16, "weird", update="B[vi] * T.float32(0.5) + A[vi, vk]",
                              regions=True)

ROWMAX = row_reduction(8, 16, "rowmax", init='T.min_value("float32")',
                       update="T.max(B[vi], A[vi, vk])", regions=True)


def test_rfactor_inner_loop():
    sch = sched(ROWSUM)
    i, k = sch.get_loops(sch.get_block("B"))
    k0, k1 = sch.split(k, [None, 4])
    rf = sch.rfactor(k1, 0)
    assert rf.name == "B_rf"
    text = body_text(sch)
    assert 'B_rf = T.alloc_buffer((4, 8), "float32")' in text
    assert 'vk_1, vi, vk_0 = T.axis.remap("SSR", [k_1, i, k_0])' in text
    assert "B_rf[vk_1, vi] = B_rf[vk_1, vi] + A[vi, vk_0 * 4 + vk_1]" in text
    assert "for i, k_1 in T.grid(8, 4):" in text
    assert "B[vi] = B[vi] + B_rf[vk_1, vi]" in text
    check_scheduled(sch)


def test_rfactor_outer_loop_last_axis():
    sch = sched(MATMUL)
    i, j, k = sch.get_loops(sch.get_block("C"))
    k0, k1 = sch.split(k, [4, None])
    sch.rfactor(k0, 2)
    assert 'C_rf = T.alloc_buffer((16, 16, 4), "float32")' in body_text(sch)
    check_scheduled(sch)


def test_rfactor_max_reducer():
    sch = sched(ROWMAX)
    i, k = sch.get_loops(sch.get_block("B"))
    k0, k1 = sch.split(k, [None, 4])
    sch.rfactor(k1, 0)
    assert "B[vi] = T.max(B[vi], B_rf[vk_1, vi])" in body_text(sch)
    check_scheduled(sch)


def test_rfactor_without_reducer():
    sch = sched(NOT_A_REDUCER)
    i, k = sch.get_loops(sch.get_block("B"))
    with refused("rfactor/no-reducer", "B") as e:
        sch.rfactor(k, 0)
    assert e.value.span.line == 7


def test_rfactor_of_spatial_loop():
    sch = sched(ROWSUM)
    i, k = sch.get_loops(sch.get_block("B"))
    with refused("rfactor/not-reduction-loop", "i"):
        sch.rfactor(i, 0)


def test_rfactor_bad_axis():
    sch = sched(ROWSUM)
    i, k = sch.get_loops(sch.get_block("B"))
    with refused("rfactor/bad-axis"):
        sch.rfactor(k, 3)


def test_rfactor_of_the_only_reduction_loop_is_a_plain_store():
    sch = sched(ROWSUM)
    i, k = sch.get_loops(sch.get_block("B"))
    sch.rfactor(k, 0)
    text = body_text(sch)
    assert "B_rf[vk, vi] = A[vi, vk]" in text
    assert text.count("with T.init():") == 1          # only the write-back reduces
    check_scheduled(sch)


def _pair(name, init0, init1, update0, update1, dtypes=("int32", "float32"), order=(0, 1)):
    """A reduction of two values over the rows of A (block "R"): let-bound updates of
    B0 and B1 (stored in `order`), as TVM prints argmax. Line 8 is the block."""
    stores = ["B0[vi] = v_B0", "B1[vi] = v_B1"]
    return HEAD + f'''@T.prim_func
def {name}(A: T.Buffer((6, 32), "float32"), B0: T.Buffer((6,), "{dtypes[0]}"),
        B1: T.Buffer((6,), "{dtypes[1]}")):
    for i, k in T.grid(6, 32):
        with T.block("R"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B0[vi] = {init0}
                B1[vi] = {init1}
            v_B0: T.{dtypes[0]} = {update0}
            v_B1: T.{dtypes[1]} = {update1}
            {stores[order[0]]}
            {stores[order[1]]}
'''


ARGMAX = _pair("argmax", "-1", 'T.min_value("float32")',
               "T.Select(B1[vi] >= A[vi, vk], B0[vi], vk)",
               "T.Select(B1[vi] >= A[vi, vk], B1[vi], A[vi, vk])")
ARGMIN_STRICT = _pair("argmin", "-1", 'T.max_value("float32")',
                      "T.Select(B1[vi] < A[vi, vk] or B1[vi] == A[vi, vk] and B0[vi] < vk, "
                      "B0[vi], vk)",
                      "T.Select(B1[vi] < A[vi, vk], B1[vi], A[vi, vk])", order=(1, 0))
MOMENTS = _pair("moments", "T.float32(0)", "T.float32(0)", "B0[vi] + A[vi, vk]",
                "B1[vi] + A[vi, vk] * A[vi, vk]", dtypes=("float32", "float32"))


def test_rfactor_of_argmax_gives_an_rf_buffer_per_value():
    sch = sched(ARGMAX)
    i, k = sch.get_loops(sch.get_block("R"))
    k0, k1 = sch.split(k, [None, 8])
    rf = sch.rfactor(k1, 1)
    assert rf.name == "R_rf"
    text = body_text(sch)
    assert 'B0_rf = T.alloc_buffer((6, 8), "int32")' in text
    assert 'B1_rf = T.alloc_buffer((6, 8), "float32")' in text
    assert "v_B0_rf: T.int32 = T.Select(\n                B1_rf[vi, vk_1] >= A[vi, vk_0 * 8 + vk_1]," \
        in text
    assert "B0_rf[vi, vk_1] = v_B0_rf\n            B1_rf[vi, vk_1] = v_B1_rf" in text
    assert 'B1_rf[vi, vk_1] = T.min_value("float32")' in text          # the rf init
    assert ("v_B0: T.int32 = T.Select(B1[vi] >= B1_rf[vi, vk_1], B0[vi], B0_rf[vi, vk_1])"
            in text)
    check_scheduled(sch)


def test_rfactor_of_a_strict_argmin_with_ties_and_a_pair_of_sums_compute_the_same():
    for text, name in ((ARGMIN_STRICT, "argmin"), (MOMENTS, "moments")):
        sch = sched(text)
        i, k = sch.get_loops(sch.get_block("R"))
        k0, k1 = sch.split(k, [4, None])
        sch.rfactor(k0, 0)
        check_scheduled(sch)
        # with ties (integral values in few levels), the smallest index still wins
        interp = pytest.importorskip("tirkit.codegen.interp")
        rng = np.random.default_rng(5)
        A = rng.integers(0, 3, (6, 32)).astype(np.float32)
        B0 = np.full(6, 99, np.int32 if name == "argmin" else np.float32)
        B1 = np.full(6, 99, np.float32)
        interp.run_reference(sch.mod[name], [A, B0, B1], module=sch.mod)
        if name == "argmin":
            np.testing.assert_array_equal(B0, A.argmin(1))
            np.testing.assert_array_equal(B1, A.min(1))
        else:
            np.testing.assert_allclose(B0, A.sum(1))
            np.testing.assert_allclose(B1, (A * A).sum(1))


def test_rfactor_of_a_reduction_of_two_values_without_identity_init_is_refused():
    text = ARGMAX.replace('B1[vi] = T.min_value("float32")', "B1[vi] = T.float32(0)")
    sch = sched(text)
    i, k = sch.get_loops(sch.get_block("R"))
    with refused("rfactor/no-reducer", "R") as e:
        sch.rfactor(k, 0)
    assert e.value.span.line == 8
