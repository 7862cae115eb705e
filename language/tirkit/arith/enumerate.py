"""Exact ranges of integer expressions by enumeration: the expression evaluated at every point
of a small box of its variables' values (numpy arrays, the operators of the ALU table), and its
least and greatest value there.

Where the interval arithmetic of `Analyzer` cannot say that a bound is reached (a remainder,
a bitwise operator, one variable in several terms: `16 * (tx % 16) + 8 * (tx // 16)`,
`T.bitwise_xor(k, tx % 8 // 2) * 8`), a box of up to LIMIT points gives the values the
expression takes.

    value_range(e, {tx: (0, 32), k: (0, 4)})        # (least, greatest), or None
    box_values([i + 1, i < 8], {i: (0, 16)})        # [array of i + 1, array of i < 8], or None
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


def box_values(exprs, ranges: dict, env=None, limit: int = LIMIT):
    """The value of each expression of `exprs` at every point of the box `ranges` ({Var:
    (min, extent)}, Python ints): numpy arrays of the box's shape, one axis per variable of
    `ranges` in its order (int64 for an integer expression, bool for a condition: a
    comparison, `and`, `or`, `not`, a bool constant); None where one reads anything else or
    is undefined somewhere in the box, or the box holds no point or more than `limit`."""
    env = env or {}
    shape = [max(0, n) for _, n in ranges.values()]
    if not 0 < int(np.prod(shape, dtype=np.int64)) <= limit:
        return None         # (an empty box may still span 2**31 values of another loop)
    values = _axes(ranges)
    out = []
    try:
        with np.errstate(all="raise"):
            for e in exprs:
                _used(e, ranges, env, 0)
                out.append(np.broadcast_to(_eval(e, values, env, 0, True), shape))
    except (_Unknown, FloatingPointError, OverflowError):
        return None
    return out


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
    values = _axes({v: ranges[v] for v in order})
    try:
        with np.errstate(all="raise"):
            out = _eval(e, values, env, 0)
    except (_Unknown, FloatingPointError, OverflowError):
        return None
    return int(np.min(out)), int(np.max(out))


def _axes(ranges: dict) -> dict:
    """{Var: the values of its range along its own axis of the box}, arrays that broadcast
    to the box's shape (one axis per variable of `ranges`, in its order)."""
    out = {}
    for axis, (v, (lo, n)) in enumerate(ranges.items()):
        dims = [1] * len(ranges)
        dims[axis] = max(0, n)
        out[v] = np.arange(lo, lo + max(0, n), dtype=np.int64).reshape(dims)
    return out


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
        elif (type(x) in ALU or type(x) in _LOGIC) and hasattr(x, "a"):
            stack += [(x.a, d), (x.b, d)]
        elif type(x) is E.Not:
            stack.append((x.a, d))
        elif isinstance(x, E.Cast):
            stack.append((x.value, d))
        elif isinstance(x, E.Call) and x.op in BITWISE and len(x.args) == 2:
            stack += [(a, d) for a in x.args]
        elif isinstance(x, E.Call) and x.op == "likely" and len(x.args) == 1:
            stack.append((x.args[0], d))    # (a condition marked likely: itself)
        else:
            raise _Unknown
    return out


_LOGIC = {E.And: np.logical_and, E.Or: np.logical_or}


def _eval(x, values, env, depth, boolean=False):
    """x's values; a condition's (bool) only where `boolean` allows one."""
    if isinstance(x, E.IntImm):
        if x.dtype == "bool":
            if not boolean:
                raise _Unknown
            return np.bool_(x.value)
        return np.int64(x.value)
    if isinstance(x, E.Var):
        if x in values:
            return values[x]
        return _eval(env[x], values, env, depth + 1, boolean)
    if type(x) in _LOGIC or type(x) is E.Not:
        if not boolean:
            raise _Unknown
        ops = [_eval(y, values, env, depth, True) for y in
               ((x.a,) if type(x) is E.Not else (x.a, x.b))]
        if any(np.asarray(y).dtype != np.bool_ for y in ops):
            raise _Unknown              # an integer where a condition is needed
        return np.logical_not(ops[0]) if type(x) is E.Not else _LOGIC[type(x)](*ops)
    if isinstance(x, E.Cast):
        v = _eval(x.value, values, env, depth)
        if not is_int(x.dtype):
            raise _Unknown
        lo, hi = int_range(x.dtype)
        if np.size(v) and (np.min(v) < lo or np.max(v) > hi):
            raise _Unknown
        return v
    if isinstance(x, E.Call) and x.op == "likely":
        return _eval(x.args[0], values, env, depth, boolean)
    if isinstance(x, E.Call):
        a, b = (_eval(y, values, env, depth) for y in x.args)
        if x.op.startswith("shift") and np.size(b) and np.min(b) < 0:
            raise _Unknown
        return BITWISE[x.op](a, b)
    if not is_int(x.a.dtype):
        raise _Unknown
    a, b = _eval(x.a, values, env, depth), _eval(x.b, values, env, depth)
    if type(x) in DIVIDES and np.any(b == 0):
        raise _Unknown
    out = ALU[type(x)](a, b, True)
    if np.asarray(out).dtype == np.bool_ and not boolean:
        raise _Unknown                  # a comparison: not an integer value
    return out
