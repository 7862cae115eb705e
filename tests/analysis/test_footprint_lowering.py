"""The shared-memory rule sizes a buffer as the CUDA lowering allocates it: the footprint
(analysis.footprint) and the shape of the lowered allocation agree, also where a serial loop
touches overlapping windows of the buffer (each iteration writes its window before reading
it, so the buffer lives per iteration, as TVM allocates it) and where an iteration reads
what an earlier one wrote (the buffer lives around the loop)."""
import numpy as np

import tirkit
from tirkit.analysis import accesses, footprint
from tirkit.analysis.footprint import written_first
from tirkit.codegen.cli import make_inputs
from tirkit.codegen.cuda.lower import CUDA_PIPELINE
from tirkit.codegen.cuda.threads import run_threads
from tirkit.ir import expr as E
from tirkit.ir import stmt as S
from tirkit.ir.visit import find_first, walk
from tirkit.verify._common import relax_thread

# a cache read at the start of each iteration of `k`, into a window that moves every other
# iteration (`k // 2 * STEP`): iterations 0 and 1 fill the same elements
WINDOW = """from tvm.script import tir as T


@T.prim_func
def shared_window(A: T.Buffer((BLOCKS, WIDTH), "float32"), B: T.Buffer((BLOCKS, 32), "float32")):
    S = T.alloc_buffer((BLOCKS, WIDTH), scope="shared")
    for bx in T.thread_binding(BLOCKS, thread="blockIdx.x"):
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            for k in T.serial(4):
                for c in T.serial(CHUNKS):
                    with T.block("S"):
                        vi = T.axis.spatial(BLOCKS, bx)
                        vj = T.axis.spatial(WIDTH, k // 2 * STEP + c * 32 + tx)
                        T.reads(A[vi, vj])
                        T.writes(S[vi, vj])
                        S[vi, vj] = A[vi, vj]
                with T.block("B"):
                    vi = T.axis.spatial(BLOCKS, bx)
                    vj = T.axis.spatial(32, tx)
                    vk = T.axis.reduce(4, k)
                    T.reads(S[vi, vk // 2 * STEP + vj:vk // 2 * STEP + vj + LAST + 1])
                    T.writes(B[vi, vj])
                    with T.init():
                        B[vi, vj] = T.float32(0)
                    B[vi, vj] = B[vi, vj] + S[vi, vk // 2 * STEP + vj] * S[vi, vk // 2 * STEP + vj + LAST]
"""
SMALL = WINDOW.replace("BLOCKS", "16").replace("CHUNKS", "4").replace("STEP", "64") \
    .replace("WIDTH", "192").replace("LAST", "96")
# 40 KB per iteration, 72 KB around the loop: fits the 48 KB of static shared memory
FITS = WINDOW.replace("BLOCKS", "1").replace("CHUNKS", "320").replace("STEP", "8192") \
    .replace("WIDTH", "18432").replace("LAST", "10208")
# 64 KB per iteration: beyond it
TOO_BIG = WINDOW.replace("BLOCKS", "1").replace("CHUNKS", "512").replace("STEP", "8192") \
    .replace("WIDTH", "24576").replace("LAST", "16352")

# no thread binding: the accumulator's window moves with `k` and each iteration first reads
# what an earlier one wrote, so the buffer cannot live per iteration
ACCUMULATE = """from tvm.script import tir as T


@T.prim_func
def moving_accumulator(A: T.Buffer((64,), "float32")):
    S = T.alloc_buffer((64,), scope="shared")
    for k in T.serial(4):
        for j in T.serial(32):
            with T.block("S"):
                vj = T.axis.spatial(64, k * 8 + j)
                S[vj] = S[vj] + A[vj]
"""
COPY_FIRST = """from tvm.script import tir as T


@T.prim_func
def copy_then_reverse(A: T.Buffer((64,), "float32"), B: T.Buffer((4, 32), "float32")):
    S = T.alloc_buffer((64,), scope="shared")
    for k in T.serial(4):
        for j in T.serial(32):
            with T.block("S"):
                vj = T.axis.spatial(64, k * 8 + j)
                S[vj] = A[vj]
        for j in T.serial(32):
            with T.block("B"):
                vk, vj = T.axis.remap("SS", [k, j])
                B[vk, vj] = S[vk * 8 + 31 - vj]
"""


def _func(text):
    r = tirkit.parse(text)
    assert not [d for d in r.diagnostics if d.severity == "error"]
    return r.module.prim_funcs()[0][1], r.module


def _lowered(func):
    """The GPU pipeline up to region compaction (before buffers are flattened)."""
    body = func.body
    for name, step in CUDA_PIPELINE:
        if name == "flatten_buffers":
            break
        body = step(body)
    return body


def _loop_k(func):
    """The loop `k` and the buffer, as the lowering sees them before placing the buffer."""
    body = func.body
    for name, step in CUDA_PIPELINE:
        if name == "place_scoped_buffers":
            break
        body = step(body)
    loop = find_first(body, lambda x: isinstance(x, S.For) and x.loop_var.name == "k")
    return loop, find_first(body, lambda x: isinstance(x, S.DeclBuffer)).buffer


def _allocated(body, name):
    shapes = []
    walk(body, lambda x: shapes.append([s.value for s in x.buffer.shape])
         if isinstance(x, S.DeclBuffer) and x.buffer.name == name else None)
    (shape,) = shapes
    return shape


