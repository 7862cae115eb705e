# name: arm.neon.sdot_4x4_s8s8s32
# label: ARM NEON sdot (s8·s8→s32, 4x4)
# targets: llvm +dotprod
# tvm: dot_4x4_i8i8s32_sdot
# ops-per-cycle: 64
"""sdot (Armv8.2-A dot product): 4 lanes of s32 += 4 s8·s8 products each, in one instruction.
The four bytes of A are broadcast to every lane; B is a 4x4 tile, lane i's four bytes
contiguous. The target spelling is an LLVM target string, e.g.
`llvm -mtriple=aarch64-linux-gnu -mattr=+dotprod`."""
from tvm.script import tirx as T


@T.prim_func(s_tir=True)
def desc(
    A: T.Buffer((4,), "int8", offset_factor=1),
    B: T.Buffer((4, 4), "int8", offset_factor=1),
    C: T.Buffer((4,), "int32", offset_factor=1),
):
    with T.sblock("root"):
        T.reads(C[0:4], A[0:4], B[0:4, 0:4])
        T.writes(C[0:4])
        for i, k in T.grid(4, 4):
            with T.sblock("update"):
                vi, vk = T.axis.remap("SR", [i, k])
                C[vi] = C[vi] + T.Cast("int32", A[vk]) * T.Cast("int32", B[vi, vk])


@T.prim_func(s_tir=True)
def impl(
    A: T.Buffer((4,), "int8", offset_factor=1),
    B: T.Buffer((4, 4), "int8", offset_factor=1),
    C: T.Buffer((4,), "int32", offset_factor=1),
):
    with T.sblock("root"):
        T.reads(C[0:4], A[0:4], B[0:4, 0:4])
        T.writes(C[0:4])
        A_i8x4: T.int8x4 = A[T.Ramp(0, 1, 4)]
        A_i32: T.int32 = T.reinterpret("int32", A_i8x4)
        A_i8x16: T.int8x16 = T.reinterpret("int8x16", T.Broadcast(A_i32, 4))
        B_i8x16: T.int8x16 = B[0, T.Ramp(0, 1, 16)]
        C_i32x4: T.int32x4 = C[T.Ramp(0, 1, 4)]
        C[0:4] = T.call_llvm_pure_intrin("int32x4", "llvm.aarch64.neon.sdot.v4i32.v16i8", C_i32x4, B_i8x16, A_i8x16)
