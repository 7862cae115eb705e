"""The LLVM pipeline chosen by need (codegen/llvm/pipeline.py): which kernels get an unroll
count on their innermost rolled loops instead of LLVM's general unroller, where the count
goes, and that every pipeline computes the same results."""
from pathlib import Path

import numpy as np

import tirkit
from codegen_helpers import EXAMPLES
from tirkit.codegen import build, emit_llvm
from tirkit.codegen.llvm.pipeline import FULL, HINTED, NO_UNROLL, Pipeline, choose

ROOT = Path(__file__).resolve().parents[2]
HEAD = "from tvm.script import tir as T\n\n"
UNROLLED = HEAD + '''@T.prim_func
def chain(A: T.Buffer((64, 4), "float32"), B: T.Buffer((64,), "float32")):
    for i in range(64):
        for j in T.unroll(4):
            B[i] = B[i] * A[i, j] + T.float32(1)
'''


def _func(path, name):
    module = tirkit.parse(path.read_text(), str(path)).module
    return module, module[name]


def test_innermost_loops_get_a_count_except_where_the_schedule_unrolled_every_one():
    # matmul_1024: each innermost rolled loop (k) holds a T.unroll nest of vector statements
    assert choose(_func(ROOT / "examples" / "matmul_1024_scheduled.py", "matmul_1024")[1]) \
        == NO_UNROLL
    # a rolled loop around one vector statement (the avx2 packing loop), a short rolled loop
    # around a vector body (matmul_tiled), scalar innermost loops: unrolling pays
    kernels = [(ROOT / "examples" / "matmul_1024_avx2.py", "matmul_1024_avx2"),
               (EXAMPLES / "valid" / "scheduled_matmul_cpu.py", "matmul_tiled")]
    kernels += [(EXAMPLES / "valid" / f"{n}.py", n) for n in ("softmax", "conv2d_nhwc_relu",
                                                             "matmul")]
    for path, name in kernels:
        assert choose(_func(path, name)[1]) == HINTED, name
    module = tirkit.parse(UNROLLED).module
    assert choose(module["chain"]) == NO_UNROLL
    scalar = tirkit.parse(UNROLLED.replace("T.unroll(4)", "range(4)")).module
    assert choose(scalar["chain"]) == HINTED
    assert NO_UNROLL.describe() == "O3 (vectorize)" and FULL.describe() == "O3 (vectorize, unroll)"
    assert HINTED.describe() == "O3 (vectorize, innermost loops x4)"


NEST = HEAD + '''@T.prim_func
def nest(A: T.Buffer((7, 9), "float32"), B: T.Buffer((7,), "float32"), n: T.int32):
    for i in range(7):
        for j in range(n):
            B[i] = B[i] * T.float32(0.5) + A[i, j]
        for k in T.vectorized(4):
            A[i, k] = A[i, k] + B[i]
        for j in T.unroll(3):
            B[i] = B[i] + A[i, j]
'''


def test_the_count_goes_on_innermost_rolled_loops_only():
    func = tirkit.parse(NEST).module["nest"]
    text = emit_llvm(func, pipeline=HINTED)
    # the j loop (innermost, rolled, its extent a parameter) gets the count; i holds it, k is
    # vector code, the T.unroll loop is unrolled by lowering
    assert text.count('!"llvm.loop.unroll.count", i32 4') == 1
    assert text.count("!llvm.loop !") == 1
    assert "llvm.loop" not in emit_llvm(func, pipeline=FULL)


ELEMENTWISE = HEAD + '''@T.prim_func
def scale(A: T.Buffer((8, 64), "float32"), B: T.Buffer((8, 64), "float32")):
    for i in range(8):
        for j in range(64):
            B[i, j] = A[i, j] * T.float32(2)
'''


def test_loops_the_vectorizer_widens_get_no_count():
    # elementwise over its variable: LLVM's loop vectorizer widens and interleaves it
    func = tirkit.parse(ELEMENTWISE).module["scale"]
    assert choose(func) == HINTED
    assert "llvm.loop" not in emit_llvm(func, pipeline=HINTED)
    # the same loop accumulating into one element carries a value: it gets the count
    acc = tirkit.parse(ELEMENTWISE.replace("B[i, j] = A[i, j] * T.float32(2)",
                                           "B[i, 0] = B[i, 0] + A[i, j]")).module["scale"]
    assert emit_llvm(acc, pipeline=HINTED).count('"llvm.loop.unroll.count", i32 4') == 1