def _rule(func, name, relax=relax_thread):
    fa = accesses(func)
    (buf,) = [b for b, _ in fa.allocs if b.name == name]
    return footprint(fa, buf, relax)


def test_overlapping_windows_live_per_iteration_in_both():
    func, _ = _func(SMALL)
    # the window of one iteration (k fixed), not the 192 elements all iterations cover
    assert _rule(func, "S") == _allocated(_lowered(func), "S") == [1, 128]


def test_lowered_window_runs_and_matches_numpy():
    func, module = _func(SMALL)
    arrays = make_inputs(func, np.random.default_rng(5))
    a = arrays[0].copy()
    run_threads(func, arrays, module=module)
    want = np.zeros((16, 32), np.float32)
    for k in range(4):
        w = a[:, k // 2 * 64:k // 2 * 64 + 128]
        want += w[:, :32] * w[:, 96:]
    np.testing.assert_allclose(arrays[1], want, rtol=1e-5)


def test_the_rule_reports_the_bytes_lowering_allocates():
    fits, _ = _func(FITS)
    assert _rule(fits, "S") == _allocated(_lowered(fits), "S") == [1, 10240]
    assert not [d for d in tirkit.check(FITS, target="cuda")
                if d.code == "thread/shared-memory-limit"]
    big, _ = _func(TOO_BIG)
    assert _allocated(_lowered(big), "S") == [1, 16384]
    (d,) = [d for d in tirkit.check(TOO_BIG, target="cuda")
            if d.code == "thread/shared-memory-limit"]
    assert "64 KB" in d.message and "(1x16384 after compaction)" in d.message
    assert d.span.line == TOO_BIG.splitlines().index(
        '    S = T.alloc_buffer((BLOCKS, WIDTH), scope="shared")'.replace(
            "BLOCKS", "1").replace("WIDTH", "24576")) + 1


def test_a_read_before_the_write_keeps_the_buffer_around_the_loop():
    func, _ = _func(ACCUMULATE)
    body = _lowered(func)
    loop, buf = _loop_k(func)
    assert not written_first(loop.body, buf, loop.loop_var)
    # k * 8 + j for k < 4, j < 32: 56 elements, not the 32 of one iteration
    assert _rule(func, "S", lambda lp: False) == _allocated(body, "S") == [56]


def test_a_write_first_lets_the_buffer_live_per_iteration():
    func, _ = _func(COPY_FIRST)
    body = _lowered(func)
    loop, buf = _loop_k(func)
    assert written_first(loop.body, buf, loop.loop_var)
    assert _rule(func, "S", lambda lp: False) == _allocated(body, "S") == [32]


def test_an_init_in_the_first_iteration_is_not_a_write_first():
    """A reduction's init runs when its reduction iterators start: under a condition on the
    loop, so later iterations read what earlier ones wrote."""
    text = """from tvm.script import tir as T


@T.prim_func
def running_sum(A: T.Buffer((4, 32), "float32")):
    S = T.alloc_buffer((32,), scope="shared")
    for k in T.serial(4):
        for j in T.serial(32):
            with T.block("S"):
                vj = T.axis.spatial(32, j)
                vk = T.axis.reduce(4, k)
                with T.init():
                    S[vj] = T.float32(0)
                S[vj] = S[vj] + A[vk, vj]
"""
    func, _ = _func(text)
    body = _lowered(func)
    loop, buf = _loop_k(func)
    assert not written_first(loop.body, buf, loop.loop_var)
    assert isinstance(find_first(loop.body, lambda x: isinstance(x, S.IfThenElse)).condition,
                      E.EQ)
    assert _rule(func, "S", lambda lp: False) == _allocated(body, "S") == [32]


def test_a_buffer_passed_by_address_keeps_its_shape_in_both():
    text = """from tvm.script import tir as T


@T.prim_func
def by_address(A: T.Buffer((8, 64), "float32")):
    S = T.alloc_buffer((8, 64), scope="shared")
    for i in T.serial(8):
        for j in T.serial(4):
            with T.block("S"):
                vi, vj = T.axis.remap("SS", [i, j])
                S[vi, vj] = A[vi, vj]
        T.evaluate(T.call_extern("int32", "consume", S.data, i * 64))
"""
    func, _ = _func(text)
    assert _rule(func, "S") == _allocated(_lowered(func), "S") == [8, 64]


def test_vector_operands_of_an_extern_call_are_compacted_in_both():
    """A Ramp-indexed load given to an extern function is a vector of values (not an
    address): the buffer shrinks to what the vectors and the copy cover."""
    text = """from tvm.script import tir as T


@T.prim_func
def vector_operand(A: T.Buffer((8, 64), "int8"), C: T.Buffer((8,), "int32")):
    S = T.alloc_buffer((8, 64), "int8", scope="shared")
    for i in T.serial(8):
        for j in T.serial(4):
            with T.block("S"):
                vi, vj = T.axis.remap("SS", [i, j])
                S[vi, vj] = A[vi, vj]
        C[i] = T.call_pure_extern("int32", "__dp4a", S[i, T.ramp(0, 1, 4)], S[i, T.ramp(0, 1, 4)], 0)
"""
    func, _ = _func(text)
    assert _rule(func, "S") == _allocated(_lowered(func), "S") == [1, 4]
