# name: x86.avx512bf16.dot_16x2_bf16bf16f32
# label: x86 AVX-512 BF16 (bf16·bf16→f32, 16x2)
# targets: llvm +avx512bf16 +avx512f
# ops-per-cycle: 64
# caveat: vdpbf16ps flushes subnormal inputs and results to zero and adds each pair's odd product first, so sums can differ from the desc's in the last bits
"""vdpbf16ps (AVX-512 BF16): 16 lanes of f32 += 2 bf16·bf16 products each, in one
instruction. A's two bf16 are broadcast to every lane as one 32-bit word; B is a 16x2 tile,
lane i's pair contiguous (a GEMM's B[K, N] is packed to [N/16, K/2, 16, 2]). bf16 operands
are passed to LLVM as i32 words (two bf16 each), the intrinsic's `<16 x i32>` form."""
from tvm.script import tirx as T


@T.prim_func(s_tir=True)
def desc(
    A: T.Buffer((2,), "bfloat16", offset_factor=1),
    B: T.Buffer((16, 2), "bfloat16", offset_factor=1),
    C: T.Buffer((16,), "float32", offset_factor=1),
):
    with T.sblock("root"):
        T.reads(C[0:16], A[0:2], B[0:16, 0:2])
        T.writes(C[0:16])
        for i, k in T.grid(16, 2):
            with T.sblock("update"):
                vi, vk = T.axis.remap("SR", [i, k])
                C[vi] = C[vi] + T.Cast("float32", A[vk]) * T.Cast("float32", B[vi, vk])


@T.prim_func(s_tir=True)
def impl(
    A: T.Buffer((2,), "bfloat16", offset_factor=1),
    B: T.Buffer((16, 2), "bfloat16", offset_factor=1),
    C: T.Buffer((16,), "float32", offset_factor=1),
):
    with T.sblock("root"):
        T.reads(C[0:16], A[0:2], B[0:16, 0:2])
        T.writes(C[0:16])
        A_bf16x2: T.bfloat16x2 = A[T.Ramp(0, 1, 2)]
        A_i32: T.int32 = T.reinterpret("int32", A_bf16x2)
        B_bf16x32: T.bfloat16x32 = B[0, T.Ramp(0, 1, 32)]
        B_i32x16: T.int32x16 = T.reinterpret("int32x16", B_bf16x32)
        C_f32x16: T.float32x16 = C[T.Ramp(0, 1, 16)]
        C[0:16] = T.call_llvm_pure_intrin("float32x16", "llvm.x86.avx512bf16.dpbf16ps.512", C_f32x16, T.Broadcast(A_i32, 16), B_i32x16)
