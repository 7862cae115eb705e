"""`T.fma(a, b, c)`, a * b + c: typed as its operands (a literal takes their dtype), refused
where TVM's LLVM build finds no `llvm.fmuladd` (integers, mixed dtypes), and run by the
interpreter, the CPU back end and CUDA C, checked against numpy on random inputs."""
import numpy as np
import pytest

import tirkit
import codegen_helpers  # noqa: F401  (private kernel cache)
from tirkit.codegen import build
from tirkit.codegen.cuda import emit_cuda
from tirkit.codegen.cuda.nvcc import compile_cuda, find_nvcc
from tirkit.codegen.cuda.threads import run_threads
from tirkit.codegen.interp import run_reference
from tirkit.ir import expr as E
from tirkit.ir.visit import find_all

HEAD = "from tvm.script import tir as T\n\n\n"

FMA = HEAD + '''@T.prim_func
def fma(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32"),
        D: T.Buffer((64,), "float64"), C: T.Buffer((64, 3), "float32"),
        E: T.Buffer((64,), "float64")):
    for i in range(64):
        C[i, 0] = T.fma(A[i], B[i], A[i])
        C[i, 1] = T.fma(A[i], 2.5, 1)
        C[i, 2] = T.fma(A[i], B[i], T.float32(-1)) * B[i]
        E[i] = T.fma(D[i], D[i], D[i])
'''

GPU_FMA = HEAD + '''@T.prim_func
def gpu_fma(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32"),
            C: T.Buffer((256,), "float32")):
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        for tx in T.thread_binding(128, thread="threadIdx.x"):
            C[bx * 128 + tx] = T.fma(A[bx * 128 + tx], B[bx * 128 + tx], T.float32(0.5))
'''


def _inputs(rng):
    A, B = rng.standard_normal(64).astype("float32"), rng.standard_normal(64).astype("float32")
    D = rng.standard_normal(64)
    return [A, B, D, np.zeros((64, 3), "float32"), np.zeros(64)]


def _want(A, B, D):
    C = np.stack([A * B + A, A * np.float32(2.5) + 1, (A * B - 1) * B], axis=1)
    return C, D * D + D


def test_the_call_has_its_operands_dtype_and_a_literal_takes_it():
    r = tirkit.parse(FMA)
    assert tirkit.check(FMA) == []
    calls = find_all(r.module["fma"].body, lambda c: c.op == "fma", E.Call)
    assert [c.dtype for c in calls] == ["float32"] * 3 + ["float64"]
    assert [a.dtype for a in calls[1].args] == ["float32"] * 3
    # printed as TVM prints it, literals with their dtype, and parsed back the same
    text = tirkit.to_script(r.module)
    assert "C[i, 1] = T.fma(A[i], T.float32(2.5), T.float32(1))" in text
    assert tirkit.structural_equal(tirkit.parse(text).module["fma"], r.module["fma"])


@pytest.mark.parametrize("value, message, col", [
    ("T.fma(I[i], I[i], 1)", "T.fma computes on floating-point values, not int32", 16),
    ("T.fma(A[i], H[i], A[i])", "T.fma takes three operands of one dtype: this one is "
     "float16, the first float32", 28),
    ("T.fma(A[i], A[i])", "T.fma takes 3 arguments, got 2", 16),
])
def test_what_llvm_has_no_fmuladd_for_is_an_error_at_its_operand(value, message, col):
    src = HEAD + f'''@T.prim_func
def bad(A: T.Buffer((8,), "float32"), H: T.Buffer((8,), "float16"),
        I: T.Buffer((8,), "int32"), C: T.Buffer((8,), "float32")):
    for i in range(8):
        C[i] = {value}
'''
    (d,) = [d for d in tirkit.check(src) if d.severity == "error"]
    assert d.code == "type/mismatch" and d.message.startswith(message), d.message
    assert (d.span.line, d.span.column) == (8, col)


def test_the_interpreter_and_the_cpu_back_end_compute_it():
    func = tirkit.parse(FMA).module["fma"]
    arrays = _inputs(np.random.default_rng(3))
    ref = [a.copy() for a in arrays]
    build(func)(*arrays)
    run_reference(func, ref)
    A, B, D = arrays[:3]
    C, E64 = _want(A, B, D)
    for got in (arrays, ref):
        np.testing.assert_allclose(got[3], C, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got[4], E64, rtol=1e-12)


def test_cuda_calls_fmaf_and_the_thread_interpreter_runs_it():
    r = tirkit.parse(GPU_FMA)
    func = r.module["gpu_fma"]
    code = emit_cuda(func, r.module).code
    assert "fmaf(A[" in code
    rng = np.random.default_rng(4)
    A, B = rng.standard_normal(256).astype("float32"), rng.standard_normal(256).astype("float32")
    C = np.zeros(256, "float32")
    run_threads(func, [A, B, C], module=r.module)
    np.testing.assert_allclose(C, A * B + np.float32(0.5), rtol=1e-5, atol=1e-6)
    if find_nvcc() is not None:
        assert b"fma.rn.f32" in compile_cuda(code, "sm_80", "ptx")
