"""Multi-level tiled GEMM kernels: shared-memory tiles of A and B, a register (local) tile of C
per thread, virtual threads; an f16 x f16 -> f32 variant and an int8 x int8 -> int32 one."""
from tvm.script import tir as T


@T.prim_func
def gpu_matmul_tiled(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"),
                     C: T.Buffer((64, 64), "float32")):
    T.func_attr({"global_symbol": "gpu_matmul_tiled", "tir.noalias": True})
    A_shared = T.alloc_buffer((64, 64), "float32", scope="shared")
    B_shared = T.alloc_buffer((64, 64), "float32", scope="shared")
    C_local = T.alloc_buffer((64, 64), "float32", scope="local")
    for by in T.thread_binding(2, thread="blockIdx.y"):
        for bx in T.thread_binding(2, thread="blockIdx.x"):
            for vy in T.thread_binding(2, thread="vthread.y"):
                for ty in T.thread_binding(8, thread="threadIdx.y"):
                    for tx in T.thread_binding(8, thread="threadIdx.x"):
                        for i, j in T.grid(2, 4):
                            C_local[by * 32 + vy * 16 + ty * 2 + i, bx * 32 + tx * 4 + j] = T.float32(0)
                        for k_0 in range(8):
                            for f in range(4):
                                A_shared[by * 32 + (f * 64 + ty * 8 + tx) // 8, k_0 * 8 + (f * 64 + ty * 8 + tx) % 8] = A[by * 32 + (f * 64 + ty * 8 + tx) // 8, k_0 * 8 + (f * 64 + ty * 8 + tx) % 8]
                            for f in range(4):
                                B_shared[k_0 * 8 + (f * 64 + ty * 8 + tx) // 32, bx * 32 + (f * 64 + ty * 8 + tx) % 32] = B[k_0 * 8 + (f * 64 + ty * 8 + tx) // 32, bx * 32 + (f * 64 + ty * 8 + tx) % 32]
                            for k_1, i, j in T.grid(8, 2, 4):
                                C_local[by * 32 + vy * 16 + ty * 2 + i, bx * 32 + tx * 4 + j] = C_local[by * 32 + vy * 16 + ty * 2 + i, bx * 32 + tx * 4 + j] + A_shared[by * 32 + vy * 16 + ty * 2 + i, k_0 * 8 + k_1] * B_shared[k_0 * 8 + k_1, bx * 32 + tx * 4 + j]
                        for i, j in T.grid(2, 4):
                            C[by * 32 + vy * 16 + ty * 2 + i, bx * 32 + tx * 4 + j] = C_local[by * 32 + vy * 16 + ty * 2 + i, bx * 32 + tx * 4 + j]


@T.prim_func
def gpu_matmul_f16(A: T.Buffer((32, 32), "float16"), B: T.Buffer((32, 32), "float16"),
                   C: T.Buffer((32, 32), "float32")):
    T.func_attr({"global_symbol": "gpu_matmul_f16", "tir.noalias": True})
    for bx in T.thread_binding(4, thread="blockIdx.x"):
        for tx in T.thread_binding(256, thread="threadIdx.x"):
            with T.block("init"):
                vi = T.axis.spatial(32, bx * 8 + tx // 32)
                vj = T.axis.spatial(32, tx % 32)
                C[vi, vj] = T.float32(0)
            for k in range(32):
                with T.block("C"):
                    vi = T.axis.spatial(32, bx * 8 + tx // 32)
                    vj = T.axis.spatial(32, tx % 32)
                    vk = T.axis.reduce(32, k)
                    C[vi, vj] = C[vi, vj] + T.Cast("float32", A[vi, vk]) * T.Cast("float32", B[vk, vj])


@T.prim_func
def gpu_matmul_i8(A: T.Buffer((32, 32), "int8"), B: T.Buffer((32, 32), "int8"),
                  C: T.Buffer((32, 32), "int32")):
    T.func_attr({"global_symbol": "gpu_matmul_i8", "tir.noalias": True})
    for bx in T.thread_binding(4, thread="blockIdx.x"):
        for tx in T.thread_binding(256, thread="threadIdx.x"):
            C[bx * 8 + tx // 32, tx % 32] = 0
            for k in range(32):
                C[bx * 8 + tx // 32, tx % 32] = C[bx * 8 + tx // 32, tx % 32] + T.Cast("int32", A[bx * 8 + tx // 32, k]) * T.Cast("int32", B[k, tx % 32])


@T.prim_func
def gpu_softplus_bf16(A: T.Buffer((1024,), "bfloat16"), B: T.Buffer((1024,), "bfloat16")):
    T.func_attr({"global_symbol": "gpu_softplus_bf16", "tir.noalias": True})
    for bx in T.thread_binding(8, thread="blockIdx.x"):
        for tx in T.thread_binding(128, thread="threadIdx.x"):
            B[bx * 128 + tx] = T.log(T.exp(A[bx * 128 + tx]) + T.bfloat16(1))
