"""fp32 GEMM with multi-level tiling for the GPU: a 128x128 tile of C per block of 16x16
threads, an 8x8 register (local) tile per thread, 8-deep shared-memory tiles of A (stored
transposed) and B filled with float4 loads.  gpu_gemm_128 is the same code at 128^3 (checked
on the CPU by the thread interpreter); gpu_gemm_4096 is the benchmark size."""
from tvm.script import tir as T


@T.prim_func
def gpu_gemm_128(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"),
                C: T.Buffer((128, 128), "float32")):
    T.func_attr({"global_symbol": "gpu_gemm_128", "tir.noalias": True})
    A_shared = T.alloc_buffer((8, 256), "float32", scope="shared")
    B_shared = T.alloc_buffer((8, 256), "float32", scope="shared")
    C_local = T.alloc_buffer((128, 128), "float32", scope="local")
    for by in T.thread_binding(1, thread="blockIdx.y"):
        for bx in T.thread_binding(1, thread="blockIdx.x"):
            for ty in T.thread_binding(16, thread="threadIdx.y"):
                for tx in T.thread_binding(16, thread="threadIdx.x"):
                    for i, j in T.grid(8, 8):
                        C_local[by * 128 + ty * 8 + i, bx * 128 + tx * 8 + j] = T.float32(0)
                    for k_0 in range(16):
                        for v in T.vectorized(4):
                            A_shared[(ty * 16 + tx) % 2 * 4 + v, by * 128 + (ty * 16 + tx) // 2] = A[by * 128 + (ty * 16 + tx) // 2, k_0 * 8 + (ty * 16 + tx) % 2 * 4 + v]
                        for v in T.vectorized(4):
                            B_shared[(ty * 16 + tx) // 32, bx * 128 + (ty * 16 + tx) % 32 * 4 + v] = B[k_0 * 8 + (ty * 16 + tx) // 32, bx * 128 + (ty * 16 + tx) % 32 * 4 + v]
                        for k_1 in T.unroll(8):
                            for i in T.unroll(8):
                                for j in T.unroll(8):
                                    C_local[by * 128 + ty * 8 + i, bx * 128 + tx * 8 + j] = C_local[by * 128 + ty * 8 + i, bx * 128 + tx * 8 + j] + A_shared[k_1, by * 128 + ty * 8 + i] * B_shared[k_1, bx * 128 + tx * 8 + j]
                    for i, j in T.grid(8, 8):
                        C[by * 128 + ty * 8 + i, bx * 128 + tx * 8 + j] = C_local[by * 128 + ty * 8 + i, bx * 128 + tx * 8 + j]


@T.prim_func
def gpu_gemm_4096(A: T.Buffer((4096, 4096), "float32"), B: T.Buffer((4096, 4096), "float32"),
                C: T.Buffer((4096, 4096), "float32")):
    T.func_attr({"global_symbol": "gpu_gemm_4096", "tir.noalias": True})
    A_shared = T.alloc_buffer((8, 4096), "float32", scope="shared")
    B_shared = T.alloc_buffer((8, 4096), "float32", scope="shared")
    C_local = T.alloc_buffer((4096, 4096), "float32", scope="local")
    for by in T.thread_binding(32, thread="blockIdx.y"):
        for bx in T.thread_binding(32, thread="blockIdx.x"):
            for ty in T.thread_binding(16, thread="threadIdx.y"):
                for tx in T.thread_binding(16, thread="threadIdx.x"):
                    for i, j in T.grid(8, 8):
                        C_local[by * 128 + ty * 8 + i, bx * 128 + tx * 8 + j] = T.float32(0)
                    for k_0 in range(512):
                        for v in T.vectorized(4):
                            A_shared[(ty * 16 + tx) % 2 * 4 + v, by * 128 + (ty * 16 + tx) // 2] = A[by * 128 + (ty * 16 + tx) // 2, k_0 * 8 + (ty * 16 + tx) % 2 * 4 + v]
                        for v in T.vectorized(4):
                            B_shared[(ty * 16 + tx) // 32, bx * 128 + (ty * 16 + tx) % 32 * 4 + v] = B[k_0 * 8 + (ty * 16 + tx) // 32, bx * 128 + (ty * 16 + tx) % 32 * 4 + v]
                        for k_1 in T.unroll(8):
                            for i in T.unroll(8):
                                for j in T.unroll(8):
                                    C_local[by * 128 + ty * 8 + i, bx * 128 + tx * 8 + j] = C_local[by * 128 + ty * 8 + i, bx * 128 + tx * 8 + j] + A_shared[k_1, by * 128 + ty * 8 + i] * B_shared[k_1, bx * 128 + tx * 8 + j]
                    for i, j in T.grid(8, 8):
                        C[by * 128 + ty * 8 + i, bx * 128 + tx * 8 + j] = C_local[by * 128 + ty * 8 + i, bx * 128 + tx * 8 + j]
