"""Classic attribute statements (codegen/passes/attrs.py): `T.attr(node, key, value)`
written as a statement annotates the rest of its sequence, as TVM's parser reads it; the
lowering makes it the attribute over them.  Kernels holding them run on the CPU (llvmlite
and the reference interpreter) and in the thread interpreter, against numpy."""
import numpy as np
import pytest

from test_cuda_allreduce import HEAD, func_of, run_in_threads
from tirkit.codegen import build
from tirkit.codegen.cuda import emit_cuda
from tirkit.codegen.interp import run_reference
from tirkit.diagnostics import TirkitError

CPU = HEAD + '''@T.prim_func
def hinted(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    T.attr(0, "pragma_auto_unroll_max_step", 16)
    for i in range(16):
        T.attr(0, "pragma_unroll_explicit", 0)
        B[i] = A[i] + T.float32(1)
    T.attr(0, "pragma_scope", "parallel_launch_point")
'''

# TVM's lowered tree in shared memory: the result buffer marked volatile by an attribute
# statement on its allocation, the reduce_scope one over the reduction
GPU = HEAD + '''@T.prim_func
def volatile_tree(A: T.Buffer((4, 64), "float32"), B: T.Buffer((4,), "float32")):
    for i in T.thread_binding(4, thread="blockIdx.x"):
        for tx in T.thread_binding(64, thread="threadIdx.x"):
            red = T.allocate([64], "float32", "shared")
            T.attr(red, "volatile_scope", 1)
            red_1 = T.Buffer((64,), data=red, scope="shared")
            T.attr(T.comm_reducer(lambda x, y: x + y, [T.float32(0)]), "reduce_scope",
                   T.reinterpret("handle", T.uint64(0)))
            red_1[tx] = A[i, tx]
            T.tvm_storage_sync("shared")
            for s in T.unroll(6):
                if tx < 32 >> s:
                    red_1[tx] = red_1[tx] + red_1[tx + (32 >> s)]
                T.tvm_storage_sync("shared")
            if tx == 0:
                B[i] = red_1[0]
'''


def test_attribute_statements_run_on_the_cpu():
    f, m = func_of(CPU)
    rng = np.random.default_rng(31)
    A = rng.standard_normal(16).astype(np.float32)
    B, ref = np.zeros(16, np.float32), np.zeros(16, np.float32)
    build(f, m)(A, B)
    run_reference(f, [A.copy(), ref], module=m)
    np.testing.assert_array_equal(B, A + 1)
    np.testing.assert_array_equal(ref, A + 1)


def test_attribute_statements_run_in_the_thread_interpreter():
    rng = np.random.default_rng(32)
    A = rng.standard_normal((4, 64)).astype(np.float32)
    B = np.full(4, 7, np.float32)
    run_in_threads(GPU, [A, B])
    np.testing.assert_allclose(B, A.astype(np.float64).sum(1), rtol=1e-5, atol=1e-5)
    code = emit_cuda(*func_of(GPU)).code
    # the view names the storage; the volatile attribute reaches its declaration
    assert "__shared__ __align__(16) volatile float red_1[64];" in code
    assert "red_1[(tx + (32 >> 5))]" in code


# TVM's IR before StorageFlatten: A_row is bound to a row of A
BIND = HEAD + '''@T.prim_func
def bound_row(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16,), "float32")):
    A_row = T.Buffer((16,), "float32")
    T.attr([A_row, A], "buffer_bind_scope", T.tvm_tuple(3, 1, 0, 16, dtype="handle"))
    for i in range(16):
        B[i] = A_row[i]
'''


def test_a_buffer_bound_to_a_region_is_a_diagnostic_not_a_crash():
    f, m = func_of(BIND)
    with pytest.raises(TirkitError) as e:
        build(f, m)
    (d,) = e.value.diagnostics
    assert d.code == "codegen/unsupported" and "buffer_bind_scope" in d.message
    assert d.span.line == 7
