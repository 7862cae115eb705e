from tvm.script import tir as T


@T.prim_func
def bad(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("b"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi + 1]


@T.prim_func
def good(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("b"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] * T.float32(2)


@T.prim_func
def broken(A: T.Buffer((8,), "float32")):
    for i in range(8)
        A[i] = 1
