"""An element-wise add bound to CUDA threads."""
from tvm.script import tir as T


@T.prim_func
def gpu_add(
    A: T.Buffer((4096,), "float32"),
    B: T.Buffer((4096,), "float32"),
    C: T.Buffer((4096,), "float32"),
):
    T.func_attr({"global_symbol": "gpu_add", "tir.noalias": True})
    for bx in T.thread_binding(32, thread="blockIdx.x"):
        for tx in T.thread_binding(128, thread="threadIdx.x"):
            with T.block("C"):
                vi = T.axis.spatial(4096, bx * 128 + tx)
                T.reads(A[vi], B[vi])
                T.writes(C[vi])
                C[vi] = A[vi] + B[vi]
