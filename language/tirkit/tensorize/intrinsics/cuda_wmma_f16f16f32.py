# name: cuda.wmma.m16n16k16_f16f16f32
# label: CUDA wmma (f16·f16→f32, 16x16x16)
# targets: cuda-sm70
# tvm: wmma_sync_16x16x16_f16f16f32
# ops-per-cycle: 1024
"""One warp's `nvcuda::wmma::mma_sync` on 16x16x16 tiles: C (f32) += A (f16) · B (f16).

One desc/impl pair for the whole tile update, where TVM splits it into four intrinsics
(wmma_load_16x16x16_f16_a/b, wmma_fill_16x16x16_f32, wmma_sync_16x16x16_f16f16f32,
wmma_store_16x16x16_f32_global) applied to blocks that a schedule first stages into
`wmma.matrix_a`/`wmma.matrix_b`/`wmma.accumulator` buffers with cache_read/cache_write.
Here the operands are the block's own (global or shared) buffers, so that the mapping and
auto_tensorize work on a plain GEMM block: the impl declares its three fragments, loads A,
B and the current C tile into them, multiplies and stores C back. Keeping C in an
accumulator across the K loop (TVM's split form) saves a load and a store per step; this
form trades that for needing no staging schedule. The lanes of a warp store and load
different parts of a tile, so a `__syncwarp()` (`T.tvm_storage_sync("warp")`) orders the
C tile's previous writes before its load, and its load before its store. The operands are strided views (`strides`
below): their row strides are the source buffers', so no packing is needed when the
block's A, B and C are row-major in (i, k), (k, j), (i, j). All 32 threads of a warp run
the calls with the same arguments (bind the tensorized block's loops to blockIdx or
threadIdx.y, under a threadIdx.x of 32)."""
from tvm.script import tirx as T


@T.prim_func(s_tir=True)
def desc(
    A: T.Buffer((16, 16), "float16", strides=("sa", 1), offset_factor=1),
    B: T.Buffer((16, 16), "float16", strides=("sb", 1), offset_factor=1),
    C: T.Buffer((16, 16), "float32", strides=("sc", 1), offset_factor=1),
):
    with T.sblock("root"):
        T.reads(C[0:16, 0:16], A[0:16, 0:16], B[0:16, 0:16])
        T.writes(C[0:16, 0:16])
        for i, j, k in T.grid(16, 16, 16):
            with T.sblock("update"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                C[vi, vj] = C[vi, vj] + T.Cast("float32", A[vi, vk]) * T.Cast("float32", B[vk, vj])


@T.prim_func(s_tir=True)
def impl(
    A: T.Buffer((16, 16), "float16", strides=("sa", 1), offset_factor=1),
    B: T.Buffer((16, 16), "float16", strides=("sb", 1), offset_factor=1),
    C: T.Buffer((16, 16), "float32", strides=("sc", 1), offset_factor=1),
):
    with T.sblock("root"):
        T.reads(C[0:16, 0:16], A[0:16, 0:16], B[0:16, 0:16])
        T.writes(C[0:16, 0:16])
        A_frag = T.alloc_buffer((16, 16), "float16", scope="wmma.matrix_a")
        B_frag = T.alloc_buffer((16, 16), "float16", scope="wmma.matrix_b")
        C_frag = T.alloc_buffer((16, 16), "float32", scope="wmma.accumulator")
        T.evaluate(T.tvm_load_matrix_sync(A_frag.data, 16, 16, 16, 0, T.tvm_access_ptr(T.type_annotation("float16"), A.data, A.elem_offset, 256, 1), A.strides[0], "row_major"))
        T.evaluate(T.tvm_load_matrix_sync(B_frag.data, 16, 16, 16, 0, T.tvm_access_ptr(T.type_annotation("float16"), B.data, B.elem_offset, 256, 1), B.strides[0], "row_major"))
        T.evaluate(T.tvm_storage_sync("warp"))
        T.evaluate(T.tvm_load_matrix_sync(C_frag.data, 16, 16, 16, 0, T.tvm_access_ptr(T.type_annotation("float32"), C.data, C.elem_offset, 256, 1), C.strides[0], "row_major"))
        T.evaluate(T.tvm_mma_sync(C_frag.data, 0, A_frag.data, 0, B_frag.data, 0, C_frag.data, 0))
        T.evaluate(T.tvm_storage_sync("warp"))
        T.evaluate(T.tvm_store_matrix_sync(C_frag.data, 16, 16, 16, 0, T.tvm_access_ptr(T.type_annotation("float32"), C.data, C.elem_offset, 256, 2), C.strides[0], "row_major"))
