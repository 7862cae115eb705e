"""Region compaction sizes buffers by analysis/footprint.py's box: guards narrow it, a loop of
one iteration does not stop a shared allocation from sinking, a GPU shared buffer allocated below
its thread bindings spans them; the shared-memory rule sizes the same buffers alike; compiled
and thread-interpreted results match numpy on random inputs."""
import importlib

import numpy as np

import tirkit
from tirkit.analysis.regions import accesses
from tirkit.codegen import build
from tirkit.codegen.cli import make_inputs
from tirkit.codegen.cuda import emit_cuda
from tirkit.codegen.cuda.lower import lower_gpu
from tirkit.codegen.cuda.threads import run_threads
from tirkit.codegen.passes import lower
from tirkit.ir import stmt as S
from tirkit.ir.visit import walk
from tirkit.verify._common import relax_thread

footprint = importlib.import_module("tirkit.analysis.footprint").footprint

HEAD = "from tvm.script import tir as T\n\n\n"

GUARDED = HEAD + '''@T.prim_func
def guarded(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    S = T.alloc_buffer((80,), "float32")
    for i0 in range(8):
        for t in range(12):
            with T.block("load"):
                T.where(t < 8)
                v = T.axis.spatial(80, i0 * 8 + t)
                S[v] = A[v] * T.float32(2)
        for t in range(8):
            with T.block("use"):
                v = T.axis.spatial(64, i0 * 8 + t)
                B[v] = S[v] + T.float32(1)
'''

# a shared buffer allocated at the root: it sinks through the one-iteration loop w into
# the loop k, whose iterations each touch their own 16 columns
ONE_TRIP = HEAD + '''@T.prim_func
def one_trip(A: T.Buffer((4, 64), "float32"), C: T.Buffer((4, 64), "float32")):
    S = T.alloc_buffer((4, 64), "float32", scope="shared")
    for bx in T.thread_binding(4, thread="blockIdx.x"):
        for tx in T.thread_binding(16, thread="threadIdx.x"):
            for w in range(1):
                for k in range(4):
                    with T.block("load"):
                        vi = T.axis.spatial(4, bx)
                        vj = T.axis.spatial(64, k * 16 + tx)
                        S[vi, vj] = A[vi, vj]
                    with T.block("use"):
                        vi = T.axis.spatial(4, bx)
                        vj = T.axis.spatial(64, k * 16 + tx)
                        C[vi, vj] = S[vi, vj] + T.float32(1)
'''

# a shared buffer under a fused serial loop, written under a guard on f (so no rule sees
# it written first in every iteration): each value of f owns row f // 4, columns
# f % 4 * 16 .. + 15, so the buffer sinks into f as one iteration's 16 columns
FUSED_SHARED = HEAD + '''@T.prim_func
def fused_shared(A: T.Buffer((2, 64), "float32"), C: T.Buffer((2, 64), "float32")):
    S = T.alloc_buffer((2, 64), "float32", scope="shared")
    for bx in T.thread_binding(1, thread="blockIdx.x"):
        for tx in T.thread_binding(16, thread="threadIdx.x"):
            for f in range(8):
                with T.block("load"):
                    T.where(f * 16 + tx < 120)
                    vi = T.axis.spatial(2, f // 4)
                    vj = T.axis.spatial(64, f % 4 * 16 + tx)
                    S[vi, vj] = A[vi, vj]
                with T.block("use"):
                    T.where(f * 16 + tx < 120)
                    vi = T.axis.spatial(2, f // 4)
                    vj = T.axis.spatial(64, f % 4 * 16 + tx)
                    C[vi, vj] = S[vi, vj] + T.float32(1)
'''

# a shared tile allocated below the threadIdx binding, filled cooperatively with a guard
SHARED = HEAD + '''@T.prim_func
def shared_tile_guarded(A: T.Buffer((64,), "float32"), C: T.Buffer((64, 2), "float32")):
    for bx in T.thread_binding(4, thread="blockIdx.x"):
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            with T.block():
                S = T.alloc_buffer((64,), "float32", scope="shared")
                for r in range(3):
                    with T.block("load"):
                        T.where(r * 32 + tx < 16)
                        vi = T.axis.spatial(64, bx * 16 + r * 32 + tx)
                        S[vi] = A[vi]
                for c in range(2):
                    with T.block("use"):
                        vi = T.axis.spatial(64, bx * 16 + tx // 2)
                        vj = T.axis.spatial(2, c)
                        C[vi, vj] = S[vi] * T.float32(vj + 1)
'''


def _module(text):
    r = tirkit.parse(text)
    assert not [d for d in r.diagnostics if d.severity == "error"]
    return r.module, r.module.prim_funcs()[0][1]


