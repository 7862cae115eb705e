"""Reference interpreter: executes TensorIR (blocks included) exactly with numpy.

It is the oracle for the code generator and for schedule primitives, meant for small
shapes.  Semantics are TensorIR's: a block binds its iterators, runs its init when every
reduction iterator is at the start of its domain, then its body; `T.where` masks it.

To stay usable beyond toy sizes, a loop whose iterations provably touch disjoint memory is
run in lockstep ("lanes"): every variable that varies across lanes holds a numpy array, and
conditions compress the lanes.  Whether a loop may run in lanes is decided per loop from its
accesses (interp_lanes.py); everything else runs one iteration at a time, in program order.
Every value keeps its exact dtype (numpy scalars and arrays, ml_dtypes for bfloat16).

`T.ret(value)`, `break` and `continue` (see passes/control.py) leave through Python
exceptions caught by the function and the loops; a loop that contains one never runs in
lanes.  A function that returns a value gives it back from `run_reference` (and keeps it in
`Interpreter.value`).  Operators spelled as calls (`T.Div(a, b)`) run as the operators they
stand for: the interpreter runs the code generator's `operator_calls` pass first.  A call
of another function of the module (`Module.f(x, A.data)`, module_calls.py) runs f in an
interpreter of its own, once per lane where its arguments vary across lanes.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ..ir import expr as E
from ..ir import stmt as S
from ..ir.dtype import is_float, parse_dtype
from .errors import ARGUMENT, UNSUPPORTED, fail
from .module_calls import MAX_DEPTH, callee
from .runtime import require_memory
from .passes.control import BREAK, RET, check_control_flow, control_op, return_dtype
from .passes.flatten import storage_extents
from .passes.simplify import is_region_declaration
from .passes.attrs import is_attr_statement
from .interp_exprs import LANES, ExprEval, cast_to, _const, _np_dtype
from .interp_lanes import LanesMixin

MAX_LANES = 1 << 22      # more iterations than this in lockstep would not fit in memory


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


class _Return(Exception):
    def __init__(self, value):
        super().__init__()
        self.value = value


class _Storage:
    __slots__ = ("array", "lane_key")

    def __init__(self, array, lane_key=None):
        self.array, self.lane_key = array, lane_key


class Interpreter(LanesMixin, ExprEval):
    """Run one PrimFunc: `Interpreter(func, module).run(arrays, scalars)`."""

    def __init__(self, func: S.PrimFunc, module: S.IRModule | None = None, lanes=True):
        from .handles import with_param_buffers
        from .passes.operator_calls import operator_calls
        func = with_param_buffers(func, module)    # a handle one buffer views: its parameter
        from ..tensorize.library import with_desc_semantics
        body = operator_calls(func.body)           # T.Div(a, b) is a / b, etc.
        body = with_desc_semantics(body)           # a tensorized block runs its desc
        if body is not func.body:
            func = dataclasses.replace(func, body=body)
        self.func, self.module = func, module
        self.storage: dict = {}
        self.lanes_enabled = lanes
        self._safe_cache: dict = {}
        self._keep: list = []
        self._dims_cache: dict = {}     # (id(buffer), storage size) -> checked extents
        self._strides: dict = {}
        self._lane_counter = 0
        self._decl_owned = set()        # data of T.decl_buffers that allocate their own
        self.ret_dtype = return_dtype(func)
        self.value = None             # what T.ret returned (None: nothing)
        self._callees: dict = {}      # call op ("@f") -> the Interpreter of a called function
        self._active = False          # running a call (a recursive call gets its own)
        self.depth = 0                # how deep in calls this interpreter runs

    # ---- entry --------------------------------------------------------------------
    def run(self, arrays, scalars=None):
        f = self.func
        check_control_flow(f)
        env = {LANES: None}
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
        self.value = None
        try:
            self.exec(f.body, env)
        except _Return as r:
            self.value = r.value
        return arrays

    # ---- calls of the module's functions (module_calls.py) ---------------------------
    def call_function(self, e, env):
        """`Module.f(args)`: f run by an interpreter of its own (per lane, where the
        arguments vary across lanes), its scalars by value and a buffer by its storage."""
        sub = self._callees.get(e.op)          # found once per interpreter, not per call
        if sub is None or sub._active:
            f = callee(self.module, e)
            if self.depth >= MAX_DEPTH:
                fail(UNSUPPORTED, f"calls nest deeper than {MAX_DEPTH} (a recursion that does "
                     "not end?)", e)
            sub = Interpreter(f, self.module, lanes=self.lanes_enabled)
            check_control_flow(sub.func)
            sub.depth = self.depth + 1
            self._callees.setdefault(e.op, sub)
        f = sub.func
        if len(e.args) != len(f.params):
            fail(ARGUMENT, f"'{f.name}' takes {len(f.params)} arguments, got {len(e.args)}", e)
        args = [self._pointer(a, env) if a.dtype == "handle" else self.eval(a, env)
                for a in e.args]
        lanes = [len(a) for a in args if isinstance(a, np.ndarray) and a.ndim == 1]
        try:
            if not lanes:
                return cast_to(sub.invoke(args, e), e.dtype)
            out = [sub.invoke([a[i] if isinstance(a, np.ndarray) and a.ndim == 1 else a
                               for a in args], e) for i in range(lanes[0])]
        except RecursionError:          # nested statements of nested calls: Python's stack
            fail(UNSUPPORTED, f"calls nest deeper than the interpreter's stack holds "
                 f"({self.depth + 1} deep here)", e)
        return cast_to(np.array(out), e.dtype)

    def _pointer(self, a, env):
        """The storage a pointer argument addresses: a buffer's data, or `T.address_of(A[i])`
        (a view from that element on)."""
        st, offset = None, 0
        if isinstance(a, E.Var):
            st = self.storage.get(id(a))
        elif isinstance(a, E.Call) and a.op == "address_of" and \
                isinstance(a.args[0], E.BufferLoad) and env[LANES] is None:
            load = a.args[0]
            st, offset = self._address(load.buffer, load.indices, env, a)
        if st is None or st.lane_key is not None or env[LANES] is not None or \
                isinstance(offset, np.ndarray):
            fail(UNSUPPORTED, "the interpreter passes a function a buffer's data or "
                 "`T.address_of` an element, of a buffer it holds once, outside threads "
                 "and lanes", a)
        return st if offset == 0 else _Storage(st.array[int(offset):])

    def invoke(self, args, call):
        """Run this function for a call with argument values `args` (a buffer's _Storage
        for a buffer parameter); the value it returns (0 where it returns none)."""
        f = self.func
        env = {LANES: None}
        for p, v in zip(f.params, args):
            buf = f.buffer_of(p)
            if (buf is not None) != isinstance(v, _Storage):
                fail(ARGUMENT, f"'{f.name}' takes '{p.name}' as "
                     f"{'a buffer' if buf is not None else p.dtype}", call)
            if buf is not None:
                self.storage[id(buf.data)] = v
            else:
                env[id(p)] = cast_to(v, p.dtype)
        self.value, self._active = None, True
        try:
            self.exec(f.body, env)
        except _Return as r:
            self.value = r.value
        finally:
            self._active = False
        return self.value if self.value is not None else _const(call.dtype, 0)

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
        out[LANES] = int(mask.sum())
        return out

    def _widen(self, env, var, lo, n):
        """A new env where var takes n values per existing lane."""
        L = env[LANES]
        out = {}
        if L is None:
            out.update(env)
            out[id(var)] = (np.arange(n, dtype=np.int64) + int(lo)).astype(_np_dtype(var.dtype))
            out[LANES] = n
            return out
        for k, v in env.items():
            out[k] = np.repeat(v, n) if isinstance(v, np.ndarray) else v
        out[id(var)] = np.tile((np.arange(n, dtype=np.int64) + int(lo)).astype(
            _np_dtype(var.dtype)), L)
        out[LANES] = L * n
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
        op = control_op(s)
        if op is not None:
            if env[LANES] is not None:
                fail(UNSUPPORTED, "the interpreter cannot leave a loop that runs in lanes", s)
            if op == RET:
                raise _Return(cast_to(self.eval(s.value.args[0], env), self.ret_dtype))
            raise _Break() if op == BREAK else _Continue()
        if isinstance(s.value, E.Call) and not is_region_declaration(s) and \
                not is_attr_statement(s):           # an annotation (passes/attrs.py)
            self.eval(s.value, env)

    def _iteration(self, body, env) -> bool:
        """Run one iteration of a loop body; False when it ends the loop (`break`)."""
        try:
            self.exec(body, env)
        except _Continue:
            pass
        except _Break:
            return False
        return True

    def _s_For(self, s, env):
        lo = self.eval(s.min, env)
        ext = self.eval(s.extent, env)
        if s.kind == "thread_binding":
            fail(UNSUPPORTED, "the interpreter runs CPU kernels only (thread binding)", s)
        uniform = not isinstance(lo, np.ndarray) and not isinstance(ext, np.ndarray)
        lanes = (env[LANES] or 1) * int(ext) if uniform else 0
        fits = uniform and lanes <= MAX_LANES and \
            lanes * self._private_elements(s) <= MAX_LANES * 16
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
                if not self._iteration(s.body, e2):
                    break
            return
        lo_a = np.broadcast_to(lo, (env[LANES],)).astype(np.int64)
        end_a = lo_a + np.broadcast_to(ext, (env[LANES],)).astype(np.int64)
        for i in range(int(lo_a.min()), int(end_a.max()) if env[LANES] else 0):
            e2 = self._compress(env, (lo_a <= i) & (i < end_a))
            if e2 is None:
                continue
            e2 = dict(e2)
            e2[id(s.loop_var)] = dt.type(i)
            if not self._iteration(s.body, e2):
                break

    def _s_While(self, s, env):
        if env[LANES] is not None:
            fail(UNSUPPORTED, "the interpreter runs while loops one iteration at a time", s)
        while bool(self.eval(s.condition, env)):
            if not self._iteration(s.body, env):
                break

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
        # a declaration with no allocation of its own allocates its storage, afresh each
        # time it runs (inside a loop, under other lanes)
        owned = self._decl_owned
        if id(s.buffer.data) not in self.storage or id(s.buffer.data) in owned:
            owned.add(id(s.buffer.data))
            self._alloc(s.buffer.data, s.buffer.dtype, storage_extents(s.buffer), env)
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
        if parse_dtype(dtype).lanes > 1:
            fail(UNSUPPORTED, f"the interpreter has no buffers of vector elements ({dtype})",
                 data_var)
        ext = [int(self.eval(d, env)) for d in shape]
        if min(ext, default=0) < 0:
            fail(ARGUMENT, f"'{data_var.name}' is allocated with extents {ext}", data_var)
        n = int(np.prod(ext, dtype=np.int64))
        nd = _np_dtype(dtype)
        fill = np.nan if nd.kind == "f" or is_float(dtype) else 0x5A
        L = env[LANES]
        require_memory(data_var, n * (L or 1) * nd.itemsize, L)
        if L is None:
            self.storage[id(data_var)] = _Storage(np.full(n, fill, dtype=nd))
        else:
            self._lane_counter += 1
            key = ("lane", self._lane_counter)
            env[key] = np.arange(L)
            self.storage[id(data_var)] = _Storage(np.full((L, n), fill, dtype=nd), key)

    def _s_BufferStore(self, s, env):
        env = self._vector_store_lanes(s, env)
        st, flat = self._address(s.buffer, s.indices, env, s)
        val = cast_to(self.eval(s.value, env), s.buffer.dtype)
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
            e2[id(iv.var)] = cast_to(v, iv.var.dtype)
        for buf in b.alloc_buffers:
            self._alloc(buf.data, buf.dtype, storage_extents(buf), e2)
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
def run_reference(func: S.PrimFunc, arrays, scalars=None, module=None, lanes=True):
    """Run func on numpy arrays in place (outputs are written into them).  Returns the
    arrays; a function that returns a value (`-> T.int32`, or a `T.ret` in its body) returns
    that value instead, as a numpy scalar of its return dtype (None when it ended without
    reaching a `T.ret`), like the compiled kernel."""
    it = Interpreter(func, module, lanes=lanes)
    it.run(arrays, scalars)
    return arrays if it.ret_dtype is None else it.value
