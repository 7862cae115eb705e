"""`T.<name>(...)` in expression position: constructors, casts, math and intrinsics."""
from __future__ import annotations

import math

from ...ir import dtype as D
from ...ir import expr as E
from ...syntax import cst as C
from ..namespace import FAMILIES, NAMES
from ...ir.dtype import ERROR_DTYPE
from .fold import as_float, cast_folded, fold_minmax
from .values import (_BufferMethod, _ExprMethod, _GlobalFunc, _is_literal, _Lambda, _Namespace,
                     _PyBuiltin, _Starred)

_BITWISE_CALLS = {"bitwise_not", "bitwise_and", "bitwise_or", "bitwise_xor", "shift_left",
                  "shift_right"}
# calls whose first argument is the result dtype
DTYPE_FIRST = {"call_extern", "call_pure_extern", "call_intrin", "call_llvm_intrin",
               "call_llvm_pure_intrin", "call_packed_lowered", "call_cpacked_lowered",
               "reinterpret", "call_ffi_kernel"}
# operations whose `dtype=` keyword TVMScript drops, and those where it becomes the first argument
DTYPE_IGNORED = (E.UNARY_MATH | E.BINARY_MATH | E.BOOL_RESULT | {
    "address_of", "ceildiv", "floordiv", "floormod", "truncdiv", "truncmod", "fma",
    "if_then_else", "q_multiply_shift", "q_multiply_shift_per_axis", "rsqrt", "likely",
    "assume", "undef", "vscale", "continue_loop", "break_loop", "thread_return", "infinity",
    "tvm_access_ptr", "tvm_throw_last_error", "tvm_thread_invariant", "tvm_tuple",
    "tvm_stack_alloca", "tvm_stack_make_shape", "tvm_stack_make_array",
})
# the operations typed here (others keep a `dtype=` keyword as written, as their result type)
_TYPED = E.UNARY_MATH | E.BINARY_MATH | E.BOOL_RESULT | {
    "if_then_else", "ceildiv", "floordiv", "floormod", "truncdiv", "truncmod"}
DTYPE_FORWARD = {"reinterpret", "call_extern", "call_intrin", "call_llvm_intrin",
                 "call_llvm_pure_intrin", "call_pure_extern", "vectorlow", "vectorhigh",
                 "vectorcombine", "get_active_lane_mask", "masked_load", "dp4a"}
ARITY = {"if_then_else": 3, "Select": 3, "max": 2, "min": 2, "floordiv": 2, "floormod": 2,
         "truncdiv": 2, "truncmod": 2, "ceildiv": 2, "Cast": 2, "cast": 2, "Ramp": 3,
         "Broadcast": 2, "Let": 3, "fma": 3}
# TVM's tensor-core builtins
BUILTIN_ARITY = {"tvm_fill_fragment": 6, "tvm_load_matrix_sync": 8, "tvm_store_matrix_sync": 8,
                 "tvm_mma_sync": 8, "tvm_bmma_sync": 8, "tvm_access_ptr": 5}
ARITY.update(BUILTIN_ARITY)
ARITY.update({n: 1 for n in E.UNARY_MATH})
ARITY.update({n: 2 for n in E.BINARY_MATH - {"ldexp"}})

_INT_DIV = {k: E.CALL_OPERATORS[k] for k in ("floordiv", "floormod", "truncdiv", "truncmod")}


def is_known_t_name(name: str) -> bool:
    head = name.split(".", 1)[0]
    return head in NAMES or D.is_dtype(head) or head.startswith(FAMILIES) or \
        head in ("ptx", "cuda", "nki", "metal")


