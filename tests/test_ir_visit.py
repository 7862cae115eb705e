"""ir/visit's questions about IR trees, and ir/text's short expression text."""
from __future__ import annotations

import tirkit
from tirkit.ir import expr as E
from tirkit.ir import stmt as S
from tirkit.ir.text import expr_text
from tirkit.ir.visit import const_int, contains, find_all, find_first, lane_of, uses_var, vars_in

SRC = '''\
from tvm.script import tir as T


@T.prim_func
def f(A: T.Buffer((8, 4), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        for k in range(4):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk] * T.float32(2)
'''


def _func():
    res = tirkit.parse(SRC)
    assert not res.diagnostics
    return res.module.functions[0][1]


def test_find_first_all_and_contains():
    f = _func()
    loops = find_all(f.body, lambda x: True, S.For)
    assert [lp.loop_var.name for lp in loops] == ["i", "k"]
    outer = find_all(f.body, lambda x: True, S.For, nested=False)
    assert [lp.loop_var.name for lp in outer] == ["i"]
    assert find_first(f.body, lambda x: x.loop_var.name == "k", S.For) is loops[1]
    assert find_first(f.body, lambda x: x.loop_var.name == "z", S.For) is None
    assert contains(f.body, lambda x: x.buffer.name == "A", E.BufferLoad)
    assert not contains(f.body, lambda x: x.buffer.name == "C", E.BufferLoad)
    store = find_first(f.body, lambda x: x.buffer.name == "B", S.BufferStore)
    assert isinstance(store.value, E.Add)                # the body comes before the init


def test_vars_in_uses_var_and_const_int():
    f = _func()
    block = find_first(f.body, lambda x: x.name_hint == "B", S.Block)
    vi, vk = (iv.var for iv in block.iter_vars)
    names = [v.name for v in vars_in(block.body)]
    assert names == ["vi", "vk"]                         # each once, in order of appearance
    assert uses_var(block.body, vk) and not uses_var(block.init, vk)
    assert const_int(E.IntImm("int64", 7)) == 7
    assert const_int(vi) is None and const_int(E.FloatImm("float32", 1.0)) is None


def test_expr_text():
    i, n = E.Var("i"), E.Var("n")
    e = E.Mul(E.Add(i, E.IntImm("int32", 1), "int32"), E.IntImm("int32", 4), "int32")
    assert expr_text(e) == "(i + 1) * 4"
    assert expr_text(E.Sub(i, E.Sub(n, i, "int32"), "int32")) == "i - (n - i)"
    assert expr_text(E.Min(n, E.IntImm("int64", 16), "int64")) == "T.min(n, T.int64(16))"
    assert expr_text(E.Cast("float32", i)) == 'T.Cast("float32", i)'
    assert expr_text(E.FloorMod(i, E.IntImm("int32", 3), "int32")) == "i % 3"
    assert expr_text(E.LT(i, n, "bool")) == "i < n"


def test_lane_of_writes_one_lane_of_a_vector_expression():
    res = tirkit.parse('''from tvm.script import tir as T


@T.prim_func
def v(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32"), n: T.int32):
    for i in range(4):
        B[T.Ramp(i * 4, 1, 4)] = T.if_then_else(T.Ramp(i * 4, 1, 4) < T.Broadcast(n, 4), A[T.Ramp(i * 4 + 1, 2, 4)] + T.Broadcast(T.float32(1), 4), T.Broadcast(T.float32(0), 4))
        B[0:4] = T.Shuffle([A[0:4]], [3, 2, 1, 0])
''')
    assert not res.diagnostics
    store, shuffle = find_all(res.module.functions[0][1].body, lambda x: True, S.BufferStore)
    lane = E.Var("lane", "int32")
    one = lane_of(store.value, lane)
    assert one.dtype == "float32"
    assert expr_text(one) == ("T.if_then_else(i * 4 + 1 * lane < n, "
                              "A[i * 4 + 1 + 2 * lane] + T.float32(1.0), T.float32(0.0))")
    assert expr_text(lane_of(store.indices[0], E.IntImm("int32", 3))) == "i * 4 + 1 * 3"
    assert lane_of(shuffle.value, lane) is None          # a shuffle's lane is another's
