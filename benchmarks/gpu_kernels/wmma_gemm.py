"""fp16 GEMM on tensor cores through TVM's wmma builtins (f16 inputs, f32 accumulation):
a 128x128 tile of C per thread block of eight warps (2 x 4), each warp 4 x 2 fragments of
16x16x16; A and B staged in shared memory 32 deep in K with 16-byte vector copies, rows
padded by 8 halves against bank conflicts.  gpu_wmma_gemm_128 is checked in the thread
interpreter; gpu_wmma_gemm_4096 is the same code at the benchmark size."""
from tvm.script import tir as T


@T.prim_func
def gpu_wmma_gemm_128(A: T.Buffer((128, 128), "float16"), B: T.Buffer((128, 128), "float16"),
        C: T.Buffer((128, 128), "float32")):
    T.func_attr({"global_symbol": "gpu_wmma_gemm_128", "tir.noalias": True})
    A_shared = T.alloc_buffer((128, 40), "float16", scope="shared")
    B_shared = T.alloc_buffer((32, 136), "float16", scope="shared")
    A_frag = T.alloc_buffer((64, 16), "float16", scope="wmma.matrix_a")
    B_frag = T.alloc_buffer((16, 32), "float16", scope="wmma.matrix_b")
    C_frag = T.alloc_buffer((64, 32), "float32", scope="wmma.accumulator")
    for by in T.thread_binding(1, thread="blockIdx.y"):
        for bx in T.thread_binding(1, thread="blockIdx.x"):
            for ty in T.thread_binding(8, thread="threadIdx.y"):
                for tx in T.thread_binding(32, thread="threadIdx.x"):
                    for f in range(8):
                        T.evaluate(T.tvm_fill_fragment(C_frag.data, 16, 16, 16, f, T.float32(0)))
                    for k0 in range(4):
                        for i in range(2):
                            for v in T.vectorized(8):
                                A_shared[(i * 256 + ty * 32 + tx) // 4, (i * 256 + ty * 32 + tx) % 4 * 8 + v] = A[by * 128 + (i * 256 + ty * 32 + tx) // 4, k0 * 32 + (i * 256 + ty * 32 + tx) % 4 * 8 + v]
                        for i in range(2):
                            for v in T.vectorized(8):
                                B_shared[(i * 256 + ty * 32 + tx) // 16, (i * 256 + ty * 32 + tx) % 16 * 8 + v] = B[k0 * 32 + (i * 256 + ty * 32 + tx) // 16, bx * 128 + (i * 256 + ty * 32 + tx) % 16 * 8 + v]
                        for k1 in range(2):
                            for fi in range(4):
                                T.evaluate(T.tvm_load_matrix_sync(A_frag.data, 16, 16, 16, fi, T.tvm_access_ptr(T.type_annotation("float16"), A_shared.data, (ty // 4 * 64 + fi * 16) * 40 + k1 * 16, 640, 1), 40, "row_major"))
                            for fj in range(2):
                                T.evaluate(T.tvm_load_matrix_sync(B_frag.data, 16, 16, 16, fj, T.tvm_access_ptr(T.type_annotation("float16"), B_shared.data, k1 * 2176 + ty % 4 * 32 + fj * 16, 2176, 1), 136, "row_major"))
                            for fi, fj in T.grid(4, 2):
                                T.evaluate(T.tvm_mma_sync(C_frag.data, fi * 2 + fj, A_frag.data, fi, B_frag.data, fj, C_frag.data, fi * 2 + fj))
                    for fi, fj in T.grid(4, 2):
                        T.evaluate(T.tvm_store_matrix_sync(C_frag.data, 16, 16, 16, fi * 2 + fj, T.tvm_access_ptr(T.type_annotation("float32"), C.data, (by * 128 + ty // 4 * 64 + fi * 16) * 128 + bx * 128 + ty % 4 * 32 + fj * 16, 2048, 2), 128, "row_major"))


@T.prim_func
def gpu_wmma_gemm_4096(A: T.Buffer((4096, 4096), "float16"), B: T.Buffer((4096, 4096), "float16"),
        C: T.Buffer((4096, 4096), "float32")):
    T.func_attr({"global_symbol": "gpu_wmma_gemm_4096", "tir.noalias": True})
    A_shared = T.alloc_buffer((128, 40), "float16", scope="shared")
    B_shared = T.alloc_buffer((32, 136), "float16", scope="shared")
    A_frag = T.alloc_buffer((64, 16), "float16", scope="wmma.matrix_a")
    B_frag = T.alloc_buffer((16, 32), "float16", scope="wmma.matrix_b")
    C_frag = T.alloc_buffer((64, 32), "float32", scope="wmma.accumulator")
    for by in T.thread_binding(32, thread="blockIdx.y"):
        for bx in T.thread_binding(32, thread="blockIdx.x"):
            for ty in T.thread_binding(8, thread="threadIdx.y"):
                for tx in T.thread_binding(32, thread="threadIdx.x"):
                    for f in range(8):
                        T.evaluate(T.tvm_fill_fragment(C_frag.data, 16, 16, 16, f, T.float32(0)))
                    for k0 in range(128):
                        for i in range(2):
                            for v in T.vectorized(8):
                                A_shared[(i * 256 + ty * 32 + tx) // 4, (i * 256 + ty * 32 + tx) % 4 * 8 + v] = A[by * 128 + (i * 256 + ty * 32 + tx) // 4, k0 * 32 + (i * 256 + ty * 32 + tx) % 4 * 8 + v]
                        for i in range(2):
                            for v in T.vectorized(8):
                                B_shared[(i * 256 + ty * 32 + tx) // 16, (i * 256 + ty * 32 + tx) % 16 * 8 + v] = B[k0 * 32 + (i * 256 + ty * 32 + tx) // 16, bx * 128 + (i * 256 + ty * 32 + tx) % 16 * 8 + v]
                        for k1 in range(2):
                            for fi in range(4):
                                T.evaluate(T.tvm_load_matrix_sync(A_frag.data, 16, 16, 16, fi, T.tvm_access_ptr(T.type_annotation("float16"), A_shared.data, (ty // 4 * 64 + fi * 16) * 40 + k1 * 16, 640, 1), 40, "row_major"))
                            for fj in range(2):
                                T.evaluate(T.tvm_load_matrix_sync(B_frag.data, 16, 16, 16, fj, T.tvm_access_ptr(T.type_annotation("float16"), B_shared.data, k1 * 2176 + ty % 4 * 32 + fj * 16, 2176, 1), 136, "row_major"))
                            for fi, fj in T.grid(4, 2):
                                T.evaluate(T.tvm_mma_sync(C_frag.data, fi * 2 + fj, A_frag.data, fi, B_frag.data, fj, C_frag.data, fi * 2 + fj))
                    for fi, fj in T.grid(4, 2):
                        T.evaluate(T.tvm_store_matrix_sync(C_frag.data, 16, 16, 16, fi * 2 + fj, T.tvm_access_ptr(T.type_annotation("float32"), C.data, (by * 128 + ty // 4 * 64 + fi * 16) * 4096 + bx * 128 + ty % 4 * 32 + fj * 16, 65536, 2), 4096, "row_major"))