class CallMixin:
    def t_attribute(self, name: str, n):
        """`T.name` used as a value (not called): a dtype, or a namespace member."""
        if D.is_dtype(name):
            return name
        if name in ("handle",):
            return "handle"
        if not is_known_t_name(name):
            self.fail("name/undefined", f"'{name}' is not a name of the T namespace",
                      getattr(n, "aux", None) and self.tok_span(n.aux) or n)
        return _Namespace("T." + name)

    def _returns(self, name) -> str:
        """The dtype a call of the module's function `name` has: its return annotation's
        (`-> T.float32`), read before any body as TVM declares a module's functions first;
        int32 where it names none."""
        spelled = (getattr(self, "module_returns", None) or {}).get(name)
        last = spelled.rsplit(".", 1)[-1] if spelled else None
        return last if last is not None and D.is_dtype(last) else "int32"

    def _v_Call(self, n):
        tn = self.t_name(n.func)
        if tn is not None:
            return self.t_call(tn, n)
        func = self.value(n.func)
        if isinstance(func, _BufferMethod):
            args = tuple(self._arg_expr(a, n) for a in self._args(n))
            ref = E.BufferRef(func.buffer, "handle", self.span(n.func))
            return E.Call("handle", "." + func.name, (ref,) + args,
                          self._kw_exprs(self._kwargs(n), n), self.span(n))
        if isinstance(func, _GlobalFunc):
            args = tuple(self._arg_expr(a, n) for a in self._args(n))
            return E.Call(self._returns(func.name), "@" + func.name, args,
                          self._kw_exprs(self._kwargs(n), n), self.span(n),
                          self._arg_spans(n, len(args)))
        if isinstance(func, _Namespace):
            name = func.name.split(".", 1)[1] if "." in func.name else func.name
            return self.t_call(name, n)
        if isinstance(func, str) and D.is_dtype(func):
            return self._dtype_ctor(func, n)
        if isinstance(func, _PyBuiltin):
            return self._py_builtin(func.name, n)
        if isinstance(func, _ExprMethod):      # `x.astype(dtype)`: TVM's `cast`
            args, kwargs = self._args(n), self._kwargs(n)
            if len(args) + len(kwargs) != 1 or (kwargs and "dtype" not in kwargs):
                self.fail("type/mismatch", "astype takes one dtype", n)
            return self._cast((args or [kwargs.get("dtype")])[0], func.expr, n, folded=True)
        self.fail("type/mismatch", "this call is not a TIR operation", n.func)

    def if_then_else(self, cond, a_value, b_value, n, what="the condition of T.if_then_else",
                     cond_node=None):
        """TVM's `if_then_else`: a boolean condition (an error otherwise), the branches
        brought to one type as its arithmetic brings them, and a constant condition picks its
        branch."""
        c = self._as_expr(cond, n)
        self.boolean_operand(what, c, cond_node or n)
        a, b = self.match_types(self._as_expr(a_value, n), self._as_expr(b_value, n),
                                _is_literal(a_value), _is_literal(b_value), n, arith=True)
        self.condition_lanes(what, c, a, cond_node or n)
        if type(c) is E.IntImm and c.dtype == "bool":
            return a if c.value else b
        return E.Call(a.dtype, "if_then_else", (c, a, b), (), self.span(n))

    def condition_lanes(self, what, c, value, n):
        """A vector condition picks lane by lane: it needs the values' number of lanes."""
        if ERROR_DTYPE not in (c.dtype, value.dtype) and \
                D.lanes_of(c.dtype) not in (1, D.lanes_of(value.dtype)):
            self.diag("type/mismatch", f"{what} is {c.dtype}, but its values are "
                      f"{value.dtype}: a vector condition needs their number of lanes", n)

    # ---- argument helpers -------------------------------------------------------------
    def _args(self, n):
        out = []
        for a in n.args:
            v = self.value(a)
            if isinstance(v, _Starred):
                out.extend(v.value if isinstance(v.value, (list, tuple)) else [v.value])
            else:
                out.append(v)
        return out

    def _kwargs(self, n):
        return {k.arg: self.value(k.value) for k in n.keywords if k.arg is not None}

    def _arity(self, name, n, got):
        want = ARITY.get(name)
        if want is not None and got != want:
            self.fail("type/mismatch", f"T.{name} takes {want} argument{'s' if want != 1 else ''}"
                      f", got {got}", n)

    # ---- dispatch ----------------------------------------------------------------------
    def t_call(self, name: str, n):
        if D.is_dtype(name):
            return self._dtype_ctor(name, n)
        if not is_known_t_name(name):
            fn = C.unparen(n.func)
            self.fail("name/undefined", f"'{name}' is not a name of the T namespace",
                      self.tok_span(fn.aux) if isinstance(fn, C.Attribute) and fn.aux else fn)
        if name in ("reads", "writes", "where", "func_attr", "block_attr", "sblock_attr",
                    "match_buffer", "alloc_buffer", "init", "block", "sblock", "grid", "serial",
                    "parallel", "vectorized", "unroll", "thread_binding"):
            self.fail("type/mismatch", f"T.{name} is a statement, not a value", n)
        # `T.ramp(b, s, n)` and `T.broadcast(v, n)` build the same nodes as their capitalised
        # spellings (TVM prints those)
        name = {"ramp": "Ramp", "broadcast": "Broadcast"}.get(name, name)
        args = self._args(n)
        kwargs = self._kwargs(n)
        dtype_kw = kwargs.get("dtype")
        if "dtype" in kwargs:
            if name in DTYPE_FORWARD:     # TVMScript moves `dtype=` to the front
                dt = kwargs.pop("dtype")
                args = ["void" if dt == "" else dt] + args      # `dtype=""`: no result
            elif name in DTYPE_IGNORED and name in _TYPED:   # and drops it from these
                kwargs.pop("dtype")
        if name == "meta_var":      # TVM reads it only as the value of an assignment
            self.fail("type/mismatch", "T.meta_var names a value: `x = T.meta_var(value)`", n)
        if name == "Let" and "where" in kwargs and len(args) == 1:
            return self._let_where(args[0], kwargs["where"], n)
        given = len(args) + len(kwargs)
        if name in BUILTIN_ARITY and "dtype" in kwargs:
            given -= 1                  # the result's dtype, not an argument
        self._arity(name, n, given)
        positional = {"Cast": 2, "if_then_else": 3, "Select": 3, "max": 2, "min": 2}
        if name in positional and len(args) != positional[name]:
            extra = [k for k in kwargs if k != "dtype"]
            self.fail("type/mismatch", f"T.{name} takes {positional[name]} positional arguments"
                      + (f", not the keyword `{extra[0]}`" if extra else f", got {len(args)}"), n)
        span = self.span(n)
        if name == "Cast":
            dtype, x = args
            return self._cast(dtype, x, n)
        if name == "cast":
            if "dtype" in kwargs and len(args) == 1:
                args.append(kwargs.pop("dtype"))
            if len(args) != 2:
                self.fail("type/mismatch", "T.cast takes a value and a dtype", n)
            x, dtype = args
            return self._cast(dtype, x, n, folded=True)
        if name == "if_then_else":
            return self.if_then_else(*args, n, cond_node=n.args[0] if n.args else n)
        if name == "Select":
            # TVM's Select node converts nothing: both values must have one dtype already
            c, a, b = (self._as_expr(x, n) for x in args)
            self.boolean_operand("the condition of T.Select", c, n.args[0] if n.args else n)
            if ERROR_DTYPE not in (a.dtype, b.dtype) and a.dtype != b.dtype:
                self.diag("type/mismatch", f"T.Select takes two values of one dtype, got "
                          f"{a.dtype} and {b.dtype} (T.if_then_else converts them)", n)
            a, b = self.match_types(a, b, _is_literal(args[1]), _is_literal(args[2]), n)
            self.condition_lanes("the condition of T.Select", c, a, n.args[0] if n.args else n)
            return E.Select(c, a, b, a.dtype, span)
        if name in ("max", "min"):
            a, b = self.match_types(self._as_expr(args[0], n), self._as_expr(args[1], n),
                                    _is_literal(args[0]), _is_literal(args[1]), n, arith=True)
            cls = E.Max if name == "max" else E.Min
            return fold_minmax(cls, a, b) or cls(a, b, a.dtype, span)
        if name == "ceildiv" and len(args) == 2:
            a, b = self.match_types(self._as_expr(args[0], n), self._as_expr(args[1], n),
                                    _is_literal(args[0]), _is_literal(args[1]), n)
            return E.Call(a.dtype, name, (a, b), (), span)
        if name in _INT_DIV:
            a, b = self.match_types(self._as_expr(args[0], n), self._as_expr(args[1], n),
                                    _is_literal(args[0]), _is_literal(args[1]), n, arith=True)
            self.integer_division(f"T.{name}", a, b, n)
            return _INT_DIV[name](a, b, a.dtype, span)
        if name in ("min_value", "max_value", "infinity"):
            dtype = args[0] if args else kwargs.get("dtype")
            if not D.is_dtype(dtype):
                self.fail("type/mismatch", f"T.{name} needs a dtype", n)
            if name == "infinity" and not D.is_float(dtype):     # TVM: "Cannot decide ..."
                self.diag("type/mismatch", f"T.infinity takes a floating-point dtype, not "
                          f"{dtype}", n)
            return E.Call(dtype, name, (E.StringImm(dtype),), (), span)
        if name == "Ramp":
            base, stride, lanes = args
            base, stride = self._as_expr(base, n), self._as_expr(stride, n)
            lanes, dtype = self._lanes(lanes, base.dtype, n)
            return E.Ramp(base, stride, lanes, dtype, span)
        if name == "Broadcast":
            v, lanes = args
            v = self._as_expr(v, n)
            lanes, dtype = self._lanes(lanes, v.dtype, n)
            return E.Broadcast(v, lanes, dtype, span)
        if name == "Let":
            var, value, body = args
            value, body = self._as_expr(value, n), self._as_expr(body, n)
            return E.Let(var, value, body, body.dtype, span)
        if name == "fma":
            xs = self.fused_operands([self._as_expr(a, n) for a in args],
                                     [_is_literal(a) for a in args], n)
            return E.Call(xs[0].dtype, "fma", tuple(xs), (), span)
        if name in E.UNARY_MATH or name in E.BINARY_MATH or name in E.BOOL_RESULT:
            xs = [self._as_expr(a, n) for a in args]
            if name in _BITWISE_CALLS:
                self.integer_operands(f"T.{name}", xs,
                                      n.args if len(n.args) == len(xs) else [n] * len(xs))
            if name in E.BINARY_MATH and len(xs) == 2:
                xs = list(self.match_types(xs[0], xs[1], _is_literal(args[0]),
                                           _is_literal(args[1]), n))
                if name in ("shift_left", "shift_right"):
                    self.shift_amount(xs[0], xs[1], n.args[1] if len(n.args) == 2 else n)
            dtype = "bool" if name in E.BOOL_RESULT else "int32" if name == "clz" else \
                (xs[0].dtype if xs else "float32")
            if name in ("sqrt", "exp", "log", "tanh", "sigmoid", "sin", "cos") and xs and \
                    D.is_int(xs[0].dtype):
                self.diag("type/mismatch", f"T.{name} expects a floating-point argument, "
                          f"got {xs[0].dtype}", n.args[0])
            return E.Call(dtype, name, tuple(xs), (), span)
        if name in DTYPE_FIRST:
            dtype = args[0] if args and isinstance(args[0], str) and D.is_dtype(args[0]) else None
            if dtype is None:
                self.fail("type/mismatch", f"T.{name} takes the result dtype first", n)
            rest = tuple(self._arg_expr(a, n) for a in args[1:])
            if name == "reinterpret":
                return E.Call(dtype, name, rest, (), span)
            return E.Call(dtype, name, (E.StringImm(dtype),) + rest,
                          self._kw_exprs(kwargs, n), span)
        if name == "comm_reducer" and len(args) == 2 and isinstance(args[0], _Lambda):
            identities = args[1] if isinstance(args[1], (list, tuple)) else [args[1]]
            identities = [self._as_expr(x, n) for x in identities]
            fn = self.lower_lambda(args[0], [x.dtype for x in identities] * 2, n)
            return E.Call("handle", name, (fn, E.ArrayExpr(tuple(identities), "list")), (), span)
        if name in ("type_annotation",):
            dtype = args[0] if args else kwargs.get("dtype", "handle")
            return E.Call(dtype, name, (), (("dtype", E.StringImm(dtype)),), span)
        # any other intrinsic: a call by name, arguments kept as written
        xs = tuple(self._arg_expr(a, n) for a in args)
        dtype = dtype_kw if isinstance(dtype_kw, str) and D.is_dtype(dtype_kw) else \
            _generic_dtype(name, xs)
        return E.Call(dtype, name, xs, self._kw_exprs(kwargs, n), span,
                      self._arg_spans(n, len(xs)))

    def _arg_spans(self, n, count) -> tuple:
        """Each argument's span as written, for a call of `count` arguments (the `dtype=`
        keyword's value first where TVMScript moved it to the front); () when a starred
        argument leaves the correspondence unknown."""
        if any(isinstance(a, C.Starred) for a in n.args):
            return ()
        own = [self.span(a) for a in n.args]
        if len(own) + 1 == count:
            kw = next((k for k in n.keywords if k.arg == "dtype"), None)
            own.insert(0, self.span(kw.value) if kw is not None else None)
        return tuple(own) if len(own) == count else ()

    def _let_where(self, body, where, n):
        """`T.Let(body, where={x: value})`, x a variable declared before (`x = T.int32()`)."""
        if not isinstance(where, dict) or len(where) != 1:
            self.fail("type/mismatch", "T.Let takes where={variable: value}", n)
        (var, value), = where.items()
        if not isinstance(var, E.Var):
            self.fail("type/mismatch", "T.Let binds a variable (declare it like x = T.int32())",
                      n)
        value, body = self._as_expr(value, n), self._as_expr(body, n)
        return E.Let(var, value, body, body.dtype, self.span(n))

    def lower_lambda(self, lam, dtypes, n):
        """`lambda x, y: ...` with parameters of the given dtypes."""
        node = lam.node
        params = list(node.params or [])
        if len(params) != len(dtypes):
            self.fail("type/mismatch", f"this lambda takes {len(params)} parameters, "
                      f"{len(dtypes)} expected", node)
        pvars = tuple(E.Var(p, d, None, self.span(node)) for p, d in zip(params, dtypes))
        self.push()
        try:
            for p, v in zip(params, pvars):
                self.define(p, v, check=False)
            body = self.value(node.body)
        finally:
            self.pop()
        if isinstance(body, (tuple, list)):
            body = tuple(self._as_expr(x, node) for x in body)
        else:
            body = self._as_expr(body, node)
        return E.Lambda(pvars, body, "handle", self.span(node))

    def _lanes(self, lanes, elem_dtype, n):
        """(lanes, vector dtype): an int, or an expression such as `4 * T.vscale()`."""
        if isinstance(lanes, E.IntImm):
            lanes = lanes.value
        if isinstance(lanes, bool) or not isinstance(lanes, (int, E.PrimExpr)):
            self.fail("type/mismatch", "the number of lanes must be an integer", n)
        if isinstance(lanes, int):
            if lanes < 1:
                self.fail("type/mismatch", "the number of lanes must be positive", n)
            if lanes > D.MAX_LANES:
                self.fail("type/mismatch", f"{lanes} lanes: a vector has at most "
                          f"{D.MAX_LANES} (TVM keeps the number in 16 bits)", n)
            return lanes, D.parse_dtype(elem_dtype).with_lanes(lanes)
        factor = None
        if isinstance(lanes, E.Mul):
            for a, b in ((lanes.a, lanes.b), (lanes.b, lanes.a)):
                if isinstance(a, E.IntImm) and isinstance(b, E.Call) and b.op == "vscale":
                    factor = a.value
        vec = f"{elem_dtype}xvscalex{factor}" if factor else elem_dtype
        return lanes, vec if D.is_dtype(vec) else elem_dtype

    def _kw_exprs(self, kwargs, n):
        return tuple((k, self._arg_expr(v, n)) for k, v in kwargs.items())

    def _arg_expr(self, a, n):
        from ...ir.stmt import Buffer
        if isinstance(a, Buffer):
            return E.BufferRef(a)
        if isinstance(a, _Lambda) or a is None:
            return E.StringImm(repr(a))
        if isinstance(a, _Namespace):
            return E.StringImm(a.name)
        if isinstance(a, dict):
            return E.ArrayExpr(tuple(E.ArrayExpr((self._arg_expr(k, n), self._arg_expr(v, n)))
                                     for k, v in a.items()), "dict")
        if isinstance(a, (tuple, list)):
            return E.ArrayExpr(tuple(self._arg_expr(x, n) for x in a),
                               "void" if isinstance(a, tuple) else "list")
        return self._as_expr(a, n)

    def _cast(self, dtype, x, n, folded=False):
        """`T.Cast(dtype, x)`, TVM's Cast node; `folded`: `T.cast(x, dtype)` and `x.astype`,
        TVM's `cast`, which gives a constant of the new type for a constant and nothing new
        for a value of that type."""
        if not isinstance(dtype, str) or not D.is_dtype(dtype):
            self.fail("type/mismatch", f"{dtype!r} is not a dtype", n)
        x = self._as_expr(x, n)
        return (cast_folded if folded else E.Cast)(dtype, x, self.span(n))

    def _dtype_ctor(self, dtype: str, n):
        args = self._args(n)
        kwargs = self._kwargs(n)
        span = self.span(n)
        if not args:
            if kwargs.get("is_size_var"):
                return E.SizeVar("v", dtype, None, span)
            return _FreshVar(dtype, span)
        x = args[0]
        d = D.parse_dtype(dtype)
        if isinstance(x, str) and d.is_float:
            try:
                return E.FloatImm(dtype, float(x), span)
            except ValueError:
                self.fail("type/mismatch", f"{x!r} is not a {dtype} value", n)
        if isinstance(x, bool):
            return E.IntImm(dtype, int(x), span) if not d.is_float else E.FloatImm(dtype, float(x),
                                                                                   span)
        if isinstance(x, (int, float)):
            if d.is_float:
                self.literal_fits(x, dtype, n)
                return E.FloatImm(dtype, as_float(x), span)
            if d.is_handle:
                return E.IntImm("handle", int(x), span)
            if isinstance(x, float):
                if not math.isfinite(x) or x != int(x):
                    self.fail("type/mismatch", f"{x!r} is not a {dtype} value", n)
                x = int(x)
            if d.is_int or d.is_bool:
                self.literal_fits(x, dtype, n)
            return E.IntImm(dtype, int(x), span)
        if isinstance(x, E.PrimExpr):
            if x.dtype == dtype or x.dtype == ERROR_DTYPE:
                return x
            return E.Cast(dtype, x, span)
        self.fail("type/mismatch", f"cannot make a {dtype} from this value", n)


