"""Per-store features of a scheduled kernel, in the spirit of TVM MetaSchedule's per-store
features: one row per buffer store (a block's body store, and its `T.init` store), the model
predicts one value per row and sums them (pack-sum).

    rows = extract(func)        # numpy float32 array (n_stores, len(NAMES)); deterministic
    NAMES                       # the column names, documented in docs/cost-model.md

The rows are computed on the scheduled TensorIR, with each block's iterator bindings composed
into the loops around it and each buffer flattened row-major, which is what lowering does
(less the unrolling of `T.unroll` loops, whose extent becomes a feature instead): this keeps
extraction to about a millisecond. Counts are exact for affine indices; a non-affine index
term (`//`, `%`) counts as touching every loop it mentions, with the dimension's stride.
Every count is taken as log2(1 + x), so that the model sees ratios.
"""
from __future__ import annotations

import math

import numpy as np

from ..arith.affine import Atom
from ..arith.linear import linear_form
from ..codegen.llvm.pipeline import choose
from ..ir import expr as E
from ..ir import stmt as S
from ..ir.dtype import bytes_of, is_float
from ..ir.visit import child_fields
from . import cycles as C
from . import inner as I
from . import locality as L
from .locality import CURVE, LINE, sample_curve
from .locality import lg as _lg

VERSION = 9
MAX_BUFFERS = 5

OPS = ["float_addsub", "float_mul", "float_divmod", "float_minmax", "float_math", "float_call",
       "int_addsub", "int_mul", "int_divmod", "int_minmax", "compare", "select", "cast",
       "bool_op"]
LOOP_KINDS = ["vectorized", "unrolled", "parallel"]
BUFFER_FIELDS = ["present", "is_read", "is_write", "bytes", "unique_bytes", "lines",
                 "unique_lines", "reuse_type", "reuse_dist_iter", "reuse_dist_bytes",
                 "reuse_count", "stride"]
NAMES = (
    [f"op.{o}" for o in OPS]
    + [f"loop.{k}.{f}" for k in LOOP_KINDS for f in ("extent", "count", "position")]
    + ["loop.parallel_launches", "loop.parallel_work", "loop.count", "loop.outer_product",
       "loop.innermost_extent", "store.is_init", "store.predicated", "store.read_modify_write"]
    + [f"buf{i}.{f}" for i in range(MAX_BUFFERS) for f in BUFFER_FIELDS]
    + [f"intensity.{i}" for i in range(CURVE)]
    + ["alloc.bytes", "alloc.count", "alloc.target_is_local", "alloc.target_bytes",
       "kernel.stores", "kernel.launch_row"]
    + L.NAMES
    + I.NAMES
    + C.NAMES
)
INDEX = {n: i for i, n in enumerate(NAMES)}
_OP_COLUMNS = [(o, INDEX[f"op.{o}"]) for o in OPS]

# math the code generator emits as LLVM intrinsics that vectorize (vsqrtps, vroundps, ...),
# and math it calls a scalar C library function for, one element at a time
_MATH = {"sqrt", "rsqrt", "fabs", "floor", "ceil", "round", "trunc"}
_CALL = {"exp", "exp2", "exp10", "log", "log2", "log10", "tanh", "sigmoid", "sin", "cos",
         "tan", "pow", "erf", "fmod"}
_CMP = (E.EQ, E.NE, E.LT, E.LE, E.GT, E.GE)


def _ext(f: S.For) -> int:
    return int(f.extent.value) if isinstance(f.extent, E.IntImm) else 16


# ---- index forms over the loops ------------------------------------------------------------
class _Form:
    """An integer index as {loop position: coefficient}, plus loops reached non-affinely."""
    __slots__ = ("coef", "opaque")

    def __init__(self, coef=None, opaque=()):
        self.coef = dict(coef or {})
        self.opaque = set(opaque)

    def add(self, other, scale=1):
        for k, v in other.coef.items():
            self.coef[k] = self.coef.get(k, 0) + v * scale
        self.opaque |= other.opaque


def _form(e, env) -> _Form:
    out = _Form()
    aff = linear_form(e)
    for key, c in aff.terms.items():
        if isinstance(key, Atom):
            for v in _vars(key.expr):
                f = env.get(id(v))
                if f is not None:
                    out.opaque |= set(f.coef) | f.opaque
        else:
            f = env.get(id(key))
            if f is not None:
                out.add(f, c)
    return out


def _vars(e):
    stack = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, E.Var):
            yield x
        elif isinstance(x, E.PrimExpr):
            for f in child_fields(type(x)):
                y = getattr(x, f)
                if isinstance(y, tuple):
                    stack.extend(y)
                else:
                    stack.append(y)


