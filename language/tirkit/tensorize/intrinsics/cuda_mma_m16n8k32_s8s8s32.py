# name: cuda.mma.m16n8k32_s8s8s32
# label: CUDA mma.sync (s8·s8→s32, m16n8k32)
# targets: cuda-sm80
# ops-per-cycle: 2048
"""One warp's PTX `mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32` (`T.ptx_mma`) on a
16x8x32 tile: C (s32, 16x8) += A (s8, 16x32) · B (s8, 32x8), the int8 companion of
cuda.mma.m16n8k16_f16f16f32 and built the same way: the impl launches the warp's 32 lanes,
each lane loads its 16 A, 8 B and 4 C registers in PTX's fragment layout (lane = 4 * g + t:
A row g + 8 * (r // 4 % 2), column 4 * t + r % 4 + 16 * (r // 8); B row 4 * t + r % 4 +
16 * (r // 4), column g; C row g + 8 * (r // 2), column 2 * t + r % 2), issues the
instruction and stores its 4 C registers back, after a `__syncwarp()` that orders the
block's init before the lanes' loads.  The int32 sum wraps, as the desc's does."""
from tvm.script import tirx as T


@T.prim_func(s_tir=True)
def desc(
    A: T.Buffer((16, 32), "int8", strides=("sa", 1), offset_factor=1),
    B: T.Buffer((32, 8), "int8", strides=("sb", 1), offset_factor=1),
    C: T.Buffer((16, 8), "int32", strides=("sc", 1), offset_factor=1),
):
    with T.sblock("root"):
        T.reads(C[0:16, 0:8], A[0:16, 0:32], B[0:32, 0:8])
        T.writes(C[0:16, 0:8])
        for i, j, k in T.grid(16, 8, 32):
            with T.sblock("update"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                C[vi, vj] = C[vi, vj] + T.Cast("int32", A[vi, vk]) * T.Cast("int32", B[vk, vj])


@T.prim_func(s_tir=True)
def impl(
    A: T.Buffer((16, 32), "int8", strides=("sa", 1), offset_factor=1),
    B: T.Buffer((32, 8), "int8", strides=("sb", 1), offset_factor=1),
    C: T.Buffer((16, 8), "int32", strides=("sc", 1), offset_factor=1),
):
    with T.sblock("root"):
        T.reads(C[0:16, 0:8], A[0:16, 0:32], B[0:32, 0:8])
        T.writes(C[0:16, 0:8])
        tx = T.env_thread("threadIdx.x")
        T.launch_thread(tx, 32)
        A_reg = T.decl_buffer((16,), "int8", scope="local")
        B_reg = T.decl_buffer((8,), "int8", scope="local")
        C_reg = T.decl_buffer((4,), "int32", scope="local")
        T.evaluate(T.tvm_storage_sync("warp"))
        for r in range(16):
            A_reg[r] = A[tx // 4 + r // 4 % 2 * 8, tx % 4 * 4 + r % 4 + r // 8 * 16]
        for r in range(8):
            B_reg[r] = B[tx % 4 * 4 + r % 4 + r // 4 * 16, tx // 4]
        for r in range(4):
            C_reg[r] = C[tx // 4 + r // 2 * 8, tx % 4 * 2 + r % 2]
        T.evaluate(T.ptx_mma("m16n8k32", "row", "col", "int8", "int8", "int32", A_reg.data, 0, B_reg.data, 0, C_reg.data, 0, False))
        for r in range(4):
            C[tx // 4 + r // 2 * 8, tx % 4 * 2 + r % 2] = C_reg[r]
