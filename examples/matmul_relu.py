"""A matmul followed by a ReLU, in the classic TVMScript spelling."""
from tvm.script import tir as T


@T.prim_func
def matmul_relu(
    A: T.Buffer((256, 512), "float32"),
    B: T.Buffer((512, 128), "float32"),
    D: T.Buffer((256, 128), "float32"),
):
    T.func_attr({"global_symbol": "matmul_relu", "tir.noalias": True})
    C = T.alloc_buffer((256, 128), "float32")
    for i, j, k in T.grid(256, 128, 512):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.reads(A[vi, vk], B[vk, vj])
            T.writes(C[vi, vj])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
    for i, j in T.grid(256, 128):
        with T.block("relu"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(C[vi, vj])
            T.writes(D[vi, vj])
            # clamp negatives to zero
            D[vi, vj] = T.max(C[vi, vj], T.float32(0))
