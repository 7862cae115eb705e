"""A hand-scheduled fp32 matmul, C = A @ B with 1024 x 1024 matrices.

Schedule: 64-column panels of C run in parallel; within a panel, blocks of 4 rows accumulate
in a 4 x 64 local tile (cache_write style) whose update is fully unrolled over the 4 rows and
4 x 16 columns, the 16 columns vectorized (one AVX-512 register each), over the whole k loop;
the tile is then written back to C.

    tirkit run examples/matmul_1024_scheduled.py --check
    tirkit bench examples/matmul_1024_scheduled.py --threads 1
"""
from tvm.script import tir as T


@T.prim_func
def matmul_1024(
    A: T.Buffer((1024, 1024), "float32"),
    B: T.Buffer((1024, 1024), "float32"),
    C: T.Buffer((1024, 1024), "float32"),
):
    T.func_attr({"global_symbol": "matmul_1024", "tir.noalias": True})
    C_local = T.alloc_buffer((1024, 1024), "float32", scope="local")
    for j_0 in T.parallel(16):
        for i_0 in range(256):
            for i_1 in T.unroll(4):
                for j_1 in T.unroll(4):
                    for j_2 in T.vectorized(16):
                        with T.block("C_init"):
                            vi = T.axis.spatial(1024, i_0 * 4 + i_1)
                            vj = T.axis.spatial(1024, j_0 * 64 + j_1 * 16 + j_2)
                            T.reads()
                            T.writes(C_local[vi, vj])
                            C_local[vi, vj] = T.float32(0)
            for k in range(1024):
                for i_1 in T.unroll(4):
                    for j_1 in T.unroll(4):
                        for j_2 in T.vectorized(16):
                            with T.block("C_update"):
                                vi = T.axis.spatial(1024, i_0 * 4 + i_1)
                                vj = T.axis.spatial(1024, j_0 * 64 + j_1 * 16 + j_2)
                                vk = T.axis.reduce(1024, k)
                                T.reads(C_local[vi, vj], A[vi, vk], B[vk, vj])
                                T.writes(C_local[vi, vj])
                                C_local[vi, vj] = C_local[vi, vj] + A[vi, vk] * B[vk, vj]
            for i_1 in T.unroll(4):
                for j_1 in T.unroll(4):
                    for j_2 in T.vectorized(16):
                        with T.block("C_store"):
                            vi = T.axis.spatial(1024, i_0 * 4 + i_1)
                            vj = T.axis.spatial(1024, j_0 * 64 + j_1 * 16 + j_2)
                            T.reads(C_local[vi, vj])
                            T.writes(C[vi, vj])
                            C[vi, vj] = C_local[vi, vj]