def _allocations(body, scope=None):
    out = []

    def fn(x):
        if isinstance(x, S.DeclBuffer) and (scope is None or
                                            (x.buffer.scope or "").startswith(scope)):
            out.append([e.value for e in x.buffer.shape])
    walk(body, fn)
    return out


# a local accumulator read and written as 16-lane vectors (as a tensorized reduction's
# accumulator is): each iteration of i touches its own row, so it sinks into i and shrinks
VECTOR_LOCAL = HEAD + '''@T.prim_func
def vector_local(A: T.Buffer((8, 4, 16), "int32"), C: T.Buffer((8, 16), "int32")):
    L = T.alloc_buffer((8, 16), "int32", scope="local")
    for i in range(8):
        for k in range(4):
            with T.block("acc"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    L[vi, 0:16] = T.Broadcast(T.int32(0), 16)
                L[vi, 0:16] = L[vi, 0:16] + A[vi, vk, 0:16]
        for j in range(16):
            with T.block("out"):
                vi = T.axis.spatial(8, i)
                vj = T.axis.spatial(16, j)
                C[vi, vj] = L[vi, vj]
'''

# a write-back cache under a fused parallel loop (a tiled GEMM's `cache_write` moved under
# S0 and the S0 loops fused): each value of f owns the 8 x 16 block at (f // 4, f % 4)
FUSED = HEAD + '''@T.prim_func
def fused(A: T.Buffer((16, 64), "float32"), C: T.Buffer((16, 64), "float32")):
    W = T.alloc_buffer((16, 64), "float32")
    for f in T.parallel(8):
        for i, j in T.grid(8, 16):
            with T.block("acc"):
                vi = T.axis.spatial(16, f // 4 * 8 + i)
                vj = T.axis.spatial(64, f % 4 * 16 + j)
                W[vi, vj] = A[vi, vj] * T.float32(3)
        for i in range(8):
            for j in T.vectorized(16):
                with T.block("out"):
                    vi = T.axis.spatial(16, f // 4 * 8 + i)
                    vj = T.axis.spatial(64, f % 4 * 16 + j)
                    C[vi, vj] = W[vi, vj] + T.float32(1)
'''


def test_a_buffer_under_a_fused_parallel_loop_shrinks_to_one_iterations_block():
    module, func = _module(FUSED)
    assert _allocations(lower(func, module).body) == [[8 * 16]]     # flat; not 16 * 64
    A, C = make_inputs(func, np.random.default_rng(7))
    build(func, module, cache=False)(A, C, threads=2)
    np.testing.assert_allclose(C, A * 3 + 1, rtol=1e-6)


def test_a_buffer_accessed_as_vectors_sinks_and_shrinks():
    module, func = _module(VECTOR_LOCAL)
    assert _allocations(lower(func, module).body, "local") == [[16]]     # not 8 x 16
    A = np.random.default_rng(3).integers(-99, 99, (8, 4, 16)).astype("int32")
    C = np.zeros((8, 16), "int32")
    build(func, module, cache=False)(A, C)
    assert np.array_equal(C, A.sum(axis=1))


def test_a_guard_narrows_the_compacted_buffer_and_results_match():
    module, func = _module(GUARDED)
    # 64 elements: the unguarded hull would be 68 (i0 * 8 + 11 at i0 = 7)
    assert _allocations(lower(func, module).body) == [[64]]
    kernel = build(func, module, cache=False)
    A, B = make_inputs(func, np.random.default_rng(5))
    want = A * 2 + 1
    kernel(A, B)
    np.testing.assert_allclose(B, want, rtol=1e-6)


def test_a_loop_of_one_iteration_does_not_stop_a_shared_buffer_sinking():
    module, func = _module(ONE_TRIP)
    # one row, 16 columns per iteration of k (the whole 4 x 64 if it stopped at w)
    assert _allocations(lower_gpu(func, module).body, "shared") == [[16]]
    fa = accesses(func)
    (buf, _), = [(b, r) for b, r in fa.allocs if b.name == "S"]
    assert footprint(fa, buf, relax_thread) == [1, 16]
    # the block's tile, indexed by thread inside each iteration of k
    code = emit_cuda(func, module).kernels_code
    assert "float S[16];" in code and "S[tx] = A[" in code and "(S[tx] + 1.0f)" in code


def test_a_shared_buffer_under_a_fused_loop_sinks_into_it():
    module, func = _module(FUSED_SHARED)
    assert _allocations(lower_gpu(func, module).body, "shared") == [[16]]     # not 2 x 64
    code = emit_cuda(func, module).kernels_code
    assert "float S[16];" in code
    A, C = make_inputs(func, np.random.default_rng(11))
    want = A + 1
    want[1, 56:] = C[1, 56:]        # f * 16 + tx >= 120: the last 8 columns of row 1 stay
    run_threads(func, [A, C], module=module)
    np.testing.assert_allclose(C, want, rtol=1e-6)


