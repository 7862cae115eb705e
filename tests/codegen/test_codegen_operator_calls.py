"""Operators spelled as calls (`T.Div`, `T.LT`, `T.floor` of an integer...): compiled and
interpreted with TVM's semantics, checked against numpy, and against TVM 0.27 itself where it
is installed (the same kernels, with `break`/`continue`, run on its llvm target)."""
import numpy as np
import pytest

import tirkit

import codegen_helpers  # noqa: F401  (private kernel cache)
from tirkit.codegen import build
from tirkit.codegen.cli import make_inputs
from tirkit.codegen.interp import run_reference
from tirkit.codegen.operators import as_operator
from tirkit.ir.expr import CALL_OPERATORS
from tirkit.diagnostics import TirkitError
from tirkit.ir import expr as E

HEAD = "from tvm.script import tir as T\n\n\n"

INTS = '''@T.prim_func
def ints(A: T.Buffer((64,), "int32"), B: T.Buffer((64,), "int32"), C: T.Buffer((64, 9), "int32"),
         L: T.Buffer((64, 4), "bool"), W: T.Buffer((64,), "int64")):
    for i in range(64):
        C[i, 0] = T.Div(A[i], B[i])
        C[i, 1] = T.Mod(A[i], B[i])
        C[i, 2] = T.FloorDiv(A[i], B[i])
        C[i, 3] = T.FloorMod(A[i], B[i])
        C[i, 4] = T.Min(A[i], B[i]) + T.Max(A[i], B[i]) * 1000
        C[i, 5] = T.Sub(T.Mul(A[i], 3), T.Add(B[i], 7))
        C[i, 6] = T.floor(A[i]) + T.ceil(B[i]) * 1000
        C[i, 7] = T.Div(A[i], 7)
        C[i, 8] = T.Select(T.And(T.LT(A[i], B[i]), T.Not(T.EQ(A[i], 5))), 1, 0)
        L[i, 0] = T.LE(A[i], B[i])
        L[i, 1] = T.Or(T.GT(A[i], 10), T.GE(B[i], A[i]))
        L[i, 2] = T.NE(A[i], B[i])
        L[i, 3] = T.LT(0, 1)
        W[i] = T.Div(T.Cast("int64", A[i]) * T.int64(3000000000), T.int64(7))
'''


def _trunc_div(a, b):
    return np.fix(a.astype(np.float64) / b).astype(np.int64)


def _expect_ints(A, B):
    a, b = A.astype(np.int64), B.astype(np.int64)
    q = _trunc_div(a, b)
    C = np.stack([q, a - q * b, np.floor_divide(a, b), np.mod(a, b),
                  np.minimum(a, b) + np.maximum(a, b) * 1000, a * 3 - (b + 7), a + b * 1000,
                  _trunc_div(a, np.int64(7)), ((a < b) & (a != 5)).astype(np.int64)], axis=1)
    L = np.stack([a <= b, (a > 10) | (b >= a), a != b, np.ones_like(a, bool)], axis=1)
    W = (a * 3000000000) // 7
    W = np.where((W * 7 != a * 3000000000) & (a < 0), W + 1, W)        # toward zero
    return C.astype(np.int32), L, W


def _run_both(src, seed):
    module = tirkit.parse(HEAD + src).module
    func = module.prim_funcs()[0][1]
    arrays = make_inputs(func, np.random.default_rng(seed))
    ours = [a.copy() for a in arrays]
    ref = [a.copy() for a in arrays]
    build(func, module)(*ours)
    run_reference(func, ref, module=module)
    return arrays, ours, ref


@pytest.mark.parametrize("seed", [0, 1])
def test_integer_operator_calls_match_numpy(seed):
    arrays, ours, ref = _run_both(INTS, seed)
    A, B = arrays[0], arrays[1]
    assert (A < 0).any() and (B < 0).any()          # negatives: truncation differs from floor
    C, L, W = _expect_ints(A, B)
    for got in (ours, ref):
        np.testing.assert_array_equal(got[2], C)
        np.testing.assert_array_equal(got[3], L)
        np.testing.assert_array_equal(got[4], W)


def test_truncating_division_of_negatives():
    """T.Div rounds toward zero, T.FloorDiv toward minus infinity (-7 / 2 is -3, not -4)."""
    A = np.array([-7, 7, -7, 7, -1, -9, 9, 13] * 8, dtype=np.int32)
    B = np.array([2, -2, -2, 2, 3, 4, -4, -5] * 8, dtype=np.int32)
    module = tirkit.parse(HEAD + INTS).module
    func = module["ints"]
    for run in (lambda xs: build(func, module)(*xs), lambda xs: run_reference(func, xs)):
        xs = make_inputs(func, np.random.default_rng(2))
        xs[0][:], xs[1][:] = A, B
        run(xs)
        C = xs[2]
        assert C[:8, 0].tolist() == [-3, -3, 3, 3, 0, -2, -2, -2]
        assert C[:8, 1].tolist() == [-1, 1, -1, 1, -1, -1, 1, 3]
        assert C[:8, 2].tolist() == [-4, -4, 3, 3, -1, -3, -3, -3]
        assert C[:8, 3].tolist() == [1, -1, -1, 1, 2, 3, -3, -2]


FLOATS = '''@T.prim_func
def floats(A: T.Buffer((32,), "float32"), B: T.Buffer((32,), "float32"),
           C: T.Buffer((32, 4), "float32")):
    for i in range(32):
        C[i, 0] = T.Div(A[i], B[i])
        C[i, 1] = T.Mod(A[i], B[i])
        C[i, 2] = T.Max(A[i], B[i]) - T.Min(A[i], T.float32(0.75))
        C[i, 3] = T.Select(T.GT(A[i], B[i]), A[i], B[i] * T.float32(2))
'''


