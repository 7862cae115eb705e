"""Expression evaluation of the reference interpreter: exact dtypes with numpy (ml_dtypes for
bfloat16); a value is a numpy scalar, or an array with one element per lane."""
from __future__ import annotations

import functools
import math

import numpy as np

from ..arith.alu import ALU, BITWISE, DIVIDES
from ..ir import expr as E
from ..ir.constants import numpy_dtype
from ..ir.dtype import is_float, is_int, lanes_of, parse_dtype
from ..ir.text import expr_text
from .errors import DIVISION_BY_ZERO, OUT_OF_BOUNDS, UNSUPPORTED, fail
from .passes import REGION_MESSAGE, region_access

LANES = "lanes"         # env key: number of lanes (None when running one iteration)
# env key: where the lanes are the lanes of a vector that a vector condition selected (one
# iteration), the numbers of those vector lanes; its vectors give those lanes only
VECTOR_LANES = "vector lanes"
TID = "tid"             # env key of the thread interpreter: each lane's thread in its block
VECTOR_WIDTH = "vector width"   # env key: that vector's number of lanes


@functools.lru_cache(maxsize=256)
def _np_dtype(dtype):
    from ..ir.dtype import element_of            # a vector holds its elements' dtype
    return np.dtype(np.int64) if dtype == "handle" else numpy_dtype(element_of(dtype))


@functools.lru_cache(maxsize=64)
def _limits(nd):
    return int(np.iinfo(nd).min), int(np.iinfo(nd).max)


def _const(dtype, value):
    nd = _np_dtype(dtype)
    if nd == np.bool_:
        return np.bool_(bool(value))
    if nd.kind in "iu":
        lo, hi = _limits(nd)
        value = (int(value) - lo) % (hi - lo + 1) + lo
    return nd.type(value)


def cast_to(x, dtype):
    nd = _np_dtype(dtype)
    if isinstance(x, np.ndarray):
        return x if x.dtype == nd else x.astype(nd)
    if isinstance(x, np.generic) and x.dtype == nd:
        return x
    return np.asarray(x).astype(nd)[()]


def _divisor(node, operand, value, dtype):
    """Stop at an integer division of `node` whose divisor `operand` is 0 in a lane that
    runs (the compiled code's checks, llvm/checks.py, report the same)."""
    if is_int(dtype) and np.any(value == 0):
        fail(DIVISION_BY_ZERO, f"divides by zero: `{expr_text(operand)}` is 0 here (the "
             "interpreter stops at the first division by 0)", node)


_MATH = {
    "exp": np.exp, "exp2": np.exp2, "log": np.log, "log2": np.log2, "log10": np.log10,
    "log1p": np.log1p, "sqrt": np.sqrt, "sin": np.sin, "cos": np.cos, "tan": np.tan,
    "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh, "asin": np.arcsin, "acos": np.arccos,
    "atan": np.arctan, "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc,
    "round": np.rint, "nearbyint": np.rint, "fabs": np.abs, "abs": np.abs,
    "exp10": lambda x: np.power(cast_to(10, x.dtype.name), x),
    "rsqrt": lambda x: cast_to(1, x.dtype.name) / np.sqrt(x),
    "sigmoid": lambda x: cast_to(1, x.dtype.name) / (cast_to(1, x.dtype.name) + np.exp(-x)),
    "erf": lambda x: np.vectorize(math.erf, otypes=[x.dtype])(x),
    "isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite,
    "bitwise_not": np.invert,
}


def _fused(a, b, c):
    """a * b + c as a fused multiply-add computes it, to within one rounding: in float64 for
    narrower floats (where the product is exact), rounded to the call's dtype after."""
    a = np.asarray(a)
    wide = np.float64 if a.dtype.itemsize < 8 else a.dtype
    return np.asarray(a, wide) * np.asarray(b, wide) + np.asarray(c, wide)


_TERNARY = {"fma": _fused}
_BIN = {
    "pow": np.power, "atan2": np.arctan2, "fmod": np.fmod, "hypot": np.hypot,
    "copysign": np.copysign, "nextafter": np.nextafter, **BITWISE,
}


