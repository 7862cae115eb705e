"""Vector loads and stores: each thread moves four floats at once into shared memory, then
writes its neighbour's four, scaled (a barrier between, inserted by the code generator)."""
from tvm.script import tir as T


@T.prim_func
def gpu_shift_vec(A: T.Buffer((1024,), "float32"), B: T.Buffer((1024,), "float32")):
    T.func_attr({"global_symbol": "gpu_shift_vec", "tir.noalias": True})
    S = T.alloc_buffer((256,), "float32", scope="shared")
    for bx in T.thread_binding(4, thread="blockIdx.x"):
        for tx in T.thread_binding(64, thread="threadIdx.x"):
            for v in T.vectorized(4):
                S[tx * 4 + v] = A[bx * 256 + tx * 4 + v]
            for v in T.vectorized(4):
                B[bx * 256 + tx * 4 + v] = S[(tx + 1) % 64 * 4 + v] * T.float32(2)
