"""One operator table for folding (Python ints) and for the interpreter (numpy arrays)."""
import numpy as np

from tirkit.arith.alu import ALU, fold
from tirkit.ir import expr as E


def test_folding_and_emulation_agree_on_random_integers():
    rng = np.random.default_rng(7)
    a = rng.integers(-50, 50, 400, dtype=np.int32)
    b = rng.integers(-9, 9, 400, dtype=np.int32)
    b[b == 0] = 3
    for cls, fn in ALU.items():
        arr = fn(a, b, True)
        for x, y, got in zip(a.tolist(), b.tolist(), np.asarray(arr).tolist()):
            assert fold(cls, x, y) == int(got), (cls.__name__, x, y)


def test_integer_division_rounds_as_tvm():
    assert fold(E.FloorDiv, 7, -2) == -4 and fold(E.FloorMod, 7, -2) == -1
    assert fold(E.Div, 7, -2) == -3 and fold(E.Mod, 7, -2) == 1 and fold(E.Mod, -7, 2) == -1
    assert fold(E.FloorDiv, 1, 0) is None and fold(E.Mod, 1, 0) is None
    assert fold(E.LT, 1, 2) == 1 and fold(E.Max, -3, 2) == 2


def test_float_rows_follow_c():
    a, b = np.array([5.5, -5.5], np.float32), np.array([2.0, 2.0], np.float32)
    assert ALU[E.Mod](a, b, False).tolist() == [1.5, -1.5]
    assert ALU[E.FloorMod](a, b, False).tolist() == [1.5, 0.5]
    assert ALU[E.Div](a, b, False).tolist() == [2.75, -2.75]