class ExprEval:
    """Mixin of `Interpreter`: addresses and expressions."""

    # lanes run side by side hold scalars: a vector is evaluated one iteration at a time
    no_vectors_in_lanes = "the interpreter has no vectors (a slice, T.Ramp, T.Broadcast) " \
        "under a vector condition of T.if_then_else"

    def _address(self, buf, indices, env, node):
        st = self.storage.get(id(buf.data))
        if st is None:
            fail(UNSUPPORTED, f"buffer '{buf.name}' has no storage", node)
        if region_access(indices):
            fail(UNSUPPORTED, REGION_MESSAGE, node)
        if env[LANES] is not None and VECTOR_LANES not in env and \
                any(lanes_of(i.dtype) > 1 for i in indices):
            fail(UNSUPPORTED, self.no_vectors_in_lanes, node)
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
        size = st.array.shape[-1]
        dims = self._checked_dims(buf, size, env)
        flat = 0
        for d, (i, sd) in enumerate(zip(indices, strides)):
            v = self.eval(i, env)
            v = v.astype(np.int64) if isinstance(v, np.ndarray) else int(v)
            if dims is not None and np.size(v) and (np.min(v) < 0 or np.max(v) >= dims[d]):
                bad = np.min(v) if np.min(v) < 0 else np.max(v)
                fail(OUT_OF_BOUNDS, f"access to '{buf.name}' outside dimension {d} of extent "
                     f"{dims[d]} (index {bad})", node)
            flat = flat + v * sd
        if buf.elem_offset is not None:
            flat = flat + int(self.eval(buf.elem_offset, env))
        lo = flat.min() if isinstance(flat, np.ndarray) and flat.size else flat
        hi = flat.max() if isinstance(flat, np.ndarray) and flat.size else flat
        if isinstance(flat, np.ndarray) and not flat.size:
            return st, flat
        if lo < 0 or hi >= size:
            fail(OUT_OF_BOUNDS, f"access to '{buf.name}' outside its {size} elements "
                 f"(flat index {lo if lo < 0 else hi})", node)
        return st, flat

    def _checked_dims(self, buf, size, env):
        """The extents each index of buf is checked against, or None: only a buffer that
        spans its storage exactly (a parameter, an allocation, a view of the same size) is
        checked per dimension; a view over part of a pool or a nominal `(1,)` over a pointer
        is checked against its storage alone."""
        key = (id(buf), size)
        cache = self._dims_cache
        if key in cache:
            return cache[key]
        dims = None
        if not buf.strides and buf.elem_offset is None and \
                all(isinstance(d, E.IntImm) for d in buf.shape):
            dims = [d.value for d in buf.shape]
            if int(np.prod(dims, dtype=np.int64)) != size:
                dims = None
        cache[key] = dims
        self._keep.append(buf)          # its id stays its own while cached
        return dims

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
        return cast_to(v, e.dtype)

    def _e_Not(self, e, env):
        return np.logical_not(self.eval(e.a, env))

    def _e_Select(self, e, env):
        c = self.eval(e.condition, env)
        a, b = self.eval(e.true_value, env), self.eval(e.false_value, env)
        return cast_to(np.where(c, a, b), e.dtype) if isinstance(c, np.ndarray) or \
            isinstance(a, np.ndarray) or isinstance(b, np.ndarray) else (a if c else b)

    def _e_BufferLoad(self, e, env):
        if parse_dtype(e.dtype).lanes != 1 or any(isinstance(i, E.Ramp) for i in e.indices):
            return self._vector_load(e, env)
        st, flat = self._address(e.buffer, e.indices, env, e)
        if st.lane_key is not None:
            return st.array[env[st.lane_key], flat]
        return st.array[flat]

    def _vector_store_lanes(self, s, env):
        """The env a vector store of `s` runs in where lanes run side by side: each lane
        widened to the store's vector lanes, so that each vector lane is a lane."""
        w = lanes_of(s.value.dtype)
        L = env[LANES]
        if w == 1 or L is None or VECTOR_LANES in env:
            return env
        out = {k: np.repeat(v, w) if isinstance(v, np.ndarray) else v for k, v in env.items()}
        out[LANES] = L * w
        out[VECTOR_LANES] = np.tile(np.arange(w), L)
        out[VECTOR_WIDTH] = w
        return out

    def _vector_load(self, e, env):
        self._vector_here(e, env)
        st, flat = self._address(e.buffer, e.indices, env, e)
        return st.array[flat]

    def _vector_here(self, e, env):
        if env[LANES] is not None and VECTOR_LANES not in env:
            fail(UNSUPPORTED, self.no_vectors_in_lanes, e)
        w = env.get(VECTOR_WIDTH)
        lanes = lanes_of(e.dtype)
        if w is not None and lanes != w:
            fail(UNSUPPORTED, f"a vector of {lanes} lanes where the interpreter runs the "
                 f"{w} lanes of the vector around it", e)

    def _e_Ramp(self, e, env):
        self._vector_here(e, env)
        base, stride = self.eval(e.base, env), self.eval(e.stride, env)
        lanes = env.get(VECTOR_LANES, np.arange(e.lanes))
        return (lanes * stride + base).astype(_np_dtype(e.base.dtype))

    def _e_Broadcast(self, e, env):
        self._vector_here(e, env)
        v = self.eval(e.value, env)
        n = len(env[VECTOR_LANES]) if VECTOR_LANES in env else e.lanes
        return np.array(np.broadcast_to(v, (n,)))

    def _e_Let(self, e, env):
        e2 = dict(env)
        e2[id(e.var)] = self.eval(e.value, env)
        return self.eval(e.body, e2)

    def _binary(self, e, env):
        a, b = self.eval(e.a, env), self.eval(e.b, env)
        t = type(e)
        if t in (E.And, E.Or):
            return (np.logical_and if t is E.And else np.logical_or)(a, b)
        if t in E.COMPARISONS:
            return ALU[t](a, cast_to(b, e.a.dtype), is_int(e.a.dtype))
        dt = e.dtype
        a, b = cast_to(a, dt), cast_to(b, dt)
        fn = ALU.get(t)
        if fn is None:
            fail(UNSUPPORTED, f"the interpreter cannot evaluate {t.__name__}", e)
        if t in DIVIDES:
            _divisor(e, e.b, b, dt)
        with np.errstate(all="ignore"):
            r = fn(a, b, is_int(dt))
        return cast_to(r, dt)

    def _e_Call(self, e, env):
        op = e.op
        if e.callee is not None:
            return self.call_function(e, env)
        if op == "if_then_else":
            return self._if_then_else(e, env)
        if op in ("min_value", "max_value"):
            nd = _np_dtype(e.dtype)
            info = np.finfo(nd) if is_float(e.dtype) else np.iinfo(nd)
            return nd.type(info.min if op == "min_value" else info.max)
        if op == "likely":
            return self.eval(e.args[0], env)
        if op == "reinterpret":
            r = np.ascontiguousarray(self.eval(e.args[0], env)).view(_np_dtype(e.dtype))
            if parse_dtype(e.args[0].dtype).lanes > 1 and parse_dtype(e.dtype).lanes == 1:
                r = r[..., 0]           # the bits of int8x4 as one int32: one value again
            return r[()] if r.ndim == 0 else r
        if op != "ceildiv" and op not in _MATH and op not in _BIN and op not in _TERNARY:
            # (said before the operands are evaluated: one may be no value here, as a
            # register buffer's data in the thread interpreter)
            fail(UNSUPPORTED, f"the interpreter has no implementation of T.{op}", e)
        args = [self.eval(a, env) for a in e.args]
        with np.errstate(all="ignore"):
            if op == "ceildiv":
                dt = e.args[0].dtype
                a, b = cast_to(args[0], dt), cast_to(args[1], dt)
                _divisor(e, e.args[1], b, dt)
                return cast_to(-np.floor_divide(-a, b), dt)
            elif op in _MATH:
                r = _MATH[op](args[0])
            elif op in _TERNARY:
                r = _TERNARY[op](*args)
            else:
                r = _BIN[op](args[0], cast_to(args[1], e.args[0].dtype))
        return cast_to(r, e.dtype)

    def _if_then_else(self, e, env):
        c = self.eval(e.args[0], env)
        if not isinstance(c, np.ndarray):
            return cast_to(self.eval(e.args[1] if bool(c) else e.args[2], env), e.dtype)
        c = c.astype(bool)
        out = np.empty(c.shape, dtype=_np_dtype(e.dtype))
        vector = env[LANES] is None           # a vector condition: its lanes, one iteration
        for mask, arg in ((c, e.args[1]), (~c, e.args[2])):
            sub = self._compress(env, mask)
            if sub is not None:
                if vector and sub is env:
                    sub = dict(env, **{LANES: len(mask)})
                if vector:
                    sub[VECTOR_LANES] = np.flatnonzero(mask)
                    sub[VECTOR_WIDTH] = len(mask)
                out[mask] = cast_to(self.eval(arg, sub), e.dtype)
        return out