class _FreshVar:
    """`T.int32()`: a new variable, named by the assignment that receives it."""
    __slots__ = ("dtype", "span")

    def __init__(self, dtype, span):
        self.dtype, self.span = dtype, span


# builtins TVM types as the value they move (a warp shuffle's second argument) or by a fixed type
_SHUFFLES = ("tvm_warp_shuffle", "tvm_warp_shuffle_up", "tvm_warp_shuffle_down")
_FIXED_TYPES = {"tvm_warp_activemask": "uint32", "dp4a": "int32", "undef": "int32"}


def _generic_dtype(name, xs) -> str:
    if name in _SHUFFLES and len(xs) > 1:
        return xs[1].dtype
    if name in _FIXED_TYPES:
        return _FIXED_TYPES[name]
    # TVM's node constructors spelled as calls (`T.Add(x, 0)`): the node's type
    cls = E.CALL_OPERATORS.get(name) or E.UNARY_CALL_OPERATORS.get(name)
    if cls is not None and cls not in E.ARITH:
        return "bool"
    if cls is not None and xs:
        typed = [x.dtype for x in xs if not isinstance(x, (E.IntImm, E.FloatImm))]
        return (typed or [xs[0].dtype])[0]
    if name.startswith(("tvm_", "ptx_", "call_", "mma_")) or name in ("address_of",
                                                                      "tvm_access_ptr"):
        return "handle"
    if name in ("assume", "evaluate", "continue_loop", "break_loop", "thread_return"):
        return "void"
    if name in ("q_multiply_shift", "q_multiply_shift_per_axis", "vscale"):
        return "int32"
    return "handle"