def test_float_operator_calls_match_numpy():
    arrays, ours, ref = _run_both(FLOATS, 3)
    A, B = arrays[0], arrays[1]
    want = np.stack([A / B, np.fmod(A, B), np.maximum(A, B) - np.minimum(A, np.float32(0.75)),
                     np.where(A > B, A, B * np.float32(2))], axis=1)
    for got in (ours, ref):
        np.testing.assert_allclose(got[2], want, rtol=1e-6)


def test_the_table_and_its_dtype_rules():
    a, b = E.Var("a", "int64"), E.Var("b", "int32")
    assert CALL_OPERATORS["Div"] is E.Div and CALL_OPERATORS["truncmod"] is E.Mod
    node = as_operator(E.Call("handle", "Div", (a, E.IntImm("int32", 2))))   # a literal:
    assert type(node) is E.Div and node.dtype == "int64" and node.b.dtype == "int64"  # retyped
    assert as_operator(E.Call("handle", "LT", (a, a))).dtype == "bool"
    assert as_operator(E.Call("int32", "floor", (b,))) is b
    with pytest.raises(TirkitError) as e:
        as_operator(E.Call("handle", "Div", (a, b)))
    assert "T.Div of int64 and int32" in e.value.diagnostics[0].message


# ---- TVM 0.27 on the same kernels -------------------------------------------------------
CONTROL = '''@T.prim_func
def control(A: T.Buffer((64,), "int32"), B: T.Buffer((64,), "int32"),
            Out: T.Buffer((4,), "int32")):
    Out[0] = 0
    Out[1] = 0
    Out[2] = 0
    Out[3] = 0
    for i in range(8):
        for j in range(8):
            if T.EQ(T.FloorMod(A[i * 8 + j], 3), 0):
                continue
            if T.LT(A[i * 8 + j], -40):
                break
            Out[0] = Out[0] + T.Div(A[i * 8 + j], B[i * 8 + j])
        if T.GT(Out[0], 200):
            break
        Out[1] = Out[1] + 1
    while T.LT(Out[2], 64):
        Out[2] = Out[2] + 1
        if T.EQ(T.Mod(A[Out[2] - 1], 2), 0):
            continue
        Out[3] = Out[3] + T.Mod(A[Out[2] - 1], B[Out[2] - 1])
'''


@pytest.mark.oracle
@pytest.mark.parametrize("src,name", [(INTS, "ints"), (FLOATS, "floats"),
                                      (CONTROL, "control")])
def test_same_results_as_tvm(src, name):
    import tvm
    module = tirkit.parse(HEAD + src).module
    func = module[name]
    for seed in (0, 1):
        arrays = make_inputs(func, np.random.default_rng(seed))
        ours = [a.copy() for a in arrays]
        ref = [a.copy() for a in arrays]
        build(func, module)(*ours)
        run_reference(func, ref, module=module)
        ex = tvm.compile(tvm.script.from_source(src), target="llvm")
        theirs = [tvm.runtime.tensor(a) for a in arrays]
        ex[name](*theirs)
        for o, r, t in zip(ours, ref, theirs):
            t = t.numpy()
            if t.dtype.kind == "f":
                np.testing.assert_allclose(o, t, rtol=1e-6)
                np.testing.assert_allclose(r, t, rtol=1e-6)
            else:
                np.testing.assert_array_equal(o, t)
                np.testing.assert_array_equal(r, t)
        assert not np.array_equal(ours[-1], arrays[-1])     # the kernel did write


INTRIN = HEAD + '''@T.prim_func
def intrin(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    for i in range(64):
        B[i] = T.call_intrin("float32", "tir.exp", A[i]) + T.call_intrin("float32", "tirx.fabs", A[i])
'''

SYNCED = HEAD + '''@T.prim_func
def call_intrin_barrier(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    for tx in T.thread_binding(64, thread="threadIdx.x"):
        with T.block():
            S = T.alloc_buffer((64,), "float32", scope="shared")
            S[tx] = A[tx]
            T.evaluate(T.call_intrin("int32", "tir.tvm_storage_sync", "shared"))
            B[tx] = S[63 - tx]
'''


def test_call_intrin_is_the_call_it_names():
    """`T.call_intrin(dtype, "tir.name", ...)`, as TVM prints some intrinsics, runs as
    `T.name(...)`: math natively and in the interpreter; a barrier in the thread
    interpreter and in CUDA C, where the barrier pass sees it and adds none."""
    r = tirkit.parse(INTRIN, "intrin.py")
    (_, f), = r.module.prim_funcs()
    A = np.random.default_rng(3).standard_normal(64).astype(np.float32)
    B, ref = np.zeros(64, np.float32), np.zeros(64, np.float32)
    build(f, r.module)(A, B)
    run_reference(f, [A, ref], module=r.module)
    for got in (B, ref):
        np.testing.assert_allclose(got, np.exp(A) + np.abs(A), rtol=1e-6)
    from tirkit.codegen.cuda import emit_cuda
    from tirkit.codegen.cuda.threads import run_threads
    r = tirkit.parse(SYNCED, "synced.py")
    (_, f), = r.module.prim_funcs()
    B = np.zeros(64, np.float32)
    run_threads(f, [A, B], module=r.module)
    np.testing.assert_array_equal(B, A[::-1])
    assert emit_cuda(f, r.module).code.count("__syncthreads();") == 1   # none added to it
