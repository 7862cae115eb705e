# name: x86.avx2.dot_8x4_u8s8s32
# label: x86 AVX2 (u8·s8→s32, 8x4)
# targets: llvm +avx2
# ops-per-cycle: 64
# caveat: u8·s8 pair sums saturate to s16 (vpmaddubsw): exact while each pair stays within ±32767, e.g. A below 128
"""vpmaddubsw + vpmaddwd + vpaddd (AVX2, 256-bit): 8 lanes of s32 += 4 u8·s8 products each.
Like the AVX-512 form, vpmaddubsw saturates a pair sum to s16: exact while one pair of
products stays within [-32768, 32767] (as for all VNNI fallbacks)."""
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
        A_brdcst: T.int32x8 = T.Broadcast(A_i32, 8)
        A_u8x32: T.uint8x32 = T.reinterpret("uint8x32", A_brdcst)
        B_i8x32: T.int8x32 = B[0, T.Ramp(0, 1, 32)]
        Red: T.int16x16 = T.call_llvm_pure_intrin("int16x16", "llvm.x86.avx2.pmadd.ub.sw", A_u8x32, B_i8x32)
        C[0:8] = C[T.Ramp(0, 1, 8)] + T.call_llvm_pure_intrin("int32x8", "llvm.x86.avx2.pmadd.wd", Red, T.Broadcast(T.int16(1), 16))