def _flat(buffer, indices, env) -> _Form:
    """The row-major flat index of an access, as a form over the loops."""
    shape = [int(s.value) if isinstance(s, E.IntImm) else 16 for s in buffer.shape]
    out = _Form()
    stride = 1
    for d in range(len(indices) - 1, -1, -1):
        out.add(_form(indices[d], env), stride)
        stride *= shape[d] if d < len(shape) else 1
    return out


# ---- counting operators --------------------------------------------------------------------
_ARITH = {E.Add: ("float_addsub", "int_addsub"), E.Sub: ("float_addsub", "int_addsub"),
          E.Mul: ("float_mul", "int_mul"),
          **dict.fromkeys((E.Div, E.Mod, E.FloorDiv, E.FloorMod), ("float_divmod", "int_divmod")),
          E.Min: ("float_minmax", "int_minmax"), E.Max: ("float_minmax", "int_minmax")}
_LOGIC = {**dict.fromkeys(_CMP, "compare"), **dict.fromkeys((E.And, E.Or, E.Not), "bool_op"),
          E.Select: "select", E.Cast: "cast"}


def _count_ops(e, counts, loads):
    stack = [e]
    while stack:
        x = stack.pop()
        t = type(x)
        if t is E.BufferLoad:
            loads.append(x)
            continue                                   # index arithmetic is not the value's
        keys = _ARITH.get(t)
        if keys is not None:
            counts[keys[0] if is_float(getattr(x, "dtype", "int32") or "int32") else keys[1]] += 1
        elif t in _LOGIC:
            counts[_LOGIC[t]] += 1
        elif t is E.Call:
            if x.op in ("if_then_else",):
                counts["select"] += 1
            elif x.op in _MATH:
                counts["float_math"] += 1
            elif x.op in _CALL:
                counts["float_call"] += 1
        if isinstance(x, E.PrimExpr):
            for f in child_fields(t):
                y = getattr(x, f)
                if isinstance(y, tuple):
                    stack.extend(v for v in y if isinstance(v, E.PrimExpr))
                elif isinstance(y, E.PrimExpr):
                    stack.append(y)


def _index_ops(indices, counts):
    """Add the integer arithmetic of an access's indices to `counts`."""
    c = dict.fromkeys(OPS, 0)
    sink = []
    for i in indices:
        _count_ops(i, c, sink)
    for k in ("int_addsub", "int_mul", "int_divmod", "int_minmax"):
        counts[k] += c[k]


# ---- the walk ------------------------------------------------------------------------------
class _Ctx:
    def __init__(self):
        self.loops = []             # [(For, extent)] outer to inner
        self.env = {}               # id(var) -> _Form
        self.predicated = 0
        self.stores = []            # (store, loops snapshot, env snapshot, is_init, reduce loops, pred)
        self.allocs = []            # Buffers allocated in the function
        self.launches = 0           # parallel regions entered (outermost parallel loops)


def _walk(x, ctx: _Ctx):
    if x is None:
        return
    if isinstance(x, tuple):
        for y in x:
            _walk(y, ctx)
        return
    t = type(x)
    if t is S.For:
        pos = len(ctx.loops)
        if x.kind == "parallel" and all(f.kind != "parallel" for f, _ in ctx.loops):
            ctx.launches += math.prod(e for _, e in ctx.loops)
        ctx.loops.append((x, _ext(x)))
        ctx.env[id(x.loop_var)] = _Form({pos: 1})
        _walk(x.body, ctx)
        ctx.loops.pop()
        return
    if t is S.BlockRealize:
        b = x.block
        ctx.allocs.extend(b.alloc_buffers)
        reduce_loops = set()
        for iv, val in zip(b.iter_vars, x.iter_values):
            f = _form(val, ctx.env)
            ctx.env[id(iv.var)] = f
            if iv.kind == "R":
                reduce_loops |= set(k for k, c in f.coef.items() if c) | f.opaque
        pred = not (isinstance(x.predicate, E.IntImm) and x.predicate.value == 1)
        ctx.predicated += pred
        if b.init is not None:
            _collect(b.init, ctx, True, reduce_loops)
        _collect(b.body, ctx, False, reduce_loops)
        ctx.predicated -= pred
        return
    if t is S.BufferStore:
        ctx.stores.append((x, list(ctx.loops), dict(ctx.env), False, set(), ctx.predicated > 0))
        return
    if t is S.IfThenElse:
        ctx.predicated += 1
        _walk(x.then_case, ctx)
        _walk(x.else_case, ctx)
        ctx.predicated -= 1
        return
    if t is S.Allocate or t is S.DeclBuffer:
        if t is S.DeclBuffer:
            ctx.allocs.append(x.buffer)
    if isinstance(x, S.Stmt):
        for f in child_fields(t):
            y = getattr(x, f)
            if isinstance(y, (S.Stmt, tuple)):
                _walk(y, ctx)


