"""Index expressions the arithmetic tests share: loop variables, int32 constants and the
integer operators."""
from tirkit.ir import expr as E

i, j, k, n = E.Var("i"), E.Var("j"), E.Var("k"), E.Var("n")


def c(v):
    return E.IntImm("int32", v)


def add(a, b):
    return E.Add(a, b, "int32")


def mul(a, b):
    return E.Mul(a, b, "int32")


def fdiv(a, b):
    return E.FloorDiv(a, b, "int32")


def fmod(a, b):
    return E.FloorMod(a, b, "int32")
