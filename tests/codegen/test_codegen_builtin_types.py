"""Builtins typed as TVM 0.27 types them (a warp shuffle as the value it moves, the active
mask uint32, `T.dp4a` and `T.undef` int32, `T.infinity(dtype)` its dtype): storing them into
buffers of those types warns of no conversion, and `T.infinity` runs, checked against numpy."""
import numpy as np
import pytest

import tirkit
import codegen_helpers  # noqa: F401  (private kernel cache)
from tirkit.codegen import build
from tirkit.codegen.cuda import emit_cuda
from tirkit.codegen.cuda.threads import run_threads
from tirkit.codegen.interp import run_reference
from tirkit.ir import expr as E
from tirkit.ir.visit import find_all

HEAD = "from tvm.script import tir as T\n\n\n"

TYPED = HEAD + '''@T.prim_func
def typed(A: T.Buffer((32,), "float32"), B: T.Buffer((32, 3), "float32"),
          U: T.Buffer((32,), "uint32"), C: T.Buffer((32, 2), "int32"),
          I8: T.Buffer((8,), "int8"), H: T.Buffer((32,), "float16")):
    for tx in T.thread_binding(32, thread="threadIdx.x"):
        B[tx, 0] = T.tvm_warp_shuffle_down(T.uint32(0xffffffff), A[tx], 1, 32, 32) * T.float32(2)
        B[tx, 1] = T.tvm_warp_shuffle(T.uint32(0xffffffff), A[tx], 0, 32, 32)
        B[tx, 2] = T.infinity("float32") + A[tx]
        H[tx] = T.infinity("float16")
        U[tx] = T.tvm_warp_activemask() + T.uint32(1)
{no_cuda}'''
# (CUDA C for T.dp4a of int8x4 loads and for T.undef is not generated)
NO_CUDA = """        C[tx, 0] = T.dp4a(I8[T.ramp(0, 1, 4)], I8[T.ramp(4, 1, 4)], 0) + 1
        C[tx, 1] = T.undef()
"""


def test_each_has_the_type_tvm_gives_it():
    text = TYPED.format(no_cuda=NO_CUDA)
    assert tirkit.check(text) == []
    calls = find_all(tirkit.parse(text).module["typed"].body, lambda c: True, E.Call)
    assert [(c.op, c.dtype) for c in calls] == [
        ("tvm_warp_shuffle_down", "float32"), ("tvm_warp_shuffle", "float32"),
        ("infinity", "float32"), ("infinity", "float16"), ("tvm_warp_activemask", "uint32"),
        ("dp4a", "int32"), ("undef", "int32")]


def test_an_infinity_of_an_integer_type_is_an_error():
    src = HEAD + '''@T.prim_func
def f(C: T.Buffer((4,), "int32")):
    for i in range(4):
        C[i] = T.infinity("int32")
'''
    (d,) = tirkit.check(src)
    assert (d.code, d.severity, d.span.line) == ("type/mismatch", "error", 7)
    assert d.message.startswith("T.infinity takes a floating-point dtype, not int32")


SCALE = HEAD + '''@T.prim_func
def clamp(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32"),
          H: T.Buffer((64,), "float16")):
    for i in range(64):
        B[i] = T.if_then_else(A[i] > T.float32(0), A[i], -T.infinity("float32"))
        H[i] = T.Cast("float16", A[i]) * T.infinity("float16")
'''


def test_infinity_runs_in_the_interpreter_the_cpu_back_end_and_cuda():
    func = tirkit.parse(SCALE).module["clamp"]
    rng = np.random.default_rng(5)
    A = rng.standard_normal(64).astype("float32")
    want = np.where(A > 0, A, -np.inf).astype("float32")
    with np.errstate(invalid="ignore"):
        half = A.astype("float16") * np.float16(np.inf)
    for run in (lambda *a: build(func)(*a), lambda *a: run_reference(func, list(a))):
        B, H = np.zeros(64, "float32"), np.zeros(64, "float16")
        run(A, B, H)
        np.testing.assert_array_equal(B, want)
        np.testing.assert_array_equal(H, half)
    gpu = tirkit.parse(TYPED.format(no_cuda="")).module
    assert "__int_as_float(0x7f800000)" in emit_cuda(gpu["typed"], gpu).code


@pytest.mark.parametrize("shuffle, src", [("tvm_warp_shuffle", 5), ("tvm_warp_shuffle_down", 1)])
def test_a_shuffled_value_keeps_its_type_in_the_thread_interpreter(shuffle, src):
    text = HEAD + f'''@T.prim_func
def shuffled(A: T.Buffer((32,), "float32"), B: T.Buffer((32,), "float32")):
    for tx in T.thread_binding(32, thread="threadIdx.x"):
        B[tx] = T.{shuffle}(T.uint32(0xffffffff), A[tx], {src}, 32, 32) * T.float32(2)
'''
    assert tirkit.check(text) == []
    r = tirkit.parse(text)
    A = np.random.default_rng(6).standard_normal(32).astype("float32")
    B = np.zeros(32, "float32")
    run_threads(r.module["shuffled"], [A, B], module=r.module)
    lanes = np.arange(32)
    got = A[np.full(32, src)] if shuffle == "tvm_warp_shuffle" else \
        A[np.where(lanes + src < 32, lanes + src, lanes)]
    np.testing.assert_array_equal(B, got * 2)
