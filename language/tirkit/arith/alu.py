"""What each arithmetic and comparison operator computes: one table, read by constant folding
(Python integers: the lowering, the simplifier) and by the interpreter (numpy values of the
operands' dtype).  A row is `node class: fn(a, b, integer)`, where `integer` says the dtype is an
integer one (division and modulo then round as TVM's integer operators do).

    ALU[E.FloorDiv](7, -2, True)        # -4
    fold(E.Div, 7, -2)                  # -3 (truncating), None for a division by zero
"""
from __future__ import annotations

import numpy as np

from ..ir import expr as E


def _scalar(x):
    return isinstance(x, (int, float))


def truncdiv(a, b):
    """Integer division rounding towards zero (C's `/`)."""
    q = a // b
    fix = (a - q * b != 0) & ((a < 0) != (b < 0))
    return q + fix


def truncmod(a, b):
    """The remainder of `truncdiv` (C's `%`: the sign of a)."""
    if isinstance(a, int) and isinstance(b, int):
        return a - truncdiv(a, b) * b
    return np.fmod(a, b)


def _where(cond, a, b):
    return (a if cond else b) if _scalar(a) and _scalar(b) else np.where(cond, a, b)


ALU = {
    E.Add: lambda a, b, i: a + b,                                   # a + b
    E.Sub: lambda a, b, i: a - b,                                   # a - b
    E.Mul: lambda a, b, i: a * b,                                   # a * b
    E.FloorDiv: lambda a, b, i: a // b if i else np.floor(a / b),   # rounds down
    E.FloorMod: lambda a, b, i: a % b if i else a - np.floor(a / b) * b,   # sign of b
    E.Div: lambda a, b, i: truncdiv(a, b) if i else a / b,          # rounds towards zero
    E.Mod: lambda a, b, i: truncmod(a, b) if i else np.fmod(a, b),  # sign of a
    E.Min: lambda a, b, i: _where(a < b, a, b),                     # the smaller
    E.Max: lambda a, b, i: _where(a > b, a, b),                     # the larger
    E.EQ: lambda a, b, i: a == b,                                   # comparisons
    E.NE: lambda a, b, i: a != b,
    E.LT: lambda a, b, i: a < b,
    E.LE: lambda a, b, i: a <= b,
    E.GT: lambda a, b, i: a > b,
    E.GE: lambda a, b, i: a >= b,
}

DIVIDES = (E.FloorDiv, E.FloorMod, E.Div, E.Mod)     # the operators a 0 divisor leaves undefined

# the bitwise operators, spelled as calls (`T.bitwise_xor(a, b)`, `a ^ b` in a kernel)
BITWISE = {"bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or,
           "bitwise_xor": np.bitwise_xor, "shift_left": np.left_shift,
           "shift_right": np.right_shift}


def fold(cls, a: int, b: int):
    """The integer value of `a OP b` for the operator node class `cls`; None where the table
    has no row or for a division by zero.  Comparisons give 0 or 1."""
    fn = ALU.get(cls)
    if fn is None or (b == 0 and cls in DIVIDES):
        return None
    return int(fn(a, b, True))
