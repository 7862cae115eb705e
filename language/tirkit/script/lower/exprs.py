"""Expressions: names, literals, operators, buffer loads (the `T.` calls are in calls.py)."""
from __future__ import annotations

from ...ir import dtype as D
from ...ir import expr as E
from ...ir.stmt import Buffer
from ...syntax import cst as C
from ...syntax import pyconst
from ...ir.dtype import ERROR_DTYPE
from .context import FAILED, MISSING, LoopInfo, LowerError
from .fold import as_float, cast_folded, fold_float, fold_int, slice_extent  # noqa: F401
# the value classes live in values.py; imported here too for the mixins that take them from exprs
from .scalars import LocalScalar
from .values import (ParamRef, _BufferMethod, _BufferTy, _ExprMethod,  # noqa: F401
                     _GlobalFunc, _is_literal, _Lambda, _ModuleRef, _Namespace, ParamTable,
                     _PyBuiltin, _SliceVal, _Starred, _Subscripted)

_BIN = {
    "+": E.Add, "-": E.Sub, "*": E.Mul, "/": E.Div, "//": E.FloorDiv, "%": E.FloorMod,
}
_CMP = {"==": E.EQ, "!=": E.NE, "<": E.LT, "<=": E.LE, ">": E.GT, ">=": E.GE}
_BITWISE = {"&": "bitwise_and", "|": "bitwise_or", "^": "bitwise_xor", "<<": "shift_left",
            ">>": "shift_right"}



def _bool_of(dtype: str) -> str:
    lanes = D.lanes_of(dtype) if dtype != ERROR_DTYPE else 1
    return "bool" if lanes == 1 else f"boolx{lanes}"


