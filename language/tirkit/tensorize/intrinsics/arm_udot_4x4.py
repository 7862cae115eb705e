# name: arm.neon.udot_4x4_u8u8u32
# label: ARM NEON udot (u8·u8→u32, 4x4)
# targets: llvm +dotprod
# tvm: dot_4x4_u8u8u32_udot
# ops-per-cycle: 64
"""udot (Armv8.2-A dot product): 4 lanes of u32 += 4 u8·u8 products each, in one instruction.
The four bytes of A are broadcast to every lane; B is a 4x4 tile, lane i's four bytes
contiguous. The target spelling is an LLVM target string, e.g.
`llvm -mtriple=aarch64-linux-gnu -mattr=+dotprod`. C is int32 here (TVM's udot desc
accumulates in uint32): a u8 GEMM usually keeps an int32 result, and the sums' bits are
the same in both."""
from tvm.script import tirx as T


@T.prim_func(s_tir=True)
def desc(
    A: T.Buffer((4,), "uint8", offset_factor=1),
    B: T.Buffer((4, 4), "uint8", offset_factor=1),
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
    A: T.Buffer((4,), "uint8", offset_factor=1),
    B: T.Buffer((4, 4), "uint8", offset_factor=1),
    C: T.Buffer((4,), "int32", offset_factor=1),
):
    with T.sblock("root"):
        T.reads(C[0:4], A[0:4], B[0:4, 0:4])
        T.writes(C[0:4])
        A_i8x4: T.uint8x4 = A[T.Ramp(0, 1, 4)]
        A_i32: T.int32 = T.reinterpret("int32", A_i8x4)
        A_i8x16: T.uint8x16 = T.reinterpret("uint8x16", T.Broadcast(A_i32, 4))
        B_i8x16: T.uint8x16 = B[0, T.Ramp(0, 1, 16)]
        C_i32x4: T.int32x4 = C[T.Ramp(0, 1, 4)]
        C[0:4] = T.call_llvm_pure_intrin("int32x4", "llvm.aarch64.neon.udot.v4i32.v16i8", C_i32x4, B_i8x16, A_i8x16)
