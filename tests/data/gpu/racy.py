"""Thread-bound kernels with a data race: every thread of a block writes one shared element,
then every thread reads it (a write-write race between threads with different values)."""
from tvm.script import tir as T


@T.prim_func
def racy_shared_scalar(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32")):
    T.func_attr({"global_symbol": "racy_shared_scalar", "tir.noalias": True})
    S = T.alloc_buffer((1,), "float32", scope="shared")
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        for tx in T.thread_binding(128, thread="threadIdx.x"):
            S[0] = A[bx * 128 + tx]
            B[bx * 128 + tx] = S[0]


@T.prim_func
def racy_global(A: T.Buffer((128,), "float32"), B: T.Buffer((1,), "float32")):
    T.func_attr({"global_symbol": "racy_global", "tir.noalias": True})
    for tx in T.thread_binding(128, thread="threadIdx.x"):
        B[0] = B[0] + A[tx]


@T.prim_func
def racy_neighbour_under_condition(A: T.Buffer((128,), "float32"),
                                   B: T.Buffer((128,), "float32")):
    T.func_attr({"global_symbol": "racy_neighbour_under_condition", "tir.noalias": True})
    S = T.alloc_buffer((128,), "float32", scope="shared")
    for tx in T.thread_binding(128, thread="threadIdx.x"):
        if tx < 64:
            S[tx] = A[tx]
            B[tx] = S[tx + 1]


@T.prim_func
def racy_blocks_overlap(A: T.Buffer((512,), "float32"), B: T.Buffer((256,), "float32")):
    T.func_attr({"global_symbol": "racy_blocks_overlap", "tir.noalias": True})
    for bx in T.thread_binding(4, thread="blockIdx.x"):
        for tx in T.thread_binding(128, thread="threadIdx.x"):
            B[(bx * 64 + tx) % 256] = A[bx * 64 + tx]
