"""Expressions, their Python precedence, and the small values (shapes, buffer arguments,
regions, annotations) that statements are built from."""
from __future__ import annotations

from ...ir import dtype as D
from ...ir import expr as E
from ...ir import stmt as S
from ...ir.equality import identical
from ..floats import float_literal
from .base import _str

# Python precedence (higher binds tighter)
P_LAMBDA, P_IF, P_OR, P_AND, P_NOT, P_CMP, P_BOR, P_BXOR, P_BAND, P_SHIFT, P_ADD, P_MUL, \
    P_UNARY, P_POW, P_ATOM = range(15)

_INFIX = {
    E.Add: ("+", P_ADD), E.Sub: ("-", P_ADD), E.Mul: ("*", P_MUL), E.FloorDiv: ("//", P_MUL),
    E.FloorMod: ("%", P_MUL), E.EQ: ("==", P_CMP), E.NE: ("!=", P_CMP), E.LT: ("<", P_CMP),
    E.LE: ("<=", P_CMP), E.GT: (">", P_CMP), E.GE: (">=", P_CMP), E.And: ("and", P_AND),
    E.Or: ("or", P_OR),
}
_BITWISE = {"bitwise_and": ("&", P_BAND), "bitwise_or": ("|", P_BOR),
            "bitwise_xor": ("^", P_BXOR), "shift_left": ("<<", P_SHIFT),
            "shift_right": (">>", P_SHIFT)}


