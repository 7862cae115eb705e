from tvm.script import tir as T


@T.prim_func
def undefined(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("U"):
            vi = T.axis.spatial(16, i)
            B[vi] = Q[vi] * 2.0


@T.prim_func
def sound(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    for i in range(64):
        with T.block("B"):
            vi = T.axis.spatial(64, i)
            B[vi] = A[vi] * 2.0
