"""Commutative reducers, as TVM's ReducerRegistry knows them: of one value (+, *, min,
max) and of two (a pair of sums; argmax and argmin, each with `>=` / `<=` or with strict
comparisons and ties to the smaller index), each with its identities.  `match_updates`
reads a reduction block's update as one of them: one store `B[i] = B[i] op value`, or
let-bound values stored to several buffers at one index, as TVM prints argmax.
`init_values` and `starts_at_identity` read a block's init; `store_all` makes a
simultaneous update.  The one reading of reducers for rfactor
(schedule/reduction/rfactor.py) and the CUDA lowerings of cross-thread reductions
(codegen/cuda/crossthread.py, allreduce.py)."""
from __future__ import annotations

import dataclasses
import itertools
from typing import Callable

from ..ir import expr as E
from ..ir import stmt as S
from ..ir.hash import structural_key
from ..ir.stmt import TRIVIA_FIELDS
from ..ir.visit import contains, substitute

OPS = (E.Add, E.Mul, E.Min, E.Max)


def identity(op, dtype: str) -> E.PrimExpr:
    """The identity of op in dtype: 0, 1, or the smallest / largest value of the dtype."""
    if op is E.Add:
        return E.const(0, dtype)
    if op is E.Mul:
        return E.const(1, dtype)
    return E.Call(dtype, "min_value" if op is E.Max else "max_value",
                  (E.StringImm(dtype, "handle"),))


