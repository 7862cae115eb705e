"""Modules whose functions call each other, shared by the tests of the core and of the server."""

# `main` calls `row_sum` twice, its loop over the size `n` it is passed: 16, then {second}
# (a constant, or `m`, a size of `main`)
SIZED = '''from tvm.script import ir as I
from tvm.script import tir as T


@I.ir_module
class Module:
    @T.prim_func
    def main(A: T.Buffer((64, 16), "float32"), B: T.Buffer((64,), "float32"), m: T.int32):
        for i in range(64):
            Module.row_sum(T.address_of(A[i, 0]), T.address_of(B[i]), 16)
            Module.row_sum(T.address_of(A[i, 0]), T.address_of(B[i]), {second})

    @T.prim_func(private=True)
    def row_sum(a: T.handle("float32"), b: T.handle("float32"), n: T.int32):
        X = T.decl_buffer((16,), "float32", data=a)
        Y = T.decl_buffer((1,), "float32", data=b)
        Y[0] = T.float32(0)
        for j in range(n):
            Y[0] = Y[0] + X[j]
'''
