# name: x86.avxvnni.dot_8x4_u8s8s32
# label: x86 AVX-VNNI (u8·s8→s32, 8x4)
# targets: llvm +avxvnni
# ops-per-cycle: 128
"""vpdpbusd (AVX-VNNI, 256-bit): 8 lanes of s32 += 4 u8·s8 products each."""
from tvm.script import tirx as T


@T.prim_func(s_tir=True)
def desc(
    A: T.Buffer((4,), "uint8", offset_factor=1),
    B: T.Buffer((8, 4), "int8", offset_factor=1),
    C: T.Buffer((8,), "int32", offset_factor=1),
):
    with T.sblock("root"):
        T.reads(C[0:8], A[0:4], B[0:8, 0:4])
        T.writes(C[0:8])
        for i, k in T.grid(8, 4):
            with T.sblock("update"):
                vi, vk = T.axis.remap("SR", [i, k])
                C[vi] = C[vi] + T.Cast("int32", A[vk]) * T.Cast("int32", B[vi, vk])


@T.prim_func(s_tir=True)
def impl(
    A: T.Buffer((4,), "uint8", offset_factor=1),
    B: T.Buffer((8, 4), "int8", offset_factor=1),
    C: T.Buffer((8,), "int32", offset_factor=1),
):
    with T.sblock("root"):
        T.reads(C[0:8], A[0:4], B[0:8, 0:4])
        T.writes(C[0:8])
        A_u8x4: T.uint8x4 = A[T.Ramp(0, 1, 4)]
        A_i32: T.int32 = T.reinterpret("int32", A_u8x4)
        B_i8x32: T.int8x32 = B[0, T.Ramp(0, 1, 32)]
        B_i32x8: T.int32x8 = T.reinterpret("int32x8", B_i8x32)
        C_i32x8: T.int32x8 = C[T.Ramp(0, 1, 8)]
        C[0:8] = T.call_llvm_pure_intrin("int32x8", "llvm.x86.avx512.vpdpbusd.256", C_i32x8, T.Broadcast(A_i32, 8), B_i32x8)
