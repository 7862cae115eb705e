"""TVM's fixed-point multiplies of quantized kernels (`T.q_multiply_shift`,
`T.q_multiply_shift_per_axis`) run in every engine: native code through llvmlite (scalar and
vectorized), the reference interpreter, the thread interpreter and CUDA C, against a numpy
reference of TVM's definition on random inputs of both signs."""
from __future__ import annotations

import numpy as np
import pytest

from tirkit import parse
from tirkit.codegen import build
from tirkit.codegen.cuda import emit_cuda
from tirkit.codegen.cuda.nvcc import compile_cuda, find_nvcc
from tirkit.codegen.cuda.threads import run_threads
from tirkit.codegen.interp import run_reference
from tirkit.diagnostics import TirkitError

HEAD = "from tvm.script import tir as T\n\n\n"

CPU = HEAD + '''@T.prim_func
def requantize(X: T.Buffer((64,), "int32"), Y: T.Buffer((64,), "int32"), L: T.Buffer((64,), "int32"),
               R: T.Buffer((64,), "int32"), S: T.Buffer((64,), "int32"), P: T.Buffer((64,), "int32"),
               Q: T.Buffer((64,), "int32"), H: T.Buffer((64,), "int32")):
    for i in LOOP:
        P[i] = T.q_multiply_shift_per_axis(X[i], Y[i], L[i], R[i], 31, T.bool(True), T.bool(True))
        Q[i] = T.q_multiply_shift(X[i], Y[i], 31, S[i])
        H[i] = T.q_multiply_shift(X[i], 1 << 30, 31, SHIFT)
'''

GPU = CPU.replace("    for i in LOOP:", '''    for b in T.thread_binding(2, thread="blockIdx.x"):
        for t in T.thread_binding(32, thread="threadIdx.x"):
            with T.block():
                i = T.axis.spatial(64, b * 32 + t)''').replace("        P[i]", "                P[i]") \
    .replace("        Q[i]", "                Q[i]").replace("        H[i]", "                H[i]")


def _multiply_shift(x, y, q, left, right):
    """TVM's definition, in Python's integers: round half up of x 2^left y / 2^(q + right)."""
    total = right + q
    return (((x << left) * y + (1 << (total - 1))) >> total)


def _inputs(rng):
    X = rng.integers(-2 ** 20, 2 ** 20, 64).astype(np.int32)
    Y = rng.integers(2 ** 29, 2 ** 31 - 1, 64).astype(np.int32)
    L = rng.integers(0, 5, 64).astype(np.int32)
    R = rng.integers(0, 5, 64).astype(np.int32)
    S = rng.integers(-4, 5, 64).astype(np.int32)
    return [X, Y, L, R, S] + [np.full(64, 12345, np.int32) for _ in range(3)]


def _want(arrays, shift):
    X, Y, L, R, S = ([int(v) for v in a] for a in arrays[:5])
    P = [_multiply_shift(x, y, 31, ls, rs) for x, y, ls, rs in zip(X, Y, L, R)]
    Q = [_multiply_shift(x, y, 31, max(s, 0), max(-s, 0)) for x, y, s in zip(X, Y, S)]
    e = shift - 1
    H = [x << e if e > 0 else x if e == 0 else (x + (1 << (-e - 1))) >> -e for x in X]
    return [np.array(v, np.int64) for v in (P, Q, H)]


def _check(arrays, shift):
    for got, want in zip(arrays[5:], _want(arrays, shift)):
        assert np.array_equal(got.astype(np.int64), want)


@pytest.mark.parametrize("loop", ["range(64)", "T.vectorized(64)"])
@pytest.mark.parametrize("shift", [-3, 0, 1, 4])
def test_fixed_point_multiplies_on_the_cpu(loop, shift):
    r = parse(CPU.replace("LOOP", loop).replace("SHIFT", str(shift)), "q.py")
    (_, f), = r.module.prim_funcs()
    rng = np.random.default_rng(shift + 10)
    arrays = _inputs(rng)
    ref = [a.copy() for a in arrays]
    build(f, r.module)(*arrays)
    _check(arrays, shift)
    run_reference(f, ref, module=r.module)
    _check(ref, shift)


def test_fixed_point_multiplies_in_threads_and_as_cuda():
    r = parse(GPU.replace("SHIFT", "-2"), "q.py")
    (_, f), = r.module.prim_funcs()
    arrays = _inputs(np.random.default_rng(5))
    run_threads(f, arrays, module=r.module)
    _check(arrays, -2)
    code = emit_cuda(f, r.module).code
    assert "q_multiply_shift" not in code and "((long long)" in code
    if find_nvcc() is not None:
        compile_cuda(code, "sm_80", "cubin")


def test_a_fixed_point_multiply_of_floats_is_refused():
    text = CPU.replace("LOOP", "range(64)").replace("SHIFT", "1").replace(
        "T.q_multiply_shift(X[i], Y[i], 31, S[i])", "T.q_multiply_shift(T.float32(X[i]), Y[i], 31, S[i])")
    r = parse(text, "q.py")
    (_, f), = r.module.prim_funcs()
    with pytest.raises(TirkitError) as e:
        build(f, r.module)
    (d,) = e.value.diagnostics
    assert (d.code, d.message, d.span.line) == (
        "codegen/unsupported", "T.q_multiply_shift takes integers, got float32", 10)


VECTORS = HEAD + '''@T.prim_func
def vq(X: T.Buffer((8,), "int32"), Y: T.Buffer((8,), "int32"), L: T.Buffer((8,), "int32"),
       R: T.Buffer((8,), "int32"), S: T.Buffer((8,), "int32"), P: T.Buffer((8,), "int32"),
       Q: T.Buffer((8,), "int32"), H: T.Buffer((8,), "int32")):
    for i in range(2):
        P[i * 4:i * 4 + 4] = T.q_multiply_shift_per_axis(X[i * 4:i * 4 + 4], Y[i * 4:i * 4 + 4], L[i * 4:i * 4 + 4], R[i * 4:i * 4 + 4], 31, T.bool(True), T.bool(True))
        Q[i * 4:i * 4 + 4] = T.q_multiply_shift(X[i * 4:i * 4 + 4], Y[i * 4:i * 4 + 4], 31, S[i * 4:i * 4 + 4])
        H[i * 4:i * 4 + 4] = T.q_multiply_shift(X[i * 4:i * 4 + 4], T.Broadcast(1 << 30, 4), 31, 3)
'''


def test_fixed_point_multiplies_of_explicit_vectors():
    r = parse(VECTORS, "vq.py")
    (_, f), = r.module.prim_funcs()
    arrays = [a[:8].copy() for a in _inputs(np.random.default_rng(9))]
    ref = [a.copy() for a in arrays]
    build(f, r.module)(*arrays)
    run_reference(f, ref, module=r.module)
    for got in (arrays, ref):
        _check(got, 3)