class ExprPrinter:
    def expr(self, e, prec=0) -> str:
        text, p = self._expr(e)
        return f"({text})" if p < prec else text

    def _expr(self, e):
        if self.expr_alias and id(e) in self.expr_alias:    # `i` of `for i in range(a, b, s)`
            return self.expr_alias[id(e)], P_ATOM
        t = type(e)
        T = self.T
        if t is E.IntImm:
            if e.dtype == "int32":
                return str(e.value), (P_UNARY if e.value < 0 else P_ATOM)
            if e.dtype == "bool":
                return f"{T}.bool({bool(e.value)})", P_ATOM
            return f"{T}.{e.dtype}({e.value})", P_ATOM
        if t is E.FloatImm:
            return f"{T}.{e.dtype}({_float_imm_text(e.value, e.dtype)})", P_ATOM
        if t is E.StringImm:
            return _str(e.value), P_ATOM
        if t is E.Var or t is E.SizeVar:
            return self.name_of(e), P_ATOM
        if t in _INFIX:
            op, p = _INFIX[t]
            if p == P_CMP:
                return f"{self.expr(e.a, p + 1)} {op} {self.expr(e.b, p + 1)}", p
            return f"{self.expr(e.a, p)} {op} {self.expr(e.b, p + 1)}", p
        if t is E.Div:
            if D.is_float(e.dtype):
                return f"{self.expr(e.a, P_MUL)} / {self.expr(e.b, P_MUL + 1)}", P_MUL
            return f"{T}.truncdiv({self.expr(e.a)}, {self.expr(e.b)})", P_ATOM
        if t is E.Mod:
            return f"{T}.truncmod({self.expr(e.a)}, {self.expr(e.b)})", P_ATOM
        if t is E.Min:
            return f"{T}.min({self.expr(e.a)}, {self.expr(e.b)})", P_ATOM
        if t is E.Max:
            return f"{T}.max({self.expr(e.a)}, {self.expr(e.b)})", P_ATOM
        if t is E.Not:
            return f"not {self.expr(e.a, P_NOT)}", P_NOT
        if t is E.Select:
            return (f"{T}.Select({self.expr(e.condition)}, {self.expr(e.true_value)}, "
                    f"{self.expr(e.false_value)})"), P_ATOM
        if t is E.Cast:
            return f"{T}.Cast({_str(e.dtype)}, {self.expr(e.value)})", P_ATOM
        if t is E.BufferLoad:
            if self.scalar_names and id(e.buffer) in self.scalar_names:
                return self.scalar_names[id(e.buffer)], P_ATOM
            # current TVM reads a slice in an expression as a region: a vector load keeps
            # its T.Ramp there (classic TVM read `A[0:4]` as the load)
            return (f"{self.name_of(e.buffer)}[{self.indices(e.indices, self.spelling != 'tirx')}]",
                    P_ATOM)
        if t is E.Call:
            return self.call(e)
        if t is E.Ramp:
            return f"{T}.Ramp({self.expr(e.base)}, {self.expr(e.stride)}, {self._lanes(e.lanes)})", P_ATOM
        if t is E.Broadcast:
            return f"{T}.Broadcast({self.expr(e.value)}, {self._lanes(e.lanes)})", P_ATOM
        if t is E.Let:
            return (f"{T}.Let({self.expr(e.body)}, where={{{self.expr(e.var)}: "
                    f"{self.expr(e.value)}}})"), P_ATOM
        if t is E.Lambda:
            names = [self.define(v, v.name) for v in e.params]
            if isinstance(e.body, tuple):
                body = "(" + ", ".join(self.expr(x) for x in e.body) + ("," if len(e.body) == 1
                                                                          else "") + ")"
            else:
                body = self.expr(e.body)
            for v in e.params:
                self.undefine(v)
            return f"lambda {', '.join(names)}: {body}", P_LAMBDA
        if t is E.ArrayExpr:
            items = [self.expr(x) for x in e.elements]
            if e.dtype == "list":
                return "[" + ", ".join(items) + "]", P_ATOM
            if e.dtype == "dict":        # a Python dict argument (`T.target({...})`)
                pairs = [f"{self.expr(x.elements[0])}: {self._dict_value(x.elements[1])}"
                         for x in e.elements]
                return "{" + ", ".join(pairs) + "}", P_ATOM
            if len(items) == 1:
                return f"({items[0]},)", P_ATOM
            return "(" + ", ".join(items) + ")", P_ATOM
        if t is E.BufferRef:
            return self.name_of(e.buffer), P_ATOM
        return self.pyvalue(e), P_ATOM

    def _dict_value(self, v) -> str:
        """A value of a dict argument: the call receives a Python dict, whose bools are
        Python's (TVM's `T.target` refuses `T.bool(True)` there)."""
        if type(v) is E.IntImm and v.dtype == "bool":
            return "True" if v.value else "False"
        return self.expr(v)

    def _lanes(self, lanes) -> str:
        return str(lanes) if isinstance(lanes, int) else self.expr(lanes)

    def call(self, e):
        T = self.T
        if e.op in _BITWISE:
            op, p = _BITWISE[e.op]
            return f"{self.expr(e.args[0], p)} {op} {self.expr(e.args[1], p + 1)}", p
        if e.op == "bitwise_not":
            return f"~{self.expr(e.args[0], P_UNARY)}", P_UNARY
        args = [self.expr(a) for a in e.args]
        if e.op == "reinterpret":
            args = [_str(e.dtype)] + args
        if e.op == ".elem_offset":     # a buffer's own offset variable
            return f"{self.expr(e.args[0])}.elem_offset", P_ATOM
        if e.op.startswith("."):       # a buffer method: A.access_ptr("r"), A.vload([0])
            args = [self.expr(a) for a in e.args[1:]]
            args += [f"{k}={self.expr(v)}" for k, v in e.kwargs]
            return f"{self.expr(e.args[0])}{e.op}({', '.join(args)})", P_ATOM
        if e.callee is not None:
            args += [f"{k}={self.expr(v)}" for k, v in e.kwargs]
            return f"{self.module_class}.{e.callee}({', '.join(args)})", P_ATOM
        args += [f"{k}={self.expr(v) if isinstance(v, E.PrimExpr) else self.pyvalue(v)}"
                 for k, v in e.kwargs]
        return f"{T}.{e.op}({', '.join(args)})", P_ATOM

    def indices(self, indices, slices=True) -> str:
        out = []
        for i in indices:
            if slices and isinstance(i, E.Ramp) and isinstance(i.stride, E.IntImm) and \
                    i.stride.value == 1:
                stop = _add(i.base, i.lanes)
                out.append(f"{self.expr(i.base)}:{self.expr(stop)}")
            else:
                out.append(self.expr(i))
        return ", ".join(out) or "()"              # a zero-dimensional buffer: A[()]

    def pyvalue(self, v) -> str:
        if type(v) is E.IntImm and v.dtype == "int32":
            return f"{self.T}.int32({v.value})"     # a bare 0 would read back as a Python int
        if isinstance(v, E.PrimExpr):
            return self.expr(v)
        if isinstance(v, bool) or v is None:
            return repr(v)
        if isinstance(v, int):
            return str(v)
        if isinstance(v, float):
            return repr(v)
        if isinstance(v, str):
            return _str(v)
        if isinstance(v, S.Buffer):
            return self.name_of(v)
        if isinstance(v, list):
            return "[" + ", ".join(self.pyvalue(x) for x in v) + "]"
        if isinstance(v, tuple):
            if len(v) == 1:
                return f"({self.pyvalue(v[0])},)"
            return "(" + ", ".join(self.pyvalue(x) for x in v) + ")"
        if isinstance(v, dict):
            return "{" + ", ".join(f"{self.pyvalue(k)}: {self.pyvalue(x)}"
                                   for k, x in v.items()) + "}"
        if isinstance(v, S.IterVar):
            return self.name_of(v.var)
        return repr(v)

    def annotations(self, ann) -> str:
        return "{" + ", ".join(f"{self.pyvalue(k)}: {self.pyvalue(v)}" for k, v in ann) + "}"

    def shape(self, shape) -> str:
        items = [self.expr(x) for x in shape]
        if len(items) == 1:
            return f"({items[0]},)"
        return "(" + ", ".join(items) + ")"

    def buffer_args(self, b: S.Buffer, data=False) -> str:
        parts = [self.shape(b.shape), _str(b.dtype)]
        if data and b.data is not None:
            parts.append(f"data={self.name_of(b.data)}")
        if b.strides:
            parts.append(f"strides={self.shape(b.strides)}")
        if b.elem_offset is not None:
            parts.append(f"elem_offset={self.expr(b.elem_offset)}")
        if b.scope != "global":
            parts.append(f"scope={_str(b.scope)}")
        if b.align != -1:
            parts.append(f"align={b.align}")
        if b.offset_factor != 0:
            parts.append(f"offset_factor={b.offset_factor}")
        if b.buffer_type != "default":
            parts.append(f"buffer_type={_str(b.buffer_type)}")
        if b.axis_separators:
            parts.append(f"axis_separators={list(b.axis_separators)}")
        return ", ".join(parts)

    def alloc_kw(self, buf: S.Buffer) -> str:
        if self.spelling == "tirx" and buf.spelling == "sblock_alloc_buffer":
            return "sblock_alloc_buffer"
        return "alloc_buffer"

    def define_buffer(self, b: S.Buffer):
        name = self.define(b, b.name)
        if id(b.data) not in self.names:
            self.names[id(b.data)] = f"{name}.data"
        return name

    def region(self, r: S.BufferRegion) -> str:
        parts = []
        for rg in r.region:
            if isinstance(rg.extent, E.IntImm) and rg.extent.value == 1:
                parts.append(self.expr(rg.min))
            else:
                parts.append(f"{self.expr(rg.min)}:{self.expr(_add(rg.min, rg.extent))}")
        return f"{self.name_of(r.buffer)}[{', '.join(parts) or '()'}]"


def _float_imm_text(value, dtype) -> str:
    """A FloatImm holds a double (as in TVM): print the dtype's shortest text when it reads
    back as that very double, else the double's own shortest text."""
    text = float_literal(value, dtype)
    if dtype != "float64" and not text.startswith('"'):
        try:
            same = float(text) == value
        except ValueError:
            same = False
        if not same:
            text = float_literal(value, "float64")
    return text


def _add(a, b):
    if isinstance(b, int):
        b = E.IntImm(a.dtype if D.is_int(a.dtype) else "int32", b)
    if isinstance(a, E.IntImm) and isinstance(b, E.IntImm):
        return E.IntImm(a.dtype, a.value + b.value)
    if _is_zero(a):
        return b
    if isinstance(b, E.Sub) and identical(b.b, a):
        return b.a
    return E.Add(a, b, a.dtype)


def _is_zero(e) -> bool:
    return isinstance(e, E.IntImm) and e.value == 0
