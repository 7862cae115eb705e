# name: x86.avx512.dot_16x4_u8s8s32
# label: x86 AVX-512 (u8·s8→s32, 16x4)
# targets: llvm +avx512bw
# tvm: dot_16x4_avx512
# ops-per-cycle: 128
# caveat: u8·s8 pair sums saturate to s16 (vpmaddubsw): exact while each pair stays within ±32767, e.g. A below 128
"""vpmaddubsw + vpmaddwd + vpaddd (AVX-512BW): the VNNI dot product where VNNI is absent."""
from tvm.script import tirx as T


@T.prim_func(s_tir=True)
def desc(
    A: T.Buffer((4,), "uint8", offset_factor=1),
    B: T.Buffer((16, 4), "int8", offset_factor=1),
    C: T.Buffer((16,), "int32", offset_factor=1),
):
    with T.sblock("root"):
        T.reads(C[0:16], A[0:4], B[0:16, 0:4])
        T.writes(C[0:16])
        for i, k in T.grid(16, 4):
            with T.sblock("update"):
                vi, vk = T.axis.remap("SR", [i, k])
                C[vi] = C[vi] + T.Cast("int32", A[vk]) * T.Cast("int32", B[vi, vk])


@T.prim_func(s_tir=True)
def impl(
    A: T.Buffer((4,), "uint8", offset_factor=1),
    B: T.Buffer((16, 4), "int8", offset_factor=1),
    C: T.Buffer((16,), "int32", offset_factor=1),
):
    with T.sblock("root"):
        T.reads(C[0:16], A[0:4], B[0:16, 0:4])
        T.writes(C[0:16])
        A_u8x4: T.uint8x4 = A[T.Ramp(0, 1, 4)]
        A_i32: T.int32 = T.reinterpret("int32", A_u8x4)
        A_brdcst: T.int32x16 = T.Broadcast(A_i32, 16)
        A_u8x64: T.uint8x64 = T.reinterpret("uint8x64", A_brdcst)
        B_i8x64: T.int8x64 = B[0, T.Ramp(0, 1, 64)]
        Red: T.int16x32 = T.call_llvm_pure_intrin("int16x32", "llvm.x86.avx512.pmaddubs.w.512", A_u8x64, B_i8x64)
        C[0:16] = C[T.Ramp(0, 1, 16)] + T.call_llvm_pure_intrin("int32x16", "llvm.x86.avx512.pmaddw.d.512", Red, T.Broadcast(T.int16(1), 32))