def is_identity(op, init, dtype: str) -> bool:
    """Whether the value `init` is op's identity in dtype."""
    if isinstance(init, E.Call) and init.op in ("min_value", "max_value"):
        return (op is E.Max) == (init.op == "min_value") and op in (E.Max, E.Min)
    if isinstance(init, E.Cast):
        init = init.value
    if not isinstance(init, (E.IntImm, E.FloatImm)):
        return False
    v = init.value
    if op is E.Add:
        return v == 0
    if op is E.Mul:
        return v == 1
    if dtype.startswith(("float", "bfloat")):
        import numpy as np
        from ..ir.constants import numpy_dtype
        fi = np.finfo(numpy_dtype(dtype))
        lo, hi = float(fi.min), float(fi.max)
    else:
        bits = int("".join(c for c in dtype if c.isdigit()) or 32)
        lo, hi = (0, 2 ** bits - 1) if dtype.startswith("uint") else \
            (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    if op is E.Max:
        return v <= lo
    if op is E.Min:
        return v >= hi
    return False


@dataclasses.dataclass(frozen=True)
class Reducer:
    """combine(xs, ys) -> one expression per value, the combination of two partial results;
    identities(dtypes) -> the values a reduction starts from."""
    name: str
    arity: int
    combine: Callable
    identities: Callable


def _one(op):
    return Reducer(op.__name__.lower(), 1, lambda xs, ys: [op(xs[0], ys[0], xs[0].dtype)],
                   lambda dts: [identity(op, dts[0])])


def _arg(keep_x, strict, extreme):
    """argmax / argmin over (index, value): x is kept where keep_x(x1, y1) holds, or, with
    strict comparisons, where the values tie and x's index is the smaller."""
    def combine(xs, ys):
        (x0, x1), (y0, y1) = xs, ys
        take = keep_x(x1, y1, "bool")
        first = E.Or(take, E.And(E.EQ(x1, y1, "bool"), E.LT(x0, y0, "bool"), "bool"),
                     "bool") if strict else take
        return [E.Select(first, x0, y0, x0.dtype), E.Select(take, x1, y1, x1.dtype)]
    return combine, lambda dts: [E.const(-1, dts[0]),
                                 E.Call(dts[1], extreme, (E.StringImm(dts[1], "handle"),))]


REDUCERS = tuple(_one(op) for op in OPS) + (
    Reducer("sum of pairs", 2, lambda xs, ys: [E.Add(x, y, x.dtype) for x, y in zip(xs, ys)],
            lambda dts: [E.const(0, d) for d in dts]),
    Reducer("argmax", 2, *_arg(E.GE, False, "min_value")),
    Reducer("argmax", 2, *_arg(E.GT, True, "min_value")),
    Reducer("argmin", 2, *_arg(E.LE, False, "max_value")),
    Reducer("argmin", 2, *_arg(E.LT, True, "max_value")),
)

_COMMUTING = (E.Add, E.Mul, E.Min, E.Max, E.EQ, E.NE, E.And, E.Or)
_MIRROR = {E.GE: E.LE, E.LE: E.GE, E.GT: E.LT, E.LT: E.GT}


def _unify(t, e, holes: dict, bound: dict) -> bool:
    """Whether e is the template t with each hole (a Var of `holes`) standing for one
    expression, the same wherever the hole recurs; binds them in `bound` (id -> key, expr).
    Operands of commuting operators and mirrored comparisons match either way round."""
    if isinstance(t, E.Var) and id(t) in holes:
        key = structural_key(e)
        got = bound.setdefault(id(t), (key, e))
        return got[0] == key and t.dtype == e.dtype
    if isinstance(t, E.BinaryOp) and isinstance(e, E.BinaryOp):
        tries = []
        if type(t) is type(e):
            tries.append((e.a, e.b))
            if type(t) in _COMMUTING:
                tries.append((e.b, e.a))
        elif _MIRROR.get(type(t)) is type(e):
            tries.append((e.b, e.a))
        for a, b in tries:
            trial = dict(bound)
            if t.dtype == e.dtype and _unify(t.a, a, holes, trial) and \
                    _unify(t.b, b, holes, trial):
                bound.update(trial)
                return True
        return False
    if type(t) is not type(e):
        return False
    if not dataclasses.is_dataclass(t):
        return structural_key(t) == structural_key(e)
    for f in dataclasses.fields(t):
        if f.name in TRIVIA_FIELDS:
            continue
        a, b = getattr(t, f.name), getattr(e, f.name)
        if isinstance(a, tuple) and isinstance(b, tuple):
            if len(a) != len(b) or not all(_unify(x, y, holes, bound) for x, y in zip(a, b)):
                return False
        elif isinstance(a, E.PrimExpr) and isinstance(b, E.PrimExpr):
            if not _unify(a, b, holes, bound):
                return False
        elif structural_key(a) != structural_key(b):
            return False
    return True


def starts_at_identity(inits, identities) -> bool:
    """Whether each init value is the reducer's identity beside it (identities from
    Reducer.identities): the smallest / largest value of its dtype, or the same constant."""
    for v, ident in zip(inits, identities):
        if isinstance(ident, E.Call):
            ok = is_identity(E.Max if ident.op == "min_value" else E.Min, v, ident.dtype)
        else:
            v = v.value if isinstance(v, E.Cast) else v
            ok = isinstance(v, (E.IntImm, E.FloatImm)) and v.value == ident.value
        if not ok:
            return False
    return True


@dataclasses.dataclass(frozen=True)
class Update:
    """A block's update read as `(B_0[i], ..) = combine((B_0[i], ..), values)`: the stores
    in the reducer's order of values, and each iteration's values."""
    reducer: Reducer
    stores: tuple
    values: tuple

    def buffers(self) -> list:
        return [s.buffer for s in self.stores]


def update_shape(body) -> tuple | None:
    """(the let-bound variables and their values, the stores) of an update written
    `let ..; B_0[i] = ..; B_1[i] = ..` (lets optional, one store or several); None for a
    body of another shape."""
    lets = []
    while isinstance(body, S.LetStmt):
        lets.append((body.var, body.value))
        body = body.body
    seq = body.seq if isinstance(body, S.SeqStmt) else (body,)
    if not seq or not all(isinstance(x, S.BufferStore) for x in seq):
        return None
    return lets, list(seq)


def _stores(body):
    """The stores of an update (update_shape) with their values, the let-bound values
    substituted; None where a store reads a buffer an earlier one wrote (the stores would
    not be simultaneous) or the body has another shape."""
    shape = update_shape(body)
    if shape is None:
        return None
    lets = {}
    for var, value in shape[0]:
        lets[id(var)] = substitute(value, lets)
    out, written = [], set()
    for st in shape[1]:
        if id(st.buffer) in written or contains(
                st.value, lambda x: isinstance(x, E.BufferLoad) and id(x.buffer) in written):
            return None
        written.add(id(st.buffer))
        out.append((st, substitute(st.value, lets)))
    return out


def match_updates(body) -> Update | None:
    """The reducer whose combination a block's update is, with its stores and values: one
    store `B[i] = B[i] op value`, or stores of several buffers at the same indices (after
    let-bound values, as TVM prints argmax) matching one of REDUCERS, where no value reads a
    buffer the update writes.  None for anything else."""
    found = _stores(body)
    if found is None or len(found) > max(r.arity for r in REDUCERS):
        return None
    key = structural_key(tuple(found[0][0].indices))
    if any(structural_key(tuple(st.indices)) != key for st, _ in found):
        return None
    written = {id(st.buffer) for st, _ in found}
    for r, order in itertools.product(REDUCERS, itertools.permutations(found)):
        if r.arity != len(order):
            continue
        xs = [E.Var(f"x{i}", st.buffer.dtype) for i, (st, _) in enumerate(order)]
        ys = [E.Var(f"y{i}", st.buffer.dtype) for i, (st, _) in enumerate(order)]
        template = r.combine(xs, ys)
        holes = {id(v): v for v in xs + ys}
        bound = {id(x): (structural_key(E.BufferLoad(st.buffer, st.indices, st.buffer.dtype)),
                         None) for x, (st, _) in zip(xs, order)}
        if not all(_unify(t, v, holes, bound) for t, (_, v) in zip(template, order)):
            continue
        values = tuple(bound[id(y)][1] for y in ys if id(y) in bound)
        if len(values) == len(ys) and not any(
                contains(v, lambda x: isinstance(x, E.BufferLoad) and id(x.buffer) in written)
                for v in values):
            return Update(r, tuple(st for st, _ in order), values)
    return None


def init_values(init, update: Update) -> list | None:
    """The value an init stores to each buffer of update (in update's order): one store
    to each, at the element the update writes; None for any other init."""
    seq = init.seq if isinstance(init, S.SeqStmt) else (init,)
    key = structural_key(tuple(update.stores[0].indices))
    by_buf = {}
    for st in seq:
        if not isinstance(st, S.BufferStore) or id(st.buffer) in by_buf or \
                structural_key(tuple(st.indices)) != key:
            return None
        by_buf[id(st.buffer)] = st.value
    if set(by_buf) != {id(x) for x in update.buffers()}:
        return None
    return [by_buf[id(x)] for x in update.buffers()]


def store_all(bufs, values, index, span=None) -> S.Stmt:
    """values stored to bufs at index, every one computed before any is stored: a store,
    or let-bound values `v_<buffer>` and their stores, as TVM prints a reducer of several
    values."""
    if len(bufs) == 1:
        return S.BufferStore(bufs[0], values[0], index, span=span)
    temps = [E.Var(f"v_{b.name}", b.dtype) for b in bufs]
    body = S.SeqStmt(tuple(S.BufferStore(b, t, index, span=span)
                           for b, t in zip(bufs, temps)))
    for t, e in reversed(list(zip(temps, values))):
        body = S.LetStmt(t, e, body)
    return body
