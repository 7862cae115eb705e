"""A row sum: one thread block per row, a tree reduction in shared memory."""
from tvm.script import tir as T


@T.prim_func
def gpu_row_sum(A: T.Buffer((64, 128), "float32"), B: T.Buffer((64,), "float32")):
    T.func_attr({"global_symbol": "gpu_row_sum", "tir.noalias": True})
    S = T.alloc_buffer((128,), "float32", scope="shared")
    for bx in T.thread_binding(64, thread="blockIdx.x"):
        for tx in T.thread_binding(128, thread="threadIdx.x"):
            S[tx] = A[bx, tx]
            for s in range(7):
                if tx < T.shift_right(64, s):
                    S[tx] = S[tx] + S[tx + T.shift_right(64, s)]
            if tx == 0:
                B[bx] = S[0]