class ExprMixin:
    # ---- entry points ----------------------------------------------------------------
    def expr(self, n) -> E.PrimExpr:
        """Lower an expression that must be a PrimExpr."""
        v = self.value(n)
        if isinstance(v, E.PrimExpr):
            return v
        if isinstance(v, bool):
            return E.IntImm("bool", int(v), self.span(n))
        if isinstance(v, (int, float)):
            return self._python_number(v, n, self.span(n))
        if isinstance(v, str):
            return E.StringImm(v, "handle", self.span(n))
        if isinstance(v, Buffer):
            self.fail("type/mismatch", f"buffer '{v.name}' used where a value is expected", n)
        if isinstance(v, (tuple, list)):
            return E.ArrayExpr(tuple(self._as_expr(x, n) for x in v), "void", self.span(n))
        self.fail("type/mismatch", "expected an expression", n)

    def _as_expr(self, x, n):
        if isinstance(x, E.PrimExpr):
            return x
        if isinstance(x, bool):
            return E.IntImm("bool", int(x))
        if isinstance(x, (int, float)):
            return self._python_number(x, n, self.span(n))
        if isinstance(x, str):
            return E.StringImm(x)
        if isinstance(x, (tuple, list)):
            return E.ArrayExpr(tuple(self._as_expr(y, n) for y in x))
        self.fail("type/mismatch", "expected an expression", n)

    def value(self, n):
        """Lower an expression to a PrimExpr, a Buffer, or a plain Python value."""
        meth = getattr(self, "_v_" + type(n).__name__, None)
        if meth is None:
            self.fail("syntax", f"{type(n).__name__.lower()} is not supported in a kernel", n)
        return meth(n)

    # ---- leaves -----------------------------------------------------------------------
    def _v_Paren(self, n):
        return self.value(n.value)

    def _v_Constant(self, n):
        v = n.value
        if v is None or v is Ellipsis or isinstance(v, (complex, bytes)):
            return v
        return v

    def _v_Name(self, n):
        v = self.lookup(n.id)
        if v is MISSING:
            if n.id in self.py_constants:
                return self.top_level_constant(n.id, n)
            if n.id in self.tir_aliases or n.id in self.ir_aliases:
                return _Namespace(n.id)
            if n.id == getattr(self, "module_class", None):
                return _ModuleRef(n.id)
            if n.id in pyconst.BUILTINS:
                return _PyBuiltin(n.id)
            self.fail("name/undefined", f"name '{n.id}' is not defined", n)
        if v is FAILED:     # its definition already has an error: no second one for each use
            raise LowerError(f"'{n.id}' has no valid definition")
        if isinstance(v, E.Var):
            self._check_loop_var_use(v, n)
        elif id(v) in self.stepped_names:         # the name of a loop with a step
            self._check_loop_var_use(self.stepped_names[id(v)], n)
        elif isinstance(v, LocalScalar):
            return v.load(self.span(n))
        return v

    def _check_loop_var_use(self, v, n):
        info = self.loops.get(id(v))
        if info is None or self.binding_context:
            return
        frame = self.frame
        if frame is None or frame.is_root or not frame.iter_vars:
            return
        if info.block_depth < frame.depth:
            self.diag("well-formed/loop-var-in-block",
                      f"loop variable '{v.name}' is used inside block '{frame.name}'; "
                      f"use a block iterator bound to it instead", n,
                      related=[(info.span, f"loop '{v.name}' is defined here")])

    def _v_Attribute(self, n):
        tn = self.t_name(n)
        if tn is not None:
            return self.t_attribute(tn, n)
        base = self.value(n.value)
        if isinstance(base, Buffer):
            return self.buffer_attribute(base, n.attr, n)
        if isinstance(base, _BufferTy):
            return self.buffer_type_attribute(base.buffer, n.attr, n)
        if isinstance(base, _Namespace):
            return _Namespace(f"{base.name}.{n.attr}")
        if isinstance(base, _ModuleRef):
            if n.attr not in getattr(self, "module_funcs", ()):
                self.fail("name/undefined", f"module '{base.name}' has no function '{n.attr}'", n)
            return _GlobalFunc(n.attr)
        if isinstance(base, E.PrimExpr) and n.attr == "dtype":
            return base.dtype
        if isinstance(base, E.PrimExpr) and n.attr == "astype":
            return _ExprMethod(base, n.attr)
        self.fail("name/undefined", f"'{n.attr}' is not an attribute of this value", n)

    def buffer_attribute(self, buf: Buffer, attr: str, n):
        if attr == "data":
            return buf.data
        if attr == "shape":
            return tuple(buf.shape)
        if attr == "dtype":
            return buf.dtype
        if attr == "strides":
            return tuple(buf.strides)
        if attr == "elem_offset":
            if buf.elem_offset is not None:
                return buf.elem_offset
            if buf.offset_factor:
                # TVM gives such a buffer an offset variable of its own: keep `B.elem_offset`
                return E.Call("int32", ".elem_offset", (E.BufferRef(buf, "handle", self.span(n)),),
                              (), self.span(n))
            return E.IntImm("int32", 0)
        if attr == "scope":
            return _BufferMethod(buf, "scope")
        if attr in ("access_ptr", "vload", "vstore", "offset_of"):
            return _BufferMethod(buf, attr)
        if attr == "ndim":
            return len(buf.shape)
        if attr == "ty":
            return _BufferTy(buf)
        self.fail("name/undefined", f"buffer '{buf.name}' has no attribute '{attr}'", n)

    def buffer_type_attribute(self, buf: Buffer, attr: str, n):
        """`A.ty.shape` and the other fields of TVM's `BufferType`, read as `A.shape` is."""
        if attr in ("dtype", "shape", "strides", "elem_offset"):
            return self.buffer_attribute(buf, attr, n)
        if attr == "storage_scope":
            return buf.scope
        if attr == "data_alignment":
            return buf.align
        if attr == "offset_factor":
            return buf.offset_factor
        self.fail("name/undefined", f"the type of buffer '{buf.name}' has no field '{attr}'", n)

    def _v_TupleExpr(self, n):
        return tuple(self.value(e) for e in n.elts)

    def _v_ListExpr(self, n):
        return [self.value(e) for e in n.elts]

    def _v_DictExpr(self, n):
        out = {}
        for k, v in zip(n.keys, n.values):
            out[self.value(k)] = self.value(v)
        return out

    def _v_Starred(self, n):
        return _Starred(self.value(n.value))

    # ---- operators --------------------------------------------------------------------
    def _v_BinOp(self, n):
        a = self.value(n.left)
        b = self.value(n.right)
        op = n.op
        if not isinstance(a, E.PrimExpr) and not isinstance(b, E.PrimExpr):
            return self._python_binop(op, a, b, n)
        a_lit, b_lit = _is_literal(a), _is_literal(b)
        a, b = self._as_expr(a, n.left), self._as_expr(b, n.right)
        if op in _BITWISE:
            self.integer_operands(f"operator '{op}'", (a, b), (n.left, n.right))
            a, b = self.match_types(a, b, a_lit, b_lit, n)
            if op in ("<<", ">>"):
                self.shift_amount(a, b, n.right)
            return E.Call(a.dtype, _BITWISE[op], (a, b), (), self.span(n))
        if op == "**":
            # TVM's expressions have no `**`: its parser fails on `x ** 2`
            self.diag("type/mismatch", "operator '**' does not apply to TIR values: use "
                      "T.pow(a, b)", n)
            a, b = self.match_types(a, b, a_lit, b_lit, n)
            return E.Call(a.dtype, "pow", (a, b), (), self.span(n))
        cls = _BIN.get(op)
        if cls is None:
            self.fail("syntax", f"operator '{op}' is not supported in a kernel", n)
        a, b = self.match_types(a, b, a_lit, b_lit, n, arith=True)
        if cls is E.Div and D.is_int(a.dtype) and D.is_int(b.dtype):
            self.fail("type/mismatch", "integer division with '/' is ambiguous in TIR: use '//' "
                      "(floor division) or T.truncdiv", n)
        if cls in (E.FloorDiv, E.FloorMod):
            self.integer_division(f"operator '{op}'", a, b, n)
        elif cls is E.Div and type(b) is E.FloatImm and b.value == 0:
            self.diag("type/mismatch", "division by zero", n)
        folded = fold_int(cls, a, b)
        if folded is None:
            folded = fold_float(cls, a, b)
        if folded is not None:
            return folded
        return cls(a, b, a.dtype, self.span(n))

    def match_types(self, a, b, a_lit, b_lit, n, arith=False):
        """Bring two operands to one dtype the way TVM's operators do.  `arith`: an
        arithmetic operator or a comparison (+ - * // % < ==, T.max/min, T.floordiv,
        T.if_then_else), where TVM 0.27 computes an int literal beside a narrow integer in
        int32; a bitwise operator or a shift gives the literal the other operand's type."""
        da, db = a.dtype, b.dtype
        if da == db or ERROR_DTYPE in (da, db):
            return a, b
        if a_lit and not b_lit:
            if _float32_literal_wins(a, db):      # the literal is float32 already
                return a, cast_folded("float32", b)
            if arith and _int_literal_wins(a, db):
                return a, cast_folded(a.dtype, b)
            return self.convert_literal(a, db, n), b
        if b_lit and not a_lit:
            if _float32_literal_wins(b, da):
                return cast_folded("float32", a), b
            if arith and _int_literal_wins(b, da):
                return cast_folded(b.dtype, a), b
            return a, self.convert_literal(b, da, n)
        pa, pb = D.parse_dtype(da), D.parse_dtype(db)
        if pa is None or pb is None or pa.is_handle or pb.is_handle:
            return a, b
        if pa.lanes != pb.lanes:
            if pa.lanes != 1 and pb.lanes != 1:
                self.diag("type/mismatch", f"cannot combine {da} and {db}: vector operands "
                          "need one number of lanes", n)
                return a, b
            if pa.lanes == 1:
                a = E.Broadcast(a, pb.lanes, pa.with_lanes(pb.lanes))
                pa = D.parse_dtype(a.dtype)
            elif pb.lanes == 1:
                b = E.Broadcast(b, pa.lanes, pb.with_lanes(pa.lanes))
                pb = D.parse_dtype(b.dtype)
            if a.dtype == b.dtype:
                return a, b
        if pa.is_float and not pb.is_float:
            return a, cast_folded(a.dtype, b)
        if pb.is_float and not pa.is_float:
            return cast_folded(b.dtype, a), b
        if pa.bits < pb.bits or (pa.is_bool and not pb.is_bool):
            return cast_folded(b.dtype, a), b
        return a, cast_folded(a.dtype, b)

    def convert_literal(self, lit, dtype, n):
        d = D.parse_dtype(dtype)
        if d is None or d.is_handle:
            return lit
        if d.lanes != 1:
            scalar = self.convert_literal(lit, d.element(), n)
            return E.Broadcast(scalar, d.lanes, dtype)
        where = lit.span if lit.span is not None else n
        if d.is_float:
            self.literal_fits(lit.value, dtype, where)
            return E.FloatImm(dtype, as_float(lit.value), lit.span)
        if isinstance(lit, E.FloatImm):
            return E.Cast(dtype, lit)
        self.literal_fits(lit.value, dtype, where)
        return E.IntImm(dtype, int(lit.value), lit.span)

    def _v_UnaryOp(self, n):
        if n.op == "not":
            a = self.value(n.operand)
            if not isinstance(a, E.PrimExpr):
                return not a
            self.boolean_operand("'not'", a, n.operand)
            return E.Not(a, _bool_of(a.dtype), self.span(n))
        if n.op == "-" and isinstance(C.unparen(n.operand), C.Constant):
            v = C.unparen(n.operand).value
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                return -v
        a = self.value(n.operand)
        if not isinstance(a, E.PrimExpr):
            try:
                return pyconst.unary(n.op, a)
            except pyconst.ConstError as e:
                self.fail("type/mismatch", str(e), n)
        if n.op == "+":
            return a
        if n.op == "~":
            return E.Call(a.dtype, "bitwise_not", (a,), (), self.span(n))
        d = D.parse_dtype(a.dtype)
        if d is not None and d.kind in ("uint", "bool"):
            # TVM negates as `x * -1`, and makes no -1 of an unsigned type or a bool
            self.fail("type/mismatch", f"unary '-' does not apply to {a.dtype}: TVM "
                      f"multiplies by -1, which {a.dtype} cannot hold (subtract from a "
                      f"value, or cast to a signed type first)", n)
        if type(a) is E.IntImm and D.is_int(a.dtype):
            lo, hi = D.int_range(a.dtype)
            # the negation of the smallest value wraps to itself, as TVM folds it
            v = -a.value if lo <= -a.value <= hi else a.value
            return E.IntImm(a.dtype, v, self.span(n))
        if type(a) is E.FloatImm:
            return E.FloatImm(a.dtype, -a.value, self.span(n))
        minus_one = self.convert_literal(E.IntImm("int32", -1), a.dtype, n)
        return E.Mul(a, minus_one, a.dtype, self.span(n))

    def _v_BoolOp(self, n):
        vals = [self.value(v) for v in n.values]
        if not any(isinstance(v, E.PrimExpr) for v in vals):
            out = vals[0]
            for v in vals[1:]:
                out = (out and v) if n.op == "and" else (out or v)
            return out
        cls = E.And if n.op == "and" else E.Or
        for v, node in zip(vals, n.values):
            self.boolean_operand(f"'{n.op}'", v, node)
        acc = self._as_expr(vals[0], n)
        for v in vals[1:]:
            b = self._as_expr(v, n)
            acc = cls(acc, b, _bool_of(acc.dtype), self.span(n))
        return acc

    def _v_Compare(self, n):
        left = self.value(n.left)
        parts = []
        for op, right_n in zip(n.ops, n.comparators):
            right = self.value(right_n)
            cls = _CMP.get(op)
            if cls is None:
                self.fail("syntax", f"comparison '{op}' is not supported in a kernel", n)
            if not isinstance(left, E.PrimExpr) and not isinstance(right, E.PrimExpr):
                try:
                    r = {"==": lambda x, y: x == y, "!=": lambda x, y: x != y,
                         "<": lambda x, y: x < y, "<=": lambda x, y: x <= y,
                         ">": lambda x, y: x > y, ">=": lambda x, y: x >= y}[op](left, right)
                except TypeError:
                    self.fail("type/mismatch", f"cannot compare with '{op}'", n)
                parts.append(r)
            else:
                a_lit, b_lit = _is_literal(left), _is_literal(right)
                a, b = self.match_types(self._as_expr(left, n), self._as_expr(right, n),
                                        a_lit, b_lit, n, arith=True)
                parts.append(cls(a, b, _bool_of(a.dtype), self.span(n)))
            left = right
        if len(parts) == 1:
            return parts[0]
        acc = parts[0]
        for p in parts[1:]:
            a, b = self._as_expr(acc, n), self._as_expr(p, n)
            acc = E.And(a, b, "bool", self.span(n))
        return acc

    def _v_IfExp(self, n):
        """`a if c else b`: a plain condition picks a branch, as Python does; a TIR boolean
        makes `T.if_then_else(c, a, b)`, as TVM's parser does."""
        cond = self.value(n.test)
        if not isinstance(cond, E.PrimExpr):
            taken = self.plain_condition("the condition of 'a if c else b'", cond, n.test)
            return self.value(n.body) if taken else self.value(n.orelse)
        return self.if_then_else(cond, self.value(n.body), self.value(n.orelse), n,
                                 "the condition of 'a if c else b'", n.test)

    def _v_Lambda(self, n):
        return _Lambda(n)

    # ---- buffer access -----------------------------------------------------------------
    def _v_Subscript(self, n):
        base = self.value(n.value)
        if isinstance(base, Buffer):
            return self.buffer_load(base, n)
        if isinstance(base, (tuple, list)) and len(n.indices) == 1:
            idx = self.value(n.indices[0])
            if isinstance(idx, int):
                try:
                    return base[idx]
                except IndexError:
                    self.fail("bounds/out-of-bounds", f"index {idx} is out of range", n)
        if isinstance(base, dict) and len(n.indices) == 1:
            key = self.value(n.indices[0])
            if key in base:
                return base[key]
        if isinstance(base, _Namespace) or (isinstance(base, str) and D.is_dtype(base)):
            # T.Buffer[(shape), dtype] annotations and the like
            return _Subscripted(base, [self.value(i) for i in n.indices])
        if isinstance(base, ParamTable):
            return base.get(self, n)
        if isinstance(base, E.Var) and D.parse_dtype(base.dtype) and \
                D.parse_dtype(base.dtype).is_handle:
            self.fail("type/mismatch", f"'{base.name}' is a handle, not a buffer: "
                      "declare a buffer over it to index it", n)
        self.fail("type/mismatch", "this value cannot be indexed", n)


