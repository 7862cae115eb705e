"""A hand-scheduled fp32 matmul for CPUs without AVX-512 (16 vector registers of 8 floats),
C = A @ B with 1024 x 1024 matrices.

Schedule: 16-column panels of C run in parallel.  Each panel first copies its 1024 x 16
strip of B into a contiguous buffer (`B_pack`: B's rows are 4 KB apart, so reading the strip
in place touches a new page at every k); then blocks of 4 rows accumulate in a 4 x 16 local
tile (8 ymm accumulators, unrolled over the 4 rows, the 16 columns vectorized) over the
whole k loop, and the tile is written back to C.  `matmul_1024_scheduled.py` is the same
matmul with a 4 x 64 tile, which needs the 32 registers of AVX-512.

    tirkit bench examples/matmul_1024_avx2.py --threads 1
"""
from tvm.script import tir as T


@T.prim_func
def matmul_1024_avx2(
    A: T.Buffer((1024, 1024), "float32"),
    B: T.Buffer((1024, 1024), "float32"),
    C: T.Buffer((1024, 1024), "float32"),
):
    T.func_attr({"global_symbol": "matmul_1024_avx2", "tir.noalias": True})
    B_pack = T.alloc_buffer((64, 1024, 16), "float32")
    C_local = T.alloc_buffer((1024, 1024), "float32", scope="local")
    for j_0 in T.parallel(64):
        for k in range(1024):
            for j_1 in T.vectorized(16):
                with T.block("B_pack"):
                    vj0, vk, vj1 = T.axis.remap("SSS", [j_0, k, j_1])
                    T.reads(B[vk, vj0 * 16 + vj1])
                    T.writes(B_pack[vj0, vk, vj1])
                    B_pack[vj0, vk, vj1] = B[vk, vj0 * 16 + vj1]
        for i_0 in range(256):
            for i_1 in T.unroll(4):
                for j_1 in T.vectorized(16):
                    with T.block("C_init"):
                        vi = T.axis.spatial(1024, i_0 * 4 + i_1)
                        vj = T.axis.spatial(1024, j_0 * 16 + j_1)
                        T.reads()
                        T.writes(C_local[vi, vj])
                        C_local[vi, vj] = T.float32(0)
            for k in range(1024):
                for i_1 in T.unroll(4):
                    for j_1 in T.vectorized(16):
                        with T.block("C_update"):
                            vi = T.axis.spatial(1024, i_0 * 4 + i_1)
                            vj0 = T.axis.spatial(64, j_0)
                            vj1 = T.axis.spatial(16, j_1)
                            vk = T.axis.reduce(1024, k)
                            T.reads(C_local[vi, vj0 * 16 + vj1], A[vi, vk], B_pack[vj0, vk, vj1])
                            T.writes(C_local[vi, vj0 * 16 + vj1])
                            C_local[vi, vj0 * 16 + vj1] = C_local[vi, vj0 * 16 + vj1] + A[vi, vk] * B_pack[vj0, vk, vj1]
            for i_1 in T.unroll(4):
                for j_1 in T.vectorized(16):
                    with T.block("C_store"):
                        vi = T.axis.spatial(1024, i_0 * 4 + i_1)
                        vj = T.axis.spatial(1024, j_0 * 16 + j_1)
                        T.reads(C_local[vi, vj])
                        T.writes(C[vi, vj])
                        C[vi, vj] = C_local[vi, vj]