def _collect(body, ctx, is_init, reduce_loops):
    """The stores of a block's body (loops inside the block walked as usual)."""
    if type(body) is S.BufferStore:
        ctx.stores.append((body, list(ctx.loops), dict(ctx.env), is_init, reduce_loops,
                           ctx.predicated > 0))
        return
    n = len(ctx.stores)
    _walk(body, ctx)
    if is_init:
        ctx.stores[n:] = [(s, lp, env, True, reduce_loops, p)
                          for s, lp, env, _, _, p in ctx.stores[n:]]


def _access(buffer, form, touched, loops, execs):
    """Bytes, lines and reuse of one buffer's access, `form` its flat index (`_flat`) and
    `touched` the loops it varies with (`locality.moving`)."""
    eb = bytes_of(buffer.dtype)
    size = 1
    for s in buffer.shape:
        size *= int(s.value) if isinstance(s, E.IntImm) else 16
    uniq = 1
    for i in touched:
        uniq *= loops[i][1]
    uniq = min(uniq, size)
    if touched:
        inner = touched[-1]
        stride = abs(form.coef.get(inner, 0)) or 1
        epl = max(1, LINE // (eb * stride))
        per_line = min(epl, loops[inner][1])
    else:
        stride, per_line = 0, 1
    lines = execs / per_line
    unique_lines = max(1.0, uniq / per_line)
    reuse = [i for i in range(len(loops)) if i not in touched and loops[i][1] > 1]
    if reuse:
        r = reuse[-1]
        dist = 1
        for i in range(r + 1, len(loops)):
            dist *= loops[i][1]
        return dict(eb=eb, uniq=uniq, stride=stride, lines=lines, unique_lines=unique_lines,
                    reuse_type=1, reuse_count=loops[r][1], dist=dist)
    return dict(eb=eb, uniq=uniq, stride=stride, lines=lines, unique_lines=unique_lines,
                reuse_type=0, reuse_count=0, dist=0)


def _row(store, loops, env, is_init, reduce_loops, predicated, allocs, n_stores,
         unroll_count):
    row = [0.0] * len(NAMES)
    if is_init:
        loops_used = [(f, e) if i not in reduce_loops else (f, 1) for i, (f, e) in enumerate(loops)]
    else:
        loops_used = loops
    execs = I.runs(loops_used)
    counts = dict.fromkeys(OPS, 0)
    loads: list = []
    _count_ops(store.value, counts, loads)
    _index_ops(store.indices, counts)
    for ld in loads:
        _index_ops(ld.indices, counts)
    for o, j in _OP_COLUMNS:
        row[j] = _lg(counts[o] * execs)
    n = len(loops_used)
    for kind in LOOP_KINDS:
        idx = [i for i, (f, _) in enumerate(loops_used) if f.kind == kind]
        ext = 1
        for i in idx:
            ext *= loops_used[i][1]
        row[INDEX[f"loop.{kind}.extent"]] = _lg(ext if idx else 0)
        row[INDEX[f"loop.{kind}.count"]] = len(idx)
        row[INDEX[f"loop.{kind}.position"]] = (n - idx[-1]) if idx else 0
    par = [i for i, (f, _) in enumerate(loops_used) if f.kind == "parallel"]
    if par:
        launches = 1
        for i in range(par[0]):
            launches *= loops_used[i][1]
        row[INDEX["loop.parallel_launches"]] = _lg(launches)
        row[INDEX["loop.parallel_work"]] = _lg(execs / launches)
    row[INDEX["loop.count"]] = n
    row[INDEX["loop.outer_product"]] = _lg(execs)
    row[INDEX["loop.innermost_extent"]] = _lg(loops_used[-1][1] if loops_used else 1)
    row[INDEX["store.is_init"]] = float(is_init)
    row[INDEX["store.predicated"]] = float(predicated)
    rmw = any(ld.buffer is store.buffer for ld in loads)
    row[INDEX["store.read_modify_write"]] = float(rmw)

    # buffers: the written one, then each loaded buffer (first access of each)
    seen, accs = {}, []
    key = id(store.buffer)
    seen[key] = len(accs)
    accs.append([store.buffer, store.indices, not rmw and False or rmw, True])
    for ld in loads:
        k = id(ld.buffer)
        if k in seen:
            accs[seen[k]][2] = True
            continue
        seen[k] = len(accs)
        accs.append([ld.buffer, ld.indices, True, False])
    forms = [(_flat(b, ix, env), bytes_of(b.dtype)) for b, ix, _, _ in accs]
    moves = [L.moving(form, n) for form, _ in forms]
    info = [(_access(b, form, move, loops_used, execs), b, rd, wr)
            for (form, _), move, (b, ix, rd, wr) in zip(forms, moves, accs)]
    info.sort(key=lambda t: (-t[0]["lines"], t[1].name))
    per_iter = sum(a["eb"] for a, *_ in info)
    for j, (a, b, rd, wr) in enumerate(info[:MAX_BUFFERS]):
        p = f"buf{j}."
        row[INDEX[p + "present"]] = 1
        row[INDEX[p + "is_read"]] = float(rd)
        row[INDEX[p + "is_write"]] = float(wr)
        row[INDEX[p + "bytes"]] = _lg(execs * a["eb"])
        row[INDEX[p + "unique_bytes"]] = _lg(a["uniq"] * a["eb"])
        row[INDEX[p + "lines"]] = _lg(a["lines"])
        row[INDEX[p + "unique_lines"]] = _lg(a["unique_lines"])
        rt = a["reuse_type"] or (2 if rd and wr else 0)
        row[INDEX[p + "reuse_type"]] = rt
        row[INDEX[p + "reuse_dist_iter"]] = _lg(a["dist"])
        row[INDEX[p + "reuse_dist_bytes"]] = _lg(a["dist"] * per_iter)
        row[INDEX[p + "reuse_count"]] = _lg(a["reuse_count"])
        row[INDEX[p + "stride"]] = _lg(a["stride"])

    # arithmetic intensity within each loop, inner to outer, sampled at CURVE points
    flops_one = sum(counts[o] for o in OPS if o.startswith("float_"))
    curve = []
    for level in range(n, -1, -1):
        inner = loops_used[level:]
        it = I.runs(inner)
        by = 0
        for (form, eb), move in zip(forms, moves):
            u = 1
            for i in move:
                if i >= level:
                    u *= loops_used[i][1]
            by += u * eb
        curve.append(flops_one * it / max(1, by))
    for k, v in enumerate(sample_curve(curve)):
        row[INDEX[f"intensity.{k}"]] = v

    total = sum(bytes_of(b.dtype) * _size(b) for b in allocs)
    row[INDEX["alloc.bytes"]] = _lg(total)
    row[INDEX["alloc.count"]] = len(allocs)
    row[INDEX["alloc.target_is_local"]] = float(any(b is store.buffer for b in allocs))
    row[INDEX["alloc.target_bytes"]] = _lg(bytes_of(store.buffer.dtype) * _size(store.buffer))
    row[INDEX["kernel.stores"]] = n_stores
    accesses = [(form, eb, _size(b)) for (form, eb), (b, *_) in zip(forms, accs)]
    loc = L.locality(loops_used, accesses, moves)
    inner = I.inner(loops_used, accesses, forms[0][0], rmw, unroll_count)
    ops = {"vector": flops_one or sum(counts.values()) or 1, "call": counts["float_call"],
           "divide": counts["float_divmod"], "mul": counts["float_mul"],
           "add": counts["float_addsub"] + counts["float_minmax"]}
    lines = (2.0 ** loc["cache.l1_lines"] - 1, 2.0 ** loc["cache.l2_lines"] - 1,
             2.0 ** loc["cache.l2_scattered"] - 1)
    for part in (loc, inner.features(loops_used),
                 C.cycles(loops_used, accesses, forms[0][0], inner, ops, lines)):
        for k, v in part.items():
            row[INDEX[k]] = v
    return row


def _size(b):
    n = 1
    for s in b.shape:
        n *= int(s.value) if isinstance(s, E.IntImm) else 16
    return n


def _launch_row(launches, n_stores):
    """The cost of entering parallel regions, a row of its own (pack-sum adds it to the
    stores' time): how many times one is entered, as its executions."""
    row = [0.0] * len(NAMES)
    row[INDEX["kernel.launch_row"]] = 1
    row[INDEX["loop.parallel_launches"]] = _lg(launches)
    row[INDEX["loop.outer_product"]] = _lg(launches)
    row[INDEX["kernel.stores"]] = n_stores
    row[INDEX["cycles.thread"]] = _lg(launches * C.LAUNCH)
    return row


def extract(func) -> np.ndarray:
    """The feature rows of one PrimFunc: shape (number of stores, len(NAMES)), float32."""
    ctx = _Ctx()
    _walk(func.body, ctx)
    count = choose(func).unroll_count
    rows = [_row(s, lp, env, init, red, pred, ctx.allocs, len(ctx.stores), count)
            for s, lp, env, init, red, pred in ctx.stores]
    if ctx.launches:
        rows.append(_launch_row(ctx.launches, len(ctx.stores)))
    if not rows:
        return np.zeros((0, len(NAMES)), dtype=np.float32)
    return np.asarray(rows, dtype=np.float32)
