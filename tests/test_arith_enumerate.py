"""arith/enumerate.py: exact ranges of integer expressions over small boxes, against Python's
own integer operators evaluated at every point."""
import itertools
import random

import numpy as np

from tirkit.arith.enumerate import box_values, value_range
from tirkit.ir import expr as E

I32 = "int32"


def var(name):
    return E.Var(name, I32)


def c(v):
    return E.IntImm(I32, v)


TX, K = var("tx"), var("k")


def test_the_ldmatrix_row_of_each_lane():
    """16 (tx % 16) + 8 (tx // 16): interval arithmetic of its two terms apart would give
    [0, 248] too, but not that it is reached; the box says it is."""
    e = E.Add(E.Mul(c(16), E.FloorMod(TX, c(16), I32), I32),
              E.Mul(c(8), E.FloorDiv(TX, c(16), I32), I32), I32)
    assert value_range(e, {TX: (0, 32)}) == (0, 248)
    assert value_range(e, {TX: (0, 16)}) == (0, 240)


def test_a_swizzle():
    e = E.Mul(E.Call(I32, "bitwise_xor", (K, E.FloorDiv(E.FloorMod(TX, c(8), I32), c(2), I32))),
              c(8), I32)
    assert value_range(e, {TX: (0, 32), K: (0, 4)}) == (0, 24)
    assert value_range(e, {TX: (0, 32), K: (4, 1)}) == (32, 56)


def test_what_it_cannot_take():
    assert value_range(E.Add(TX, K, I32), {TX: (0, 4)}) is None           # k unknown
    assert value_range(E.FloorDiv(c(8), TX, I32), {TX: (0, 4)}) is None    # 8 // 0
    assert value_range(E.Mul(TX, K, I32), {TX: (0, 1024), K: (0, 1024)}) is None   # too many
    assert value_range(E.Cast("int8", TX), {TX: (0, 200)}) is None         # 200 wraps
    assert value_range(E.Cast("int8", TX), {TX: (0, 100)}) == (0, 99)
    assert value_range(E.LT(TX, c(3), "bool"), {TX: (0, 8)}) is None       # not a number


def test_through_bindings():
    vi = var("vi")
    assert value_range(E.Mul(vi, c(2), I32), {TX: (3, 5)}, {vi: E.Add(TX, c(1), I32)}) == \
        (8, 16)


_OPS = [(E.Add, lambda a, b: a + b), (E.Sub, lambda a, b: a - b), (E.Mul, lambda a, b: a * b),
        (E.FloorDiv, lambda a, b: a // b), (E.FloorMod, lambda a, b: a % b),
        (E.Min, min), (E.Max, max)]
_CALLS = [("bitwise_xor", lambda a, b: a ^ b), ("bitwise_and", lambda a, b: a & b),
          ("bitwise_or", lambda a, b: a | b)]


def _random_expr(rng, depth):
    """(expression, the same as a Python function of tx and k)."""
    if depth == 0 or rng.random() < 0.25:
        pick = rng.randrange(3)
        if pick == 0:
            return TX, lambda tx, k: tx
        if pick == 1:
            return K, lambda tx, k: k
        v = rng.randrange(1, 9)
        return c(v), lambda tx, k: v
    a, fa = _random_expr(rng, depth - 1)
    if rng.random() < 0.3:
        name, fn = rng.choice(_CALLS)
        b, fb = _random_expr(rng, depth - 1)
        return E.Call(I32, name, (a, b)), lambda tx, k: fn(fa(tx, k), fb(tx, k))
    node, fn = rng.choice(_OPS)
    if node in (E.FloorDiv, E.FloorMod):
        v = rng.randrange(1, 9)                 # a constant divisor: never 0
        return node(a, c(v), I32), lambda tx, k: fn(fa(tx, k), v)
    b, fb = _random_expr(rng, depth - 1)
    return node(a, b, I32), lambda tx, k: fn(fa(tx, k), fb(tx, k))


def test_random_expressions_against_python():
    rng = random.Random(5)
    for _ in range(300):
        e, f = _random_expr(rng, 4)
        lo_t, n_t, lo_k, n_k = rng.randrange(-4, 4), rng.randrange(1, 40), \
            rng.randrange(-4, 4), rng.randrange(1, 10)
        values = [f(t, k) for t, k in itertools.product(range(lo_t, lo_t + n_t),
                                                      range(lo_k, lo_k + n_k))]
        got = value_range(e, {TX: (lo_t, n_t), K: (lo_k, n_k)})
        assert got == (min(values), max(values)), e


def test_box_values_of_indices_and_conditions_against_python():
    """Each expression at every point of the box, one axis per variable in the box's order;
    a condition (comparisons, and, or, not, a bool constant) as bools."""
    idx = E.Add(E.Mul(TX, c(4), I32), E.FloorMod(K, c(3), I32), I32)
    cond = E.Or(E.And(E.LT(TX, c(5), "bool"), E.Not(E.EQ(K, c(2), "bool")), "bool"),
                E.GE(E.Sub(TX, K, I32), c(6), "bool"), "bool")
    got = box_values([idx, cond, E.IntImm("bool", 1)], {TX: (2, 7), K: (-1, 4)})
    want_i = [[tx * 4 + k % 3 for k in range(-1, 3)] for tx in range(2, 9)]
    want_c = [[(tx < 5 and k != 2) or tx - k >= 6 for k in range(-1, 3)] for tx in range(2, 9)]
    assert got[0].tolist() == want_i and got[1].tolist() == want_c
    assert got[1].dtype == np.bool_ and got[2].shape == (7, 4) and got[2].all()
    # `T.likely(c)`, as loop partitioning marks a tail's guard, is c
    (likely,) = box_values([E.Call("bool", "likely", (cond,))], {TX: (2, 7), K: (-1, 4)})
    assert likely.tolist() == want_c
    # a condition where an integer is needed, an integer where a condition is, a variable the
    # box does not give, a division by zero somewhere, and too many points: None
    assert box_values([E.Add(E.LT(TX, c(1), "bool"), c(1), I32)], {TX: (0, 4)}) is None
    assert box_values([E.And(TX, c(1), "bool")], {TX: (0, 4)}) is None
    assert box_values([E.Add(TX, K, I32)], {TX: (0, 4)}) is None
    assert box_values([E.FloorDiv(c(8), TX, I32)], {TX: (0, 4)}) is None
    assert box_values([TX], {TX: (0, 300), K: (0, 300)}) is None


def test_an_empty_box_has_no_values():
    # a loop of no iteration (`T.thread_binding(0, ...)`, `range(-0)`) beside one of 2**31
    # (whose values are not made) and a cast and a shift that look at them
    i, k = var("i"), var("k")
    cast = E.Cast("int64", E.Mul(i, c(32), I32))
    exprs = [cast, E.Call(I32, "shift_left", (c(1), k))]
    assert box_values(exprs, {i: (0, 0), k: (0, 2 ** 31 - 1)}) is None
    assert box_values(exprs, {i: (0, 0)}) is None