def test_the_hinted_pipeline_computes_what_the_full_one_does():
    module = tirkit.parse(NEST).module
    rng = np.random.default_rng(7)
    A0 = rng.uniform(0.5, 1.5, (7, 9)).astype(np.float32)
    B0 = rng.uniform(0.5, 1.5, 7).astype(np.float32)
    for n in (0, 1, 3, 4, 5, 9):             # trip counts around and between multiples of 4
        got = []
        for p in (FULL, HINTED):
            A, B = A0.copy(), B0.copy()
            build(module["nest"], module, cache=False, pipeline=p)(A, B, scalars=(n,))
            got.append((A, B))
        np.testing.assert_array_equal(got[0][0], got[1][0])
        np.testing.assert_allclose(got[0][1], got[1][1], rtol=1e-6)
        want = B0.copy()
        for j in range(n):
            want = want * np.float32(0.5) + A0[:, j]
        A_want = A0.copy()
        A_want[:, :4] += want[:, None]
        want = want + A_want[:, :3].sum(axis=1)
        np.testing.assert_allclose(got[1][0], A_want, rtol=1e-5)
        np.testing.assert_allclose(got[1][1], want, rtol=1e-5)


def test_every_pipeline_computes_the_same_results():
    module = tirkit.parse(UNROLLED).module
    func = module["chain"]
    rng = np.random.default_rng(5)
    A = rng.uniform(0.5, 1.5, (64, 4)).astype(np.float32)
    B0 = rng.uniform(0.5, 1.5, 64).astype(np.float32)
    want = B0.copy()
    for j in range(4):
        want = want * A[:, j] + np.float32(1)
    keys = set()
    for p in (FULL, NO_UNROLL, HINTED, Pipeline(level=1, vectorize=False, unroll=False)):
        kernel = build(func, module, cache=False, keep_ir=True, pipeline=p)
        B = B0.copy()
        kernel(A, B)
        np.testing.assert_allclose(B, want, rtol=1e-6)
        assert "define" in kernel.llvm_ir
        keys.add(kernel.key)
    assert len(keys) == 4                    # the pipeline is part of the cache key


def test_ir_text_is_kept_only_on_request():
    module = tirkit.parse(UNROLLED).module
    assert build(module["chain"], module, cache=False).llvm_ir is None


def test_kernel_time_reads_the_given_clock():
    module = tirkit.parse(UNROLLED).module
    kernel = build(module["chain"], module)
    ticks = iter(range(10_000))
    seconds = kernel.time(np.ones((64, 4), np.float32), np.ones(64, np.float32), threads=1,
                          repeat=3, min_seconds=0, clock=lambda: float(next(ticks)))
    assert seconds == 1.0                    # one tick per call: the clock was the one given


UNROLLED_COPY = HEAD + '''@T.prim_func
def copy4(A: T.Buffer((8, 16), "float32"), B: T.Buffer((8, 16), "float32")):
    for i in range(8):
        for j in T.unroll(4):
            for k in T.vectorized(4):
                B[i, j * 4 + k] = A[i, j * 4 + k] + A[i, 15 - j * 4 - k]
'''


def test_constant_index_arithmetic_is_folded_before_llvm():
    func = tirkit.parse(UNROLLED_COPY).module["copy4"]
    text = emit_llvm(func)
    # j a constant after unrolling, k's vector a constant from the unrolled base: no
    # instruction whose operands are all constants, no sign extension of a constant
    for line in text.splitlines():
        if " = add " in line or " = mul " in line or " = sub " in line:
            operands = line.split(" = ")[1].split(" ", 2)[-1].replace("nsw ", "")
            assert "%" in operands, line
        assert not ("sext" in line and "%" not in line.split("sext")[1].split(" to ")[0]), line
    rng = np.random.default_rng(3)
    A = rng.standard_normal((8, 16)).astype(np.float32)
    B = np.zeros((8, 16), np.float32)
    build(func, cache=False)(A, B)
    np.testing.assert_allclose(B, A + A[:, ::-1], rtol=1e-6)