def test_shared_tile_below_thread_binding_is_sized_as_the_rule_sizes_it():
    module, func = _module(SHARED)
    lowered = lower_gpu(func, module)
    # bx * 16 .. + 15 under the guard (without it, r * 32 + tx spans the whole buffer)
    assert _allocations(lowered.body, "shared") == [[16]]
    fa = accesses(func)
    (buf, _), = [(b, r) for b, r in fa.allocs if b.name == "S"]
    assert footprint(fa, buf, relax_thread) == [16]
    A, C = make_inputs(func, np.random.default_rng(7))
    a = A.copy()
    run_threads(func, [A, C], module=module)
    # each block's 32 threads write rows bx * 16 + tx // 2: all 64 rows, both columns
    np.testing.assert_allclose(C, a[:, None] * np.array([1, 2], "float32"), rtol=1e-6)


# a shared tile written and read at a swizzled column, T.bitwise_xor(tx, j): the column is a
# call of the thread and loop variables, so its dimension spans what they reach
SWIZZLED = HEAD + '''@T.prim_func
def swizzled(A: T.Buffer((32, 64), "float32"), B: T.Buffer((32, 64), "float32")):
    S = T.alloc_buffer((32, 64), "float32", scope="shared")
    for ty in T.thread_binding(4, thread="threadIdx.y"):
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            for j in range(8):
                S[ty * 8 + j, T.bitwise_xor(tx, j) * 2] = A[ty * 8 + j, tx * 2]
                B[ty * 8 + j, tx * 2] = S[ty * 8 + j, T.bitwise_xor(tx, j) * 2] + T.float32(1)
'''

# the same on the CPU: a scratch row indexed by T.shift_right
SHIFTED = HEAD + '''@T.prim_func
def shifted(A: T.Buffer((16, 64), "float32"), B: T.Buffer((16, 32), "float32")):
    W = T.alloc_buffer((16, 64), "float32")
    for i, j in T.grid(16, 64):
        W[i, T.shift_right(j, 1) + j % 2 * 32] = A[i, j] * T.float32(2)
    for i, j in T.grid(16, 32):
        B[i, j] = W[i, j] + W[i, j + 32]
'''


def test_an_index_that_calls_a_function_of_the_loops_keeps_its_span():
    """A call in an index (a swizzle, a shift) varies with its arguments: compaction had
    taken the swizzle for a constant of each block, sized its dimension 1 and addressed
    element 0 (the shared tile); the CPU scratch row keeps its span as well."""
    module, func = _module(SWIZZLED)
    # per iteration of j, rows ty * 8 + j of 4 threads y (25 rows), every column
    assert _allocations(lower_gpu(func, module).body, "shared") == [[25 * 64]]
    assert "(tx ^ j) * 2" in emit_cuda(func, module).kernels_code
    A, B = make_inputs(func, np.random.default_rng(2))
    want = B.copy()
    want[:, 0::2] = A[:, 0::2] + 1
    run_threads(func, [A, B], module=module)
    np.testing.assert_allclose(B, want, rtol=1e-6)
    module, func = _module(SHIFTED)
    assert _allocations(lower(func, module).body) == [[16 * 64]]
    A, B = make_inputs(func, np.random.default_rng(3))
    build(func, module, cache=False)(A, B)
    np.testing.assert_allclose(B, 2 * (A[:, 0::2] + A[:, 1::2]), rtol=1e-6)


# a shared buffer written and read at a permutation of the threads, P[tx] (a template: the
# GPU corpus test would run it on random integers, not a permutation)
GATHER = HEAD + '''@T.prim_func
def gather(A: T.Buffer(({n},), "float32"), P: T.Buffer(({n},), "int32"), B: T.Buffer(({n},), "float32")):
    S = T.alloc_buffer(({n},), "float32", scope="shared")
    for tx in T.thread_binding({n}, thread="threadIdx.x"):
        S[P[tx]] = A[tx]
        B[tx] = S[P[tx]] + T.float32(1)
'''


def test_an_index_that_loads_at_a_thread_keeps_its_span():
    """`P[tx]` varies with tx: compaction had taken it for one symbol of the block, sized the
    tile 1 and addressed its element 0 (a load whose index no relaxed loop moves, such as a
    sparse `A_indptr[i]`, still counts as one symbol)."""
    module, func = _module(GATHER.format(n=64))
    assert _allocations(lower_gpu(func, module).body, "shared") == [[64]]
    assert "S[P[tx]]" in emit_cuda(func, module).kernels_code
    rng = np.random.default_rng(4)
    A = rng.uniform(-1, 1, 64).astype("float32")
    P = rng.permutation(64).astype("int32")
    B = np.zeros(64, "float32")
    run_threads(func, [A, P, B], module=module)
    np.testing.assert_allclose(B, A + 1, rtol=1e-6)
