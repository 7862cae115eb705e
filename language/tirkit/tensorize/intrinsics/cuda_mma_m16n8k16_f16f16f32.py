# name: cuda.mma.m16n8k16_f16f16f32
# label: CUDA mma.sync (f16·f16→f32, m16n8k16)
# targets: cuda-sm80
# ops-per-cycle: 1024
"""One warp's PTX `mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32` (`T.ptx_mma`) on a
16x8x16 tile: C (f32, 16x8) += A (f16, 16x16) · B (f16, 16x8).

TVM's mma intrinsics (mma_f16f16f32 and its ldmatrix/fill/store companions) work on
`warp`-scope buffers that a schedule stages first and a later pass lowers to registers;
they are 16x16x16 (two m16n8k16 instructions). This one is a single desc/impl pair for
one instruction on the block's own buffers, so that the mapping and auto_tensorize work
on a plain GEMM block: the impl launches the warp's 32 lanes (`threadIdx.x`, as TVM's mma
impls do), each lane loads its 8 A, 4 B and 4 C registers in PTX's fragment layout (lane
= 4 * g + t: A row g + 8 * (r // 2 % 2), column 2 * t + r % 2 + 8 * (r // 4); B row
2 * t + r % 2 + 8 * (r // 2), column g; C row g + 8 * (r // 2), column 2 * t + r % 2),
issues the instruction and stores its 4 C registers back. Each lane reads and writes only
its own C elements, so only the block's init (the tile written before the lanes exist)
needs ordering: the `__syncwarp()` first. The operands are read element by element, so
any layout serves (`strides` below: taken in place). Keeping C in registers across the K
loop would save its loads and stores; that needs the staging schedule this form avoids."""
from tvm.script import tirx as T


@T.prim_func(s_tir=True)
def desc(
    A: T.Buffer((16, 16), "float16", strides=("sa", 1), offset_factor=1),
    B: T.Buffer((16, 8), "float16", strides=("sb", 1), offset_factor=1),
    C: T.Buffer((16, 8), "float32", strides=("sc", 1), offset_factor=1),
):
    with T.sblock("root"):
        T.reads(C[0:16, 0:8], A[0:16, 0:16], B[0:16, 0:8])
        T.writes(C[0:16, 0:8])
        for i, j, k in T.grid(16, 8, 16):
            with T.sblock("update"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                C[vi, vj] = C[vi, vj] + T.Cast("float32", A[vi, vk]) * T.Cast("float32", B[vk, vj])


@T.prim_func(s_tir=True)
def impl(
    A: T.Buffer((16, 16), "float16", strides=("sa", 1), offset_factor=1),
    B: T.Buffer((16, 8), "float16", strides=("sb", 1), offset_factor=1),
    C: T.Buffer((16, 8), "float32", strides=("sc", 1), offset_factor=1),
):
    with T.sblock("root"):
        T.reads(C[0:16, 0:8], A[0:16, 0:16], B[0:16, 0:8])
        T.writes(C[0:16, 0:8])
        tx = T.env_thread("threadIdx.x")
        T.launch_thread(tx, 32)
        A_reg = T.decl_buffer((8,), "float16", scope="local")
        B_reg = T.decl_buffer((4,), "float16", scope="local")
        C_reg = T.decl_buffer((4,), "float32", scope="local")
        T.evaluate(T.tvm_storage_sync("warp"))
        for r in range(8):
            A_reg[r] = A[tx // 4 + r // 2 % 2 * 8, tx % 4 * 2 + r % 2 + r // 4 * 8]
        for r in range(4):
            B_reg[r] = B[tx % 4 * 2 + r % 2 + r // 2 * 8, tx // 4]
        for r in range(4):
            C_reg[r] = C[tx // 4 + r // 2 * 8, tx % 4 * 2 + r % 2]
        T.evaluate(T.ptx_mma("m16n8k16", "row", "col", "fp16", "fp16", "fp32", A_reg.data, 0, B_reg.data, 0, C_reg.data, 0, False))
        for r in range(4):
            C[tx // 4 + r // 2 * 8, tx % 4 * 2 + r % 2] = C_reg[r]