def _float32_literal_wins(lit, other_dtype) -> bool:
    """A Python float is a float32 constant in TVM: beside a scalar integer or a narrower float
    the other operand is cast to float32 (`i + 0.5` is `T.Cast("float32", i) + 0.5`, a float16
    `h + 0.5` is computed in float32); beside float32 or float64 the constant takes that type."""
    if not isinstance(lit, E.FloatImm):
        return False
    d = D.parse_dtype(other_dtype)
    return d is not None and d.lanes == 1 and not d.is_handle and (
        not d.is_float or d.bits < 32)


def _int_literal_wins(lit, other_dtype) -> bool:
    """A Python int is an int32 constant in TVM (int64 when it needs more bits): beside a
    scalar integer or bool narrower than that the other operand is cast to the constant's
    type (an int8 `x + 1` is `T.Cast("int32", x) + 1`, as TVM 0.27 reads it, and an int32
    `i + 5000000000` is computed in int64); beside a wider integer or a float the constant
    takes that type."""
    if not isinstance(lit, E.IntImm) or lit.dtype not in ("int32", "int64"):
        return False
    d = D.parse_dtype(other_dtype)
    return d is not None and d.lanes == 1 and (d.is_int or d.is_bool) and \
        d.bits < D.parse_dtype(lit.dtype).bits


__all__ = ["ExprMixin", "LoopInfo", "LowerError"]
