"""fp16 GEMM on tensor cores through TVM's wmma builtins (f16 inputs, f32 accumulation):
a 64x64 tile per thread block of four warps, each warp 2x2 16x16x16 fragments, A and B
staged in shared memory 32 deep in K.  gpu_wmma_gemm_64 is checked in the thread
interpreter; gpu_wmma_gemm_4096 is the same code at the benchmark size."""
from tvm.script import tir as T


@T.prim_func
def gpu_wmma_gemm_64(A: T.Buffer((64, 64), "float16"), B: T.Buffer((64, 64), "float16"),
        C: T.Buffer((64, 64), "float32")):
    T.func_attr({"global_symbol": "gpu_wmma_gemm_64", "tir.noalias": True})
    A_shared = T.alloc_buffer((64, 32), "float16", scope="shared")
    B_shared = T.alloc_buffer((32, 64), "float16", scope="shared")
    A_frag = T.alloc_buffer((32, 16), "float16", scope="wmma.matrix_a")
    B_frag = T.alloc_buffer((16, 32), "float16", scope="wmma.matrix_b")
    C_frag = T.alloc_buffer((32, 32), "float32", scope="wmma.accumulator")
    for by in T.thread_binding(1, thread="blockIdx.y"):
        for bx in T.thread_binding(1, thread="blockIdx.x"):
            for ty in T.thread_binding(4, thread="threadIdx.y"):
                for tx in T.thread_binding(32, thread="threadIdx.x"):
                    for f in range(4):
                        T.evaluate(T.tvm_fill_fragment(C_frag.data, 16, 16, 16, f, T.float32(0)))
                    for k0 in range(2):
                        for i in range(16):
                            A_shared[(i * 128 + ty * 32 + tx) // 32, (i * 128 + ty * 32 + tx) % 32] = A[by * 64 + (i * 128 + ty * 32 + tx) // 32, k0 * 32 + (i * 128 + ty * 32 + tx) % 32]
                        for i in range(16):
                            B_shared[(i * 128 + ty * 32 + tx) // 64, (i * 128 + ty * 32 + tx) % 64] = B[k0 * 32 + (i * 128 + ty * 32 + tx) // 64, bx * 64 + (i * 128 + ty * 32 + tx) % 64]
                        for k1 in range(2):
                            for f in range(2):
                                T.evaluate(T.tvm_load_matrix_sync(A_frag.data, 16, 16, 16, f, T.tvm_access_ptr(T.type_annotation("float16"), A_shared.data, (ty // 2 * 32 + f * 16) * 32 + k1 * 16, 512, 1), 32, "row_major"))
                            for f in range(2):
                                T.evaluate(T.tvm_load_matrix_sync(B_frag.data, 16, 16, 16, f, T.tvm_access_ptr(T.type_annotation("float16"), B_shared.data, k1 * 1024 + ty % 2 * 32 + f * 16, 1024, 1), 64, "row_major"))
                            for fi, fj in T.grid(2, 2):
                                T.evaluate(T.tvm_mma_sync(C_frag.data, fi * 2 + fj, A_frag.data, fi, B_frag.data, fj, C_frag.data, fi * 2 + fj))
                    for fi, fj in T.grid(2, 2):
                        T.evaluate(T.tvm_store_matrix_sync(C_frag.data, 16, 16, 16, fi * 2 + fj, T.tvm_access_ptr(T.type_annotation("float32"), C.data, (by * 64 + ty // 2 * 32 + fi * 16) * 64 + bx * 64 + ty % 2 * 32 + fj * 16, 1024, 2), 64, "row_major"))


@T.prim_func
def gpu_wmma_gemm_4096(A: T.Buffer((4096, 4096), "float16"), B: T.Buffer((4096, 4096), "float16"),
        C: T.Buffer((4096, 4096), "float32")):
    T.func_attr({"global_symbol": "gpu_wmma_gemm_4096", "tir.noalias": True})
    A_shared = T.alloc_buffer((64, 32), "float16", scope="shared")
    B_shared = T.alloc_buffer((32, 64), "float16", scope="shared")
    A_frag = T.alloc_buffer((32, 16), "float16", scope="wmma.matrix_a")
    B_frag = T.alloc_buffer((16, 32), "float16", scope="wmma.matrix_b")
    C_frag = T.alloc_buffer((32, 32), "float32", scope="wmma.accumulator")
    for by in T.thread_binding(64, thread="blockIdx.y"):
        for bx in T.thread_binding(64, thread="blockIdx.x"):
            for ty in T.thread_binding(4, thread="threadIdx.y"):
                for tx in T.thread_binding(32, thread="threadIdx.x"):
                    for f in range(4):
                        T.evaluate(T.tvm_fill_fragment(C_frag.data, 16, 16, 16, f, T.float32(0)))
                    for k0 in range(128):
                        for i in range(16):
                            A_shared[(i * 128 + ty * 32 + tx) // 32, (i * 128 + ty * 32 + tx) % 32] = A[by * 64 + (i * 128 + ty * 32 + tx) // 32, k0 * 32 + (i * 128 + ty * 32 + tx) % 32]
                        for i in range(16):
                            B_shared[(i * 128 + ty * 32 + tx) // 64, (i * 128 + ty * 32 + tx) % 64] = B[k0 * 32 + (i * 128 + ty * 32 + tx) // 64, bx * 64 + (i * 128 + ty * 32 + tx) % 64]
                        for k1 in range(2):
                            for f in range(2):
                                T.evaluate(T.tvm_load_matrix_sync(A_frag.data, 16, 16, 16, f, T.tvm_access_ptr(T.type_annotation("float16"), A_shared.data, (ty // 2 * 32 + f * 16) * 32 + k1 * 16, 512, 1), 32, "row_major"))
                            for f in range(2):
                                T.evaluate(T.tvm_load_matrix_sync(B_frag.data, 16, 16, 16, f, T.tvm_access_ptr(T.type_annotation("float16"), B_shared.data, k1 * 1024 + ty % 2 * 32 + f * 16, 1024, 1), 64, "row_major"))
                            for fi, fj in T.grid(2, 2):
                                T.evaluate(T.tvm_mma_sync(C_frag.data, fi * 2 + fj, A_frag.data, fi, B_frag.data, fj, C_frag.data, fi * 2 + fj))
                    for fi, fj in T.grid(2, 2):
                        T.evaluate(T.tvm_store_matrix_sync(C_frag.data, 16, 16, 16, fi * 2 + fj, T.tvm_access_ptr(T.type_annotation("float32"), C.data, (by * 64 + ty // 2 * 32 + fi * 16) * 4096 + bx * 64 + ty % 2 * 32 + fj * 16, 65536, 2), 4096, "row_major"))
