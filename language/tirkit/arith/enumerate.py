"""Exact ranges of integer expressions by enumeration: the expression evaluated at every point
of a small box of its variables' values (numpy arrays, the operators of the ALU table), and its
least and greatest value there.

Where the interval arithmetic of `Analyzer` cannot say that a bound is reached (a remainder,
a bitwise operator, one variable in several terms: `16 * (tx % 16) + 8 * (tx // 16)`,
`T.bitwise_xor(k, tx % 8 // 2) * 8`), a box of up to LIMIT points gives the values the
expression takes.

    value_range(e, {tx: (0, 32), k: (0, 4)})        # (least, greatest), or None
"""
from __future__ import annotations

import numpy as np

from ..ir import expr as E
from ..ir.dtype import int_range, is_int
from .alu import ALU, BITWISE, DIVIDES

LIMIT = 1 << 16
_DEPTH = 16                     # substitutions followed through `env`


class _Unknown(Exception):
    """The expression reads something the box does not give, or is undefined there."""


def value_range(e, ranges: dict, env=None, limit: int = LIMIT):
    """(least, greatest) value of the integer expression e over the box `ranges` ({Var: (min,
    extent)}, Python ints), `env` substituting other variables (block iterators' bindings,
    lets); None where e reads anything else, is undefined somewhere in the box (a division
    by zero, a value its cast cannot hold, a negative shift) or the box holds more than
    `limit` points."""
    env = env or {}
    try:
        used = _used(e, ranges, env, 0)
    except _Unknown:
        return None
    order = [v for v in ranges if v in used]
    points = 1
    for v in order:
        points *= max(0, ranges[v][1])
    if points == 0 or points > limit:
        return None
    values = {}
    for axis, v in enumerate(order):
        lo, n = ranges[v]
        shape = [1] * len(order)
        shape[axis] = n
        values[v] = np.arange(lo, lo + n, dtype=np.int64).reshape(shape)
    try:
        with np.errstate(all="raise"):
            out = _eval(e, values, env, 0)
    except (_Unknown, FloatingPointError, OverflowError):
        return None
    return int(np.min(out)), int(np.max(out))


def _used(e, ranges, env, depth) -> set:
    """The variables of `ranges` e reads, through env."""
    out = set()
    stack = [(e, depth)]
    while stack:
        x, d = stack.pop()
        if isinstance(x, E.Var):
            if x in ranges:
                out.add(x)
            elif x in env and d < _DEPTH:
                stack.append((env[x], d + 1))
            else:
                raise _Unknown
        elif isinstance(x, E.IntImm):
            continue
        elif type(x) in ALU and hasattr(x, "a"):
            stack += [(x.a, d), (x.b, d)]
        elif isinstance(x, E.Cast):
            stack.append((x.value, d))
        elif isinstance(x, E.Call) and x.op in BITWISE and len(x.args) == 2:
            stack += [(a, d) for a in x.args]
        else:
            raise _Unknown
    return out


def _eval(x, values, env, depth):
    if isinstance(x, E.IntImm):
        return np.int64(x.value)
    if isinstance(x, E.Var):
        if x in values:
            return values[x]
        return _eval(env[x], values, env, depth + 1)
    if isinstance(x, E.Cast):
        v = _eval(x.value, values, env, depth)
        if not is_int(x.dtype):
            raise _Unknown
        lo, hi = int_range(x.dtype)
        if np.min(v) < lo or np.max(v) > hi:
            raise _Unknown
        return v
    if isinstance(x, E.Call):
        a, b = (_eval(y, values, env, depth) for y in x.args)
        if x.op.startswith("shift") and np.min(b) < 0:
            raise _Unknown
        return BITWISE[x.op](a, b)
    if not is_int(x.a.dtype):
        raise _Unknown
    a, b = _eval(x.a, values, env, depth), _eval(x.b, values, env, depth)
    if type(x) in DIVIDES and np.any(b == 0):
        raise _Unknown
    out = ALU[type(x)](a, b, True)
    if out.dtype == np.bool_:
        raise _Unknown                  # a comparison: not an integer value
    return out
