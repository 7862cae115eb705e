"""An invented intrinsic (an 8x2 s8·s8→s32 dot product whose impl is plain TIR), written to a
temporary folder by the extensibility tests."""
TEXT = '''# name: test.dot_8x2_s8s8s32
# label: invented 8x2 dot (s8·s8→s32)
# targets: llvm
# ops-per-cycle: 32
from tvm.script import tirx as T


@T.prim_func(s_tir=True)
def desc(
    A: T.Buffer((2,), "int8", offset_factor=1),
    B: T.Buffer((8, 2), "int8", offset_factor=1),
    C: T.Buffer((8,), "int32", offset_factor=1),
):
    with T.sblock("root"):
        T.reads(C[0:8], A[0:2], B[0:8, 0:2])
        T.writes(C[0:8])
        for i, k in T.grid(8, 2):
            with T.sblock("update"):
                vi, vk = T.axis.remap("SR", [i, k])
                C[vi] = C[vi] + T.Cast("int32", A[vk]) * T.Cast("int32", B[vi, vk])


@T.prim_func(s_tir=True)
def impl(
    A: T.Buffer((2,), "int8", offset_factor=1),
    B: T.Buffer((8, 2), "int8", offset_factor=1),
    C: T.Buffer((8,), "int32", offset_factor=1),
):
    with T.sblock("root"):
        T.reads(C[0:8], A[0:2], B[0:8, 0:2])
        T.writes(C[0:8])
        for i in T.unroll(8):
            C[i] = C[i] + T.Cast("int32", A[0]) * T.Cast("int32", B[i, 0]) + T.Cast("int32", A[1]) * T.Cast("int32", B[i, 1])
'''
NAME = "test.dot_8x2_s8s8s32"


def write(folder):
    (folder / "dot_8x2.py").write_text(TEXT)
    return str(folder)
