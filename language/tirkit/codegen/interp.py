"""Reference interpreter: executes TensorIR (blocks included) exactly with numpy.

It is the oracle for the code generator and for schedule primitives, meant for small
shapes.  Semantics are TensorIR's: a block binds its iterators, runs its init when every
reduction iterator is at the start of its domain, then its body; `T.where` masks it.

To stay usable beyond toy sizes, a loop whose iterations provably touch disjoint memory is
run in lockstep ("lanes"): every variable that varies across lanes holds a numpy array, and
conditions compress the lanes.  Whether a loop may run in lanes is decided per loop from its
accesses (`_lane_safe`); everything else runs one iteration at a time, in program order.
Every value keeps its exact dtype (numpy scalars and arrays, ml_dtypes for bfloat16).
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from ..diagnostics import TirkitError
from ..ir import expr as E
from ..ir import stmt as S
from ..ir.constants import numpy_dtype
from ..ir.dtype import is_float, is_int, parse_dtype
from ..ir.visit import walk
from .arith import affine, bound, separates
from .errors import ARGUMENT, OUT_OF_BOUNDS, UNSUPPORTED, fail

_LANES = "lanes"         # env key: number of lanes (None when running one iteration)
MAX_LANES = 1 << 22      # more iterations than this in lockstep would not fit in memory


class InterpError(TirkitError):
    pass


_ND: dict = {}
_LIMITS: dict = {}


def _np_dtype(dtype):
    nd = _ND.get(dtype)
    if nd is None:
        nd = _ND[dtype] = np.dtype(np.int64) if dtype == "handle" else numpy_dtype(dtype)
    return nd


def _const(dtype, value):
    nd = _np_dtype(dtype)
    if nd == np.bool_:
        return np.bool_(bool(value))
    if nd.kind in "iu":
        lim = _LIMITS.get(nd)
        if lim is None:
            lim = _LIMITS[nd] = (int(np.iinfo(nd).min), int(np.iinfo(nd).max))
        lo, hi = lim
        value = (int(value) - lo) % (hi - lo + 1) + lo
    return nd.type(value)


def _as(x, dtype):
    nd = _np_dtype(dtype)
    if isinstance(x, np.ndarray):
        return x if x.dtype == nd else x.astype(nd)
    if isinstance(x, np.generic) and x.dtype == nd:
        return x
    return np.asarray(x).astype(nd)[()]


def _any(m):
    return bool(np.any(m))


# --- numpy implementations of T. calls (dtype kept by _as) ---------------------------
def _sigmoid(x):
    return _as(1 / (1 + np.exp(-x.astype(np.float64))), x.dtype.name) \
        if x.dtype.itemsize != 2 else None


_MATH = {
    "exp": np.exp, "exp2": np.exp2, "log": np.log, "log2": np.log2, "log10": np.log10,
    "log1p": np.log1p, "sqrt": np.sqrt, "sin": np.sin, "cos": np.cos, "tan": np.tan,
    "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh, "asin": np.arcsin, "acos": np.arccos,
    "atan": np.arctan, "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc,
    "round": np.rint, "nearbyint": np.rint, "fabs": np.abs, "abs": np.abs,
    "exp10": lambda x: np.power(_as(10, x.dtype.name), x),
    "rsqrt": lambda x: _as(1, x.dtype.name) / np.sqrt(x),
    "sigmoid": lambda x: _as(1, x.dtype.name) / (_as(1, x.dtype.name) + np.exp(-x)),
    "erf": lambda x: np.vectorize(math.erf, otypes=[x.dtype])(x),
    "isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite,
    "bitwise_not": np.invert,
}
_BIN = {
    "pow": np.power, "atan2": np.arctan2, "fmod": np.fmod, "hypot": np.hypot,
    "copysign": np.copysign, "nextafter": np.nextafter,
    "bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or,
    "bitwise_xor": np.bitwise_xor, "shift_left": np.left_shift,
    "shift_right": np.right_shift,
}


def _truncdiv(a, b):
    q = np.floor_divide(a, b)
    r = a - q * b
    fix = (r != 0) & ((a < 0) != (b < 0))
    return np.where(fix, q + 1, q).astype(np.result_type(a, b))


class _Storage:
    __slots__ = ("array", "lane_key")

    def __init__(self, array, lane_key=None):
        self.array, self.lane_key = array, lane_key


class Interpreter:
    """Run one PrimFunc: `Interpreter(func, module).run(arrays, scalars)`."""

    def __init__(self, func: S.PrimFunc, module: S.IRModule | None = None, lanes=True):
        self.func, self.module = func, module
        self.storage: dict = {}
        self.lanes_enabled = lanes
        self._safe_cache: dict = {}
        self._keep: list = []
        self._strides: dict = {}
        self._lane_counter = 0

    # ---- entry --------------------------------------------------------------------
    def run(self, arrays, scalars=None):
        f = self.func
        env = {_LANES: None}
        bufs = [f.buffer_of(p) for p in f.params if f.buffer_of(p) is not None]
        if len(arrays) != len(bufs):
            fail(ARGUMENT, f"'{f.name}' takes {len(bufs)} arrays, got {len(arrays)}", f)
        scalar_params = [p for p in f.params if f.buffer_of(p) is None]
        for p, v in zip(scalar_params, scalars or ()):
            env[id(p)] = _const(p.dtype, v)
        for b, a in zip(bufs, arrays):
            if not isinstance(a, np.ndarray) or not a.flags.c_contiguous:
                fail(ARGUMENT, f"buffer '{b.name}' needs a C-contiguous numpy array", b)
            if a.dtype != _np_dtype(b.dtype):
                fail(ARGUMENT, f"buffer '{b.name}' is {b.dtype}, got an array of {a.dtype}", b)
            if a.ndim != len(b.shape):
                fail(ARGUMENT, f"buffer '{b.name}' has {len(b.shape)} dimensions, got "
                     f"{a.ndim}", b)
            for d, s in enumerate(b.shape):
                if isinstance(s, E.Var) and id(s) not in env:
                    env[id(s)] = _const(s.dtype, a.shape[d])
            for d, s in enumerate(b.shape):
                if int(self.eval(s, env)) != a.shape[d]:
                    fail(ARGUMENT, f"buffer '{b.name}' dimension {d} is "
                         f"{int(self.eval(s, env))}, got {a.shape[d]}", b)
            self.storage[id(b.data)] = _Storage(a.reshape(-1))
        self.exec(f.body, env)
        return arrays

    # ---- lanes --------------------------------------------------------------------
    def _compress(self, env, mask):
        if not isinstance(mask, np.ndarray):
            return env if bool(mask) else None
        if mask.all():
            return env
        if not mask.any():
            return None
        out = {}
        for k, v in env.items():
            out[k] = v[mask] if isinstance(v, np.ndarray) else v
        out[_LANES] = int(mask.sum())
        return out

    def _widen(self, env, var, lo, n):
        """A new env where var takes n values per existing lane."""
        L = env[_LANES]
        out = {}
        if L is None:
            out.update(env)
            out[id(var)] = (np.arange(n, dtype=np.int64) + int(lo)).astype(_np_dtype(var.dtype))
            out[_LANES] = n
            return out
        for k, v in env.items():
            out[k] = np.repeat(v, n) if isinstance(v, np.ndarray) else v
        out[id(var)] = np.tile((np.arange(n, dtype=np.int64) + int(lo)).astype(
            _np_dtype(var.dtype)), L)
        out[_LANES] = L * n
        return out

    def _lane_safe(self, loop: S.For) -> bool:
        """May the iterations of `loop` run in lockstep?  True when every buffer the body
        writes (and did not allocate itself) is accessed at one index tuple only, and some
        dimension of it separates the iterations whatever the inner loops do."""
        key = id(loop)
        if key in self._safe_cache:
            return self._safe_cache[key]
        ok = self._lane_safe_uncached(loop)
        self._safe_cache[key] = ok
        return ok

    def _lane_safe_uncached(self, loop):
        from .passes.blocks import blocks_to_loops, predicates_to_conditions
        from .passes.compact import _skey
        if not self.lanes_enabled:
            return False
        try:
            body = blocks_to_loops(predicates_to_conditions(loop.body))
        except TirkitError:
            return False
        bad, private, ranges = [], set(), {}
        acc: dict = {}
        written = set()

        def fn(x):
            t = type(x)
            if t in (S.While, E.Ramp, E.Broadcast, S.AssertStmt):
                bad.append(x)
            elif t is S.Allocate or t is S.AllocateConst:
                private.add(id(x.buffer_var))
            elif t is S.For:
                if isinstance(x.min, E.IntImm) and isinstance(x.extent, E.IntImm):
                    ranges[id(x.loop_var)] = (x.min.value, x.min.value + x.extent.value - 1)
                else:
                    bad.append(x)
            elif t is E.BufferLoad or t is S.BufferStore:
                if parse_dtype(x.buffer.dtype).lanes != 1:
                    bad.append(x)
                acc.setdefault(id(x.buffer.data), []).append(x)
                if t is S.BufferStore:
                    written.add(id(x.buffer.data))
            elif t is E.Call and x.op not in _MATH and x.op not in _BIN and x.op not in (
                    "if_then_else", "min_value", "max_value", "reinterpret", "likely",
                    "ceildiv"):
                bad.append(x)
        walk(body, fn)
        if bad:
            return False
        v = id(loop.loop_var)
        for data in written:
            if data in private:
                continue
            accs = acc[data]
            if len({id(a.buffer) for a in accs}) != 1:
                return False
            if not separates([a.indices for a in accs], v, ranges, _skey):
                return False
        return True

    def _interchanged(self, s):
        """`for a: for b: body` as `for b: for a: body` when b may run in lanes around a
        (its iterations touch disjoint memory whatever a is), else None."""
        key = ("swap", id(s))
        if key in self._safe_cache:
            return self._safe_cache[key]
        out = None
        m = s.body
        if isinstance(m, S.For) and isinstance(m.min, E.IntImm) and \
                isinstance(m.extent, E.IntImm) and m.extent.value > 1 and \
                m.kind != "thread_binding" and s.kind != "thread_binding":
            inner = S.For(s.loop_var, s.min, s.extent, s.kind, m.body, s.thread_tag,
                          s.annotations, span=s.span)
            cand = S.For(m.loop_var, m.min, m.extent, m.kind, inner, m.thread_tag,
                         m.annotations, span=m.span)
            if self._lane_safe(cand):
                out = cand
                self._keep.append(cand)      # ids in the caches stay valid
        self._safe_cache[key] = out
        return out

    # ---- statements ---------------------------------------------------------------
    def exec(self, s, env):
        if env is None:
            return
        m = getattr(self, "_s_" + type(s).__name__, None)
        if m is None:
            fail(UNSUPPORTED, f"the interpreter cannot run {type(s).__name__}", s)
        m(s, env)

    def _s_SeqStmt(self, s, env):
        for x in s.seq:
            self.exec(x, env)

    def _s_Evaluate(self, s, env):
        if isinstance(s.value, E.Call):
            self.eval(s.value, env)

    def _s_For(self, s, env):
        lo = self.eval(s.min, env)
        ext = self.eval(s.extent, env)
        if s.kind == "thread_binding":
            fail(UNSUPPORTED, "the interpreter runs CPU kernels only (thread binding)", s)
        uniform = not isinstance(lo, np.ndarray) and not isinstance(ext, np.ndarray)
        fits = uniform and (env[_LANES] or 1) * int(ext) <= MAX_LANES
        if fits and int(ext) > 1 and self._lane_safe(s):
            self.exec(s.body, self._widen(env, s.loop_var, lo, int(ext)))
            return
        swapped = self._interchanged(s) if fits else None
        if swapped is not None:
            self.exec(swapped, env)
            return
        dt = _np_dtype(s.loop_var.dtype)
        if uniform:
            lo_i = int(lo)
            for i in range(lo_i, lo_i + int(ext)):
                e2 = dict(env)
                e2[id(s.loop_var)] = dt.type(i)
                self.exec(s.body, e2)
            return
        lo_a = np.broadcast_to(lo, (env[_LANES],)).astype(np.int64)
        end_a = lo_a + np.broadcast_to(ext, (env[_LANES],)).astype(np.int64)
        for i in range(int(lo_a.min()), int(end_a.max()) if env[_LANES] else 0):
            e2 = self._compress(env, (lo_a <= i) & (i < end_a))
            if e2 is None:
                continue
            e2 = dict(e2)
            e2[id(s.loop_var)] = dt.type(i)
            self.exec(s.body, e2)

    def _s_While(self, s, env):
        if env[_LANES] is not None:
            fail(UNSUPPORTED, "the interpreter runs while loops one iteration at a time", s)
        while bool(self.eval(s.condition, env)):
            self.exec(s.body, env)

    def _s_IfThenElse(self, s, env):
        c = self.eval(s.condition, env)
        if isinstance(c, np.ndarray):
            c = c.astype(bool)
            self.exec(s.then_case, self._compress(env, c))
            if s.else_case is not None:
                self.exec(s.else_case, self._compress(env, ~c))
        elif bool(c):
            self.exec(s.then_case, env)
        elif s.else_case is not None:
            self.exec(s.else_case, env)

    def _s_LetStmt(self, s, env):
        e2 = dict(env)
        e2[id(s.var)] = self.eval(s.value, env)
        self.exec(s.body, e2)

    def _s_AssertStmt(self, s, env):
        if not np.all(self.eval(s.condition, env)):
            fail(UNSUPPORTED, "assertion failed in the kernel", s)
        self.exec(s.body, env)

    def _s_AttrStmt(self, s, env):
        self.exec(s.body, env)

    def _s_DeclBuffer(self, s, env):
        if id(s.buffer.data) not in self.storage:
            self._alloc(s.buffer.data, s.buffer.dtype, s.buffer.shape, env)
        self.exec(s.body, env)

    def _s_Allocate(self, s, env):
        self._alloc(s.buffer_var, s.dtype, s.extents, env)
        self.exec(s.body, env)

    def _s_AllocateConst(self, s, env):
        table = self.module.constants if self.module is not None else None
        if table is None or s.const_name not in table:
            fail(UNSUPPORTED, f"constant '{s.const_name}' is not in the constant table", s)
        arr = np.array(table[s.const_name].array(), dtype=_np_dtype(s.dtype)).reshape(-1)
        self.storage[id(s.buffer_var)] = _Storage(arr)
        self.exec(s.body, env)

    def _alloc(self, data_var, dtype, shape, env):
        n = 1
        for d in shape:
            n *= int(self.eval(d, env))
        nd = _np_dtype(dtype)
        fill = np.nan if nd.kind == "f" or is_float(dtype) else 0x5A
        L = env[_LANES]
        if L is None:
            self.storage[id(data_var)] = _Storage(np.full(n, fill, dtype=nd))
        else:
            self._lane_counter += 1
            key = ("lane", self._lane_counter)
            env[key] = np.arange(L)
            self.storage[id(data_var)] = _Storage(np.full((L, n), fill, dtype=nd), key)

    def _s_BufferStore(self, s, env):
        st, flat = self._address(s.buffer, s.indices, env, s)
        val = _as(self.eval(s.value, env), s.buffer.dtype)
        if st.lane_key is not None:
            st.array[env[st.lane_key], flat] = val
        else:
            st.array[flat] = val

    def _s_BlockRealize(self, s, env):
        p = self.eval(s.predicate, env)
        env = self._compress(env, p.astype(bool) if isinstance(p, np.ndarray) else p)
        if env is None:
            return
        b = s.block
        if b.match_buffers:
            key = ("match", id(b))
            if key not in self._safe_cache:
                from .passes.blocks import inline_match_buffers
                nb, ni = inline_match_buffers(b)
                self._safe_cache[key] = dataclasses.replace(b, body=nb, init=ni,
                                                            match_buffers=())
                self._keep.append(b)
            b = self._safe_cache[key]
        vals = [self.eval(v, env) for v in s.iter_values]
        e2 = dict(env)
        for iv, v in zip(b.iter_vars, vals):
            e2[id(iv.var)] = _as(v, iv.var.dtype)
        for buf in b.alloc_buffers:
            self._alloc(buf.data, buf.dtype, buf.shape, e2)
        if b.init is not None:
            first = True
            for iv in b.iter_vars:
                if iv.kind == "R":
                    c = e2[id(iv.var)] == self.eval(iv.dom.min, e2)
                    first = c if first is True else (first & c)
            self.exec(b.init, self._compress(e2, first))
        self.exec(b.body, e2)

    def _s_Block(self, s, env):
        self.exec(S.BlockRealize((), E.IntImm("bool", 1), s), env)

    # ---- expressions --------------------------------------------------------------
    def _address(self, buf, indices, env, node):
        st = self.storage.get(id(buf.data))
        if st is None:
            fail(UNSUPPORTED, f"buffer '{buf.name}' has no storage", node)
        strides = self._strides.get(id(buf))
        if strides is None:
            if buf.strides:
                strides = [int(self.eval(x, env)) for x in buf.strides]
            else:
                strides, acc = [], 1
                for d in reversed(buf.shape):
                    strides.append(acc)
                    acc *= int(self.eval(d, env))
                strides.reverse()
            if all(isinstance(x, E.IntImm) for x in tuple(buf.strides) + tuple(buf.shape)):
                self._strides[id(buf)] = strides
                self._keep.append(buf)
        flat = 0
        if len(indices) == 1 and isinstance(indices[0], E.ArrayExpr) and \
                not indices[0].elements:
            indices = ()              # A[()]: zero-dimensional
        for i, sd in zip(indices, strides):
            v = self.eval(i, env)
            v = v.astype(np.int64) if isinstance(v, np.ndarray) else int(v)
            flat = flat + v * sd
        if buf.elem_offset is not None:
            flat = flat + int(self.eval(buf.elem_offset, env))
        size = st.array.shape[-1]
        lo = flat.min() if isinstance(flat, np.ndarray) and flat.size else flat
        hi = flat.max() if isinstance(flat, np.ndarray) and flat.size else flat
        if isinstance(flat, np.ndarray) and not flat.size:
            return st, flat
        if lo < 0 or hi >= size:
            fail(OUT_OF_BOUNDS, f"access to '{buf.name}' outside its {size} elements "
                 f"(flat index {lo if lo < 0 else hi})", node)
        return st, flat

    def eval(self, e, env):
        m = getattr(self, "_e_" + type(e).__name__, None)
        if m is None:
            if isinstance(e, E.BinaryOp):
                return self._binary(e, env)
            fail(UNSUPPORTED, f"the interpreter cannot evaluate {type(e).__name__}", e)
        return m(e, env)

    def _e_IntImm(self, e, env):
        return _const(e.dtype, e.value)

    def _e_FloatImm(self, e, env):
        return _const(e.dtype, e.value)

    def _e_StringImm(self, e, env):
        return e.value

    def _e_Var(self, e, env):
        try:
            return env[id(e)]
        except KeyError:
            fail(UNSUPPORTED, f"variable '{e.name}' has no value", e)

    _e_SizeVar = _e_Var

    def _e_Cast(self, e, env):
        v = self.eval(e.value, env)
        if e.dtype == "bool":
            return v != 0
        return _as(v, e.dtype)

    def _e_Not(self, e, env):
        return np.logical_not(self.eval(e.a, env))

    def _e_Select(self, e, env):
        c = self.eval(e.condition, env)
        a, b = self.eval(e.true_value, env), self.eval(e.false_value, env)
        return _as(np.where(c, a, b), e.dtype) if isinstance(c, np.ndarray) or \
            isinstance(a, np.ndarray) or isinstance(b, np.ndarray) else (a if c else b)

    def _e_BufferLoad(self, e, env):
        if parse_dtype(e.dtype).lanes != 1 or any(isinstance(i, E.Ramp) for i in e.indices):
            return self._vector_load(e, env)
        st, flat = self._address(e.buffer, e.indices, env, e)
        if st.lane_key is not None:
            return st.array[env[st.lane_key], flat]
        return st.array[flat]

    def _vector_load(self, e, env):
        if env[_LANES] is not None:
            fail(UNSUPPORTED, "vector loads run one iteration at a time", e)
        st, flat = self._address(e.buffer, e.indices, env, e)
        return st.array[flat]

    def _e_Ramp(self, e, env):
        base, stride = self.eval(e.base, env), self.eval(e.stride, env)
        return (np.arange(e.lanes) * stride + base).astype(_np_dtype(e.base.dtype))

    def _e_Broadcast(self, e, env):
        return np.full(e.lanes, self.eval(e.value, env))

    def _e_Let(self, e, env):
        e2 = dict(env)
        e2[id(e.var)] = self.eval(e.value, env)
        return self.eval(e.body, e2)

    def _binary(self, e, env):
        a, b = self.eval(e.a, env), self.eval(e.b, env)
        t = type(e)
        if t in (E.And, E.Or):
            return (np.logical_and if t is E.And else np.logical_or)(a, b)
        if t in (E.EQ, E.NE, E.LT, E.LE, E.GT, E.GE):
            b = _as(b, e.a.dtype)
            return {E.EQ: np.equal, E.NE: np.not_equal, E.LT: np.less, E.LE: np.less_equal,
                    E.GT: np.greater, E.GE: np.greater_equal}[t](a, b)
        dt = e.dtype
        a, b = _as(a, dt), _as(b, dt)
        with np.errstate(all="ignore"):
            if t is E.Add:
                r = a + b
            elif t is E.Sub:
                r = a - b
            elif t is E.Mul:
                r = a * b
            elif t is E.Div:
                r = _truncdiv(a, b) if is_int(dt) else a / b
            elif t is E.Mod:
                r = np.fmod(a, b)
            elif t is E.FloorDiv:
                r = np.floor_divide(a, b) if is_int(dt) else np.floor(a / b)
            elif t is E.FloorMod:
                r = np.mod(a, b) if is_int(dt) else a - np.floor(a / b) * b
            elif t is E.Min:
                r = np.where(a < b, a, b)
            elif t is E.Max:
                r = np.where(a > b, a, b)
            else:
                fail(UNSUPPORTED, f"the interpreter cannot evaluate {t.__name__}", e)
        return _as(r, dt)

    def _e_Call(self, e, env):
        op = e.op
        if op == "if_then_else":
            return self._if_then_else(e, env)
        if op in ("min_value", "max_value"):
            nd = _np_dtype(e.dtype)
            info = np.finfo(nd) if is_float(e.dtype) else np.iinfo(nd)
            return nd.type(info.min if op == "min_value" else info.max)
        if op == "likely":
            return self.eval(e.args[0], env)
        if op == "reinterpret":
            v = self.eval(e.args[0], env)
            return np.asarray(v).view(_np_dtype(e.dtype))[()]
        args = [self.eval(a, env) for a in e.args]
        with np.errstate(all="ignore"):
            if op == "ceildiv":
                dt = e.args[0].dtype
                a, b = _as(args[0], dt), _as(args[1], dt)
                return _as(-np.floor_divide(-a, b), dt)
            elif op in _MATH:
                r = _MATH[op](args[0])
            elif op in _BIN:
                r = _BIN[op](args[0], _as(args[1], e.args[0].dtype))
            else:
                fail(UNSUPPORTED, f"the interpreter has no implementation of T.{op}", e)
        return _as(r, e.dtype)

    def _if_then_else(self, e, env):
        c = self.eval(e.args[0], env)
        if not isinstance(c, np.ndarray):
            return _as(self.eval(e.args[1] if bool(c) else e.args[2], env), e.dtype)
        c = c.astype(bool)
        out = np.empty(c.shape, dtype=_np_dtype(e.dtype))
        for mask, arg in ((c, e.args[1]), (~c, e.args[2])):
            sub = self._compress(env, mask)
            if sub is not None:
                out[mask] = _as(self.eval(arg, sub), e.dtype)
        return out


def run_reference(func: S.PrimFunc, arrays, scalars=None, module=None, lanes=True):
    """Run func on numpy arrays in place (outputs are written into them)."""
    Interpreter(func, module, lanes=lanes).run(arrays, scalars)
    return arrays
