"""IR -> canonical TVMScript text, in the spelling the source used.

The canonical form is TVM's printer's, in the style of ../shared/examples/valid: dtypes
always written, `T.grid` for nests of plain serial loops, `T.axis.remap` for iterators bound
straight to loops, the implicit root block left out, and a statement longer than 100
columns whose right-hand side is one call split one argument per line.  Comments ride along.
"""
from __future__ import annotations

import json
import math

import numpy as np

from ..ir import dtype as D
from ..ir import expr as E
from ..ir import stmt as S
from .floats import float_literal

LINE_LIMIT = 100
INDENT = "    "

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


def _str(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


class Printer:
    def __init__(self, spelling="classic", tir="T", ir="I", inline_threshold=64, constants=None,
                 params_alias="P", params=None):
        self.spelling = spelling
        self.T = tir
        self.I = ir
        self.names: dict = {}          # id(var or buffer) -> printed name
        self.live: dict = {}           # name -> count of live definitions
        self.loop_of: dict = {}        # id(loop var) -> For, while printing inside it
        self.constants = constants
        self.inline_threshold = inline_threshold
        self.params_alias = params_alias
        self.module_class = "Module"    # how calls to a function of the module are spelled
        self.nested = False             # print the next scoping statement as a `with` block
        self.params = params           # ParamsSink: where large constants go (params_print.py)

    # ---- names -------------------------------------------------------------------------
    def define(self, obj, name):
        base = name or "v"
        cand = base
        i = 0
        while self.live.get(cand):
            i += 1
            cand = f"{base}_{i}"
        self.names[id(obj)] = cand
        self.live[cand] = self.live.get(cand, 0) + 1
        return cand

    def undefine(self, obj):
        name = self.names.get(id(obj))
        if name is not None and self.live.get(name):
            self.live[name] -= 1

    def name_of(self, obj) -> str:
        n = self.names.get(id(obj))
        if n is not None:
            return n
        if isinstance(obj, E.Var):
            return obj.name
        return getattr(obj, "name", "?")

    # ---- expressions -------------------------------------------------------------------
    def expr(self, e, prec=0) -> str:
        text, p = self._expr(e)
        return f"({text})" if p < prec else text

    def _expr(self, e):
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
            return f"{self.name_of(e.buffer)}[{self.indices(e.indices)}]", P_ATOM
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
            if e.dtype == "dict":
                pairs = [f"{self.expr(x.elements[0])}: {self.expr(x.elements[1])}"
                         for x in e.elements]
                return "{" + ", ".join(pairs) + "}", P_ATOM
            if len(items) == 1:
                return f"({items[0]},)", P_ATOM
            return "(" + ", ".join(items) + ")", P_ATOM
        if t is E.BufferRef:
            return self.name_of(e.buffer), P_ATOM
        return self.pyvalue(e), P_ATOM

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
        if e.op.startswith("@"):
            args += [f"{k}={self.expr(v)}" for k, v in e.kwargs]
            return f"{self.module_class}.{e.op[1:]}({', '.join(args)})", P_ATOM
        args += [f"{k}={self.expr(v) if isinstance(v, E.PrimExpr) else self.pyvalue(v)}"
                 for k, v in e.kwargs]
        return f"{T}.{e.op}({', '.join(args)})", P_ATOM

    def indices(self, indices) -> str:
        out = []
        for i in indices:
            if isinstance(i, E.Ramp) and isinstance(i.stride, E.IntImm) and i.stride.value == 1:
                stop = _add(i.base, i.lanes)
                out.append(f"{self.expr(i.base)}:{self.expr(stop)}")
            else:
                out.append(self.expr(i))
        return ", ".join(out)

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
        return f"{self.name_of(r.buffer)}[{', '.join(parts)}]"

    # ---- statements ----------------------------------------------------------------------
    def emit(self, out, indent, text, stmt=None, simple=True):
        if stmt is not None:
            for c in getattr(stmt, "comments", ()) or ():
                out.append(indent + c)
        lines = wrap_line(indent, text)
        trailing = getattr(stmt, "trailing", None) if stmt is not None else None
        if trailing:
            k = len(lines) - 1 if simple else 0
            lines[k] = lines[k] + "  " + trailing
        out.extend(lines)

    def stmt(self, s, out, indent):
        t = type(s)
        if t is S.SeqStmt:
            for c in getattr(s, "comments", ()) or ():
                out.append(indent + c)
            last = len(s.seq) - 1
            for i, x in enumerate(s.seq):
                # a statement that scopes over the rest of its body prints flat only when it
                # ends the sequence; elsewhere it opens a `with` block of its own
                self.nested = i < last and type(x) in _SCOPING
                self.stmt(x, out, indent)
            self.nested = False
            return
        meth = getattr(self, "_s_" + t.__name__)
        meth(s, out, indent)

    def take_nested(self) -> bool:
        n, self.nested = self.nested, False
        return n

    def _s_BufferStore(self, s, out, indent):
        self.emit(out, indent, f"{self.name_of(s.buffer)}[{self.indices(s.indices)}] = "
                  f"{self.expr(s.value)}", s)

    def _s_Evaluate(self, s, out, indent):
        v = s.value
        if isinstance(v, E.Call) and v.op == "ret":
            self.emit(out, indent, f"return {self.expr(v.args[0])}", s)
        elif isinstance(v, E.Call) and v.op in ("break_loop", "continue_loop"):
            self.emit(out, indent, "break" if v.op == "break_loop" else "continue", s)
        elif isinstance(v, E.Call):
            self.emit(out, indent, self.expr(v), s)
        else:
            self.emit(out, indent, f"{self.T}.evaluate({self.expr(v)})", s)

    def _s_For(self, s, out, indent):
        chain = [s]
        if _plain_serial(s):
            cur = s
            while True:
                nxt = cur.body
                if not (isinstance(nxt, S.For) and _plain_serial(nxt) and not nxt.comments
                        and not nxt.trailing and not _uses_any(nxt.extent, chain)):
                    break
                chain.append(nxt)
                cur = nxt
        names = [self.define(f.loop_var, f.loop_var.name) for f in chain]
        for f in chain:
            self.loop_of[id(f.loop_var)] = f
        T = self.T
        if len(chain) > 1:
            head = (f"for {', '.join(names)} in {T}.grid("
                    f"{', '.join(self.expr(f.extent) for f in chain)}):")
        else:
            head = f"for {names[0]} in {self.loop_iter(s)}:"
        self.emit(out, indent, head, s, simple=False)
        self.stmt(chain[-1].body, out, indent + INDENT)
        for f in chain:
            self.undefine(f.loop_var)
            self.loop_of.pop(id(f.loop_var), None)

    def loop_iter(self, f: S.For) -> str:
        T = self.T
        if _is_zero(f.min):
            rng = self.expr(f.extent)
        else:
            rng = f"{self.expr(f.min)}, {self.expr(_add(f.min, f.extent))}"
        kw = []
        if f.kind == "thread_binding":
            kw.append(f"thread={_str(f.thread_tag)}")
        if f.annotations:
            kw.append(f"annotations={self.annotations(f.annotations)}")
        args = ", ".join([rng] + kw)
        if f.kind == "serial":
            return f"range({rng})" if not kw else f"{T}.serial({args})"
        fn = {"parallel": "parallel", "vectorized": "vectorized", "unrolled": "unroll",
              "thread_binding": "thread_binding"}[f.kind]
        return f"{T}.{fn}({args})"

    def _s_IfThenElse(self, s, out, indent):
        self.emit(out, indent, f"if {self.expr(s.condition)}:", s, simple=False)
        self.stmt(s.then_case, out, indent + INDENT)
        if s.else_case is not None:
            out.append(indent + "else:")
            self.stmt(s.else_case, out, indent + INDENT)

    def _s_While(self, s, out, indent):
        self.emit(out, indent, f"while {self.expr(s.condition)}:", s, simple=False)
        self.stmt(s.body, out, indent + INDENT)

    def scoped_body(self, nested, header, s, out, indent):
        """Emit a scoping statement: `with header:` and an indented body when nested, else
        the flat statement `header` followed by the body at the same indentation."""
        if nested:
            self.emit(out, indent, f"with {header}:", s, simple=False)
            self.stmt(s.body, out, indent + INDENT)
        else:
            self.emit(out, indent, header, s)
            self.stmt(s.body, out, indent)

    def _s_LetStmt(self, s, out, indent):
        nested = self.take_nested()
        value = self.expr(s.value)
        name = self.define(s.var, s.var.name)
        if nested:
            self.emit(out, indent, f"with {self.T}.LetStmt({value}) as {name}:", s, simple=False)
            self.stmt(s.body, out, indent + INDENT)
        elif s.spelling == "bind" and self.spelling == "tirx":
            self.emit(out, indent, f"{name} = {self.T}.bind({value})", s)
            self.stmt(s.body, out, indent)
        else:
            ann = self.param_type(s.var)
            if self.spelling == "tirx" and (s.var.dtype == "handle" or s.spelling == "let"):
                ann = f"{self.T}.let[{ann}]"     # current TVM wants T.let for handles
            self.emit(out, indent, f"{name}: {ann} = {value}", s)
            self.stmt(s.body, out, indent)
        self.undefine(s.var)

    def _s_AssertStmt(self, s, out, indent):
        if self.take_nested():
            self.scoped_body(True, f"{self.T}.Assert({self.expr(s.condition)}, "
                             f"{self.expr(s.message)})", s, out, indent)
            return
        self.emit(out, indent, f"assert {self.expr(s.condition)}, {self.expr(s.message)}", s)
        self.stmt(s.body, out, indent)

    def _s_Allocate(self, s, out, indent):
        name = self.define(s.buffer_var, s.buffer_var.name)
        scope = s.buffer_var.type_annotation.scope if s.buffer_var.type_annotation else "global"
        args = [f"[{', '.join(self.expr(x) for x in s.extents)}]", _str(s.dtype), _str(scope)]
        if not (isinstance(s.condition, E.IntImm) and s.condition.value == 1):
            args.append(self.expr(s.condition))
        if s.annotations:
            args.append(f"annotations={self.annotations(s.annotations)}")
        if self.take_nested():
            self.scoped_body(True, f"{self.T}.allocate({', '.join(args)}) as {name}", s, out,
                             indent)
        else:
            self.scoped_body(False, f"{name} = {self.T}.allocate({', '.join(args)})", s, out,
                             indent)
        self.undefine(s.buffer_var)

    def _s_AllocateConst(self, s, out, indent):
        self.take_nested()
        name = self.define(s.buffer_var, s.buffer_var.name)
        data = self.const_data(s.const_name)
        exts = ", ".join(self.expr(x) for x in s.extents)
        self.emit(out, indent, f"{name} = {self.T}.allocate_const({data}, {_str(s.dtype)}, "
                  f"[{exts}])", s)
        self.stmt(s.body, out, indent)
        self.undefine(s.buffer_var)

    def const_data(self, const_name) -> str:
        from .params_print import const_data
        return const_data(self, const_name)

    def _s_DeclBuffer(self, s, out, indent):
        nested = self.take_nested()
        b = s.buffer
        # without `data=` T.decl_buffer allocates: a data variable nothing else names is its own
        own_data = id(b.data) not in self.names
        args = self.buffer_args(b, data=not own_data)
        name = self.define_buffer(b)
        kw = "decl_buffer"
        if own_data and s.spelling == "alloc_buffer" and self.spelling == "tirx" and not nested:
            kw = "alloc_buffer"
        if nested:
            self.scoped_body(True, f"{self.T}.decl_buffer({args}) as {name}", s, out, indent)
        else:
            self.scoped_body(False, f"{name} = {self.T}.{kw}({args})", s, out, indent)
        self.undefine(b)

    def _s_AttrStmt(self, s, out, indent):
        T = self.T
        nested = self.take_nested()
        if s.attr_key == "thread_extent" and isinstance(s.node, S.IterVar):
            iv = s.node
            if id(iv.var) in self.names:
                self.scoped_body(nested, f"{T}.launch_thread({self.name_of(iv.var)}, "
                                 f"{self.expr(s.value)})", s, out, indent)
                return
            name = self.define(iv.var, iv.var.name)
            call = f"{T}.launch_thread({_str(iv.thread_tag)}, {self.expr(s.value)})"
            if nested:
                self.scoped_body(True, f"{call} as {name}", s, out, indent)
            else:
                self.scoped_body(False, f"{name} = {call}", s, out, indent)
            self.undefine(iv.var)
            return
        self.emit(out, indent, f"with {T}.attr({self.pyvalue(s.node)}, {_str(s.attr_key)}, "
                  f"{self.expr(s.value)}):", s, simple=False)
        self.stmt(s.body, out, indent + INDENT)

    def _s_BlockRealize(self, s, out, indent):
        b = s.block
        T = self.T
        kw = "sblock" if self.spelling == "tirx" else "block"
        self.emit(out, indent, f"with {T}.{kw}({_str(b.name_hint)}):", s, simple=False)
        inner = indent + INDENT
        values = [self.expr(v) for v in s.iter_values]    # bindings use the outer names
        self.iter_vars(b, s.iter_values, values, out, inner)
        if not (isinstance(s.predicate, E.IntImm) and s.predicate.value == 1):
            out.append(f"{inner}{T}.where({self.expr(s.predicate)})")
        self.block_decls(b, out, inner)
        self.stmt(b.body, out, inner)
        for iv in b.iter_vars:
            self.undefine(iv.var)
        for buf in b.alloc_buffers:
            self.undefine(buf)
        for m in b.match_buffers:
            self.undefine(m.buffer)

    def block_decls(self, b, out, inner):
        T = self.T
        if b.reads is not None:
            out.append(f"{inner}{T}.reads({', '.join(self.region(r) for r in b.reads)})")
        if b.writes is not None:
            out.append(f"{inner}{T}.writes({', '.join(self.region(r) for r in b.writes)})")
        if b.annotations:
            kw = "sblock_attr" if self.spelling == "tirx" else "block_attr"
            out.append(f"{inner}{T}.{kw}({self.annotations(b.annotations)})")
        for buf in b.alloc_buffers:
            name = self.define_buffer(buf)
            self.emit(out, inner, f"{name} = {T}.{self.alloc_kw(buf)}({self.buffer_args(buf)})")
        for m in b.match_buffers:
            src = self.region(m.source)
            name = self.define_buffer(m.buffer)
            self.emit(out, inner, f"{name} = {T}.match_buffer({src}, "
                      f"{self.buffer_args(m.buffer)})")
        if b.init is not None:
            out.append(f"{inner}with {T}.init():")
            self.stmt(b.init, out, inner + INDENT)

    def iter_vars(self, b, iter_values, values, out, indent):
        T = self.T
        group = []

        def flush():
            if not group:
                return
            if len(group) == 1:
                single(group[0])
            else:
                names = [self.define(b.iter_vars[i].var, b.iter_vars[i].var.name) for i in group]
                kinds = "".join(b.iter_vars[i].kind for i in group)
                out.append(f"{indent}{', '.join(names)} = {T}.axis.remap({_str(kinds)}, "
                           f"[{', '.join(values[i] for i in group)}])")
            group.clear()

        def single(i):
            iv = b.iter_vars[i]
            kind = {"S": "spatial", "R": "reduce", "C": "scan", "O": "opaque"}[iv.kind]
            if _is_zero(iv.dom.min):
                dom = self.expr(iv.dom.extent)
            else:
                dom = f"({self.expr(iv.dom.min)}, {self.expr(_add(iv.dom.min, iv.dom.extent))})"
            extra = ""
            if iv.var.dtype != "int32" and not _same_dtype_dom(iv):
                extra = f", dtype={_str(iv.var.dtype)}"
            name = self.define(iv.var, iv.var.name)
            self.emit(out, indent, f"{name} = {T}.axis.{kind}({dom}, {values[i]}{extra})", iv)

        for i, (iv, v) in enumerate(zip(b.iter_vars, iter_values)):
            f = self.loop_of.get(id(v)) if isinstance(v, E.Var) else None
            if f is not None and iv.kind in ("S", "R") and _expr_same(f.min, iv.dom.min) and \
                    _expr_same(f.extent, iv.dom.extent) and iv.var.dtype == v.dtype:
                group.append(i)
            else:
                flush()
                single(i)
        flush()

    # ---- functions and modules -------------------------------------------------------------
    def prim_func(self, f: S.PrimFunc, out, indent=""):
        T = self.T
        for c in f.comments:
            out.append(indent + c)
        args = []
        if f.private:
            args.append("private=True")
        if self.spelling == "tirx":
            args.append("s_tir=True")
        out.append(f"{indent}@{T}.prim_func" + (f"({', '.join(args)})" if args else ""))
        params = []
        bmap = {id(v): b for v, b in f.buffer_map}
        border = {id(v): i for i, (v, _) in enumerate(f.buffer_map)}
        sugared = set()
        for p in f.params:
            b = bmap.get(id(p))
            # `A: T.Buffer(...)` binds in parameter order: only a prefix of the buffer map
            if b is not None and _simple_buffer(b) and border[id(p)] == len(sugared) and \
                    id(b.data) not in self.names:
                name = self.define_buffer(b)
                params.append(f"{name}: {T}.Buffer({self.buffer_args(b)})")
                sugared.add(id(p))
            else:
                name = self.define(p, p.name)
                params.append(f"{name}: {self.param_type(p)}")
        ret = f" -> {T}.{f.ret_type}" if f.ret_type else ""
        header = f"def {f.name}({', '.join(params)}){ret}:"
        self.emit(out, indent, header)
        inner = indent + INDENT
        if f.attrs:
            out.append(f"{inner}{T}.func_attr({self.annotations(f.attrs)})")
        # symbolic variables used in buffer shapes
        seen = set(id(p) for p in f.params)
        for _, b in f.buffer_map:
            for e in list(b.shape) + list(b.strides) + ([b.elem_offset] if b.elem_offset is not
                                                         None else []):
                for v in free_vars(e):
                    if id(v) not in seen and id(v) not in self.names:
                        seen.add(id(v))
                        name = self.define(v, v.name)
                        out.append(f"{inner}{name} = {T}.{v.dtype}()")
        for p, b in f.buffer_map:
            if id(p) not in sugared:
                name = self.define_buffer(b)
                self.emit(out, inner, f"{name} = {T}.match_buffer({self.name_of(p)}, "
                          f"{self.buffer_args(b)})")
        body = f.body
        if isinstance(body, S.BlockRealize) and _implicit_root(body):
            blk = body.block
            for buf in blk.alloc_buffers:
                name = self.define_buffer(buf)
                self.emit(out, inner, f"{name} = {T}.{self.alloc_kw(buf)}({self.buffer_args(buf)})")
            body = blk.body
        # a thread variable launched more than once is declared once, as TVMScript does
        for var, tag in _relaunched_threads(body):
            if id(var) not in self.names:
                name = self.define(var, var.name)
                out.append(f"{inner}{name} = {T}.env_thread({_str(tag)})")
        # free variables of the body that nothing defines (declared like `n = T.int32()`)
        for v in free_vars_stmt(body):
            if id(v) not in self.names:
                name = self.define(v, v.name)
                out.append(f"{inner}{name} = {T}.{v.dtype}()")
        self.stmt(body, out, inner)

    def param_type(self, p: E.Var) -> str:
        T = self.T
        if p.dtype == "handle":
            if p.type_annotation is not None:
                ta = p.type_annotation
                if ta.scope != "global":
                    return f"{T}.handle({_str(ta.element)}, {_str(ta.scope)})"
                return f"{T}.handle({_str(ta.element)})"
            return f"{T}.handle"
        return f"{T}.{p.dtype}"


_SCOPING = (S.LetStmt, S.AssertStmt, S.Allocate, S.DeclBuffer, S.AttrStmt)


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


def inline_values(arr, dtype, T="T") -> str:
    from .params_print import inline_values as values
    return values(arr, dtype, T)


def _add(a, b):
    if isinstance(b, int):
        b = E.IntImm(a.dtype if D.is_int(a.dtype) else "int32", b)
    if isinstance(a, E.IntImm) and isinstance(b, E.IntImm):
        return E.IntImm(a.dtype, a.value + b.value)
    if _is_zero(a):
        return b
    if isinstance(b, E.Sub) and _expr_same(b.b, a):
        return b.a
    return E.Add(a, b, a.dtype)


def _is_zero(e) -> bool:
    return isinstance(e, E.IntImm) and e.value == 0


def _expr_same(a, b) -> bool:
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, E.IntImm):
        return a.value == b.value and a.dtype == b.dtype
    return _strict_equal(a, b)       # variables must be the very same ones here


def _strict_equal(a, b) -> bool:
    import dataclasses
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, (E.Var, S.Buffer)):
        return False
    if dataclasses.is_dataclass(a):
        return all(_strict_equal(getattr(a, f.name), getattr(b, f.name))
                   for f in dataclasses.fields(a) if f.name != "span")
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_strict_equal(x, y) for x, y in zip(a, b))
    return a == b


def _same_dtype_dom(iv) -> bool:
    return iv.dom.extent.dtype == iv.var.dtype


def _plain_serial(f: S.For) -> bool:
    return f.kind == "serial" and not f.annotations and _is_zero(f.min)


def _uses_any(e, loops) -> bool:
    ids = {id(f.loop_var) for f in loops}
    return any(id(v) in ids for v in free_vars(e))


def _simple_buffer(b: S.Buffer) -> bool:
    return (all(isinstance(x, E.IntImm) for x in b.shape) and not b.strides and
            b.elem_offset is None and b.scope == "global" and b.align == -1 and
            b.offset_factor == 0 and b.buffer_type == "default" and not b.axis_separators)


def _relaunched_threads(body) -> list:
    """(var, tag) of the thread variables that more than one T.launch_thread binds."""
    from ..ir.visit import walk
    seen, order = {}, []

    def visit(x):
        if type(x) is S.AttrStmt and x.attr_key == "thread_extent" and \
                isinstance(x.node, S.IterVar):
            v = x.node.var
            if id(v) not in seen:
                seen[id(v)] = 0
                order.append((v, x.node.thread_tag))
            seen[id(v)] += 1
        return not isinstance(x, E.PrimExpr)

    walk(body, visit)
    return [(v, tag) for v, tag in order if seen[id(v)] > 1]


def _implicit_root(r: S.BlockRealize) -> bool:
    b = r.block
    return (b.name_hint == "root" and not b.iter_vars and b.reads is None and b.writes is None
            and b.init is None and not b.match_buffers and not b.annotations and not r.comments)


def free_vars(e) -> list:
    """Variables an expression mentions, in order of first appearance."""
    out, seen = [], set()

    def walk(x):
        if isinstance(x, E.Var):
            if id(x) not in seen:
                seen.add(id(x))
                out.append(x)
            return
        if isinstance(x, (E.IntImm, E.FloatImm, E.StringImm)) or x is None:
            return
        if isinstance(x, E.BufferLoad):
            for i in x.indices:
                walk(i)
            return
        if isinstance(x, tuple):
            for y in x:
                walk(y)
            return
        if hasattr(x, "__dataclass_fields__"):
            for f in x.__dataclass_fields__:
                if f not in ("span", "dtype", "buffer"):
                    walk(getattr(x, f))

    walk(e)
    return out


def free_vars_stmt(s) -> list:
    """Variables a statement uses that no statement inside it defines (the `n = T.int32()`
    declarations a printed function needs)."""
    from ..ir.visit import free_variables
    return free_variables(s)


def wrap_line(indent: str, text: str) -> list:
    """Split a too-long statement whose right-hand side is one call, one argument a line."""
    if len(indent) + len(text) <= LINE_LIMIT:
        return [indent + text]
    split = _split_call(text)
    if split is None:
        return [indent + text]
    head, args, tail = split
    inner = indent + INDENT
    return [indent + head + "("] + [inner + a + "," for a in args] + [indent + ")" + tail]


def _split_call(text):
    # the closing parenthesis of the last call, followed by '', ':' or ' -> X:'
    if text.endswith("):"):
        close = len(text) - 2
    elif text.endswith(")"):
        close = len(text) - 1
    elif ") -> " in text and text.endswith(":"):
        close = text.rfind(") -> ")
    else:
        return None
    depth = 0
    i = close
    in_str = None
    opens = None
    while i >= 0:
        ch = text[i]
        if in_str:
            if ch == in_str and (i == 0 or text[i - 1] != "\\"):
                in_str = None
        elif ch in "\"'":
            in_str = ch
        elif ch in ")]}":
            depth += 1
        elif ch in "([{":
            depth -= 1
            if depth == 0:
                opens = i
                break
        i -= 1
    if opens is None or opens == 0 or text[opens] != "(":
        return None
    head = text[:opens]
    if not (head[-1].isalnum() or head[-1] == "_"):
        return None
    # the call must be the whole right-hand side (or the whole statement / def header)
    start = _call_start(head)
    prefix = head[:start]
    if prefix not in ("", "def ", "return ") and not prefix.endswith(" = "):
        return None
    args = _split_top(text[opens + 1:close])
    if len(args) < 2 and not head.startswith("def "):
        return None
    return head, args, text[close + 1:]


def _call_start(head: str) -> int:
    i = len(head)
    while i > 0 and (head[i - 1].isalnum() or head[i - 1] in "_."):
        i -= 1
    return i


def _split_top(s: str) -> list:
    out, depth, cur, in_str = [], 0, [], None
    for i, ch in enumerate(s):
        if in_str:
            cur.append(ch)
            if ch == in_str and s[i - 1] != "\\":
                in_str = None
            continue
        if ch in "\"'":
            in_str = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    last = "".join(cur).strip()
    if last:
        out.append(last)
    return out


# ---- entry points ---------------------------------------------------------------------
def print_prim_func(f, spelling=None, tir="T", constants=None, **kw) -> str:
    p = Printer(spelling or f.spelling, tir, constants=constants, **kw)
    out = []
    p.prim_func(f, out)
    return "\n".join(out) + "\n"


def print_module_class(name, functions, spelling, tir="T", ir="I", constants=None, **kw) -> str:
    out = [f"@{ir}.ir_module", f"class {name}:"]
    first = True
    for fname, f in functions:
        if not first:
            out.append("")
        first = False
        if isinstance(f, S.PrimFunc):
            p = Printer(spelling, tir, ir, constants=constants, **kw)
            p.module_class = name
            p.prim_func(f, out, INDENT)
        else:
            out.extend(INDENT + line if line.strip() else line
                       for line in _dedent(f.text).split("\n"))
    return "\n".join(out) + "\n"


def _dedent(text):
    import textwrap
    return textwrap.dedent(text)


def imports_for(spelling, module=False) -> str:
    lines = []
    if module:
        lines.append("from tvm.script import ir as I")
    lines.append(f"from tvm.script import {'tirx' if spelling == 'tirx' else 'tir'} as T")
    return "\n".join(lines) + "\n"


def to_script(obj, spelling=None, imports=True, params=None, **kw) -> str:
    """Canonical text of an IRModule or PrimFunc (imports included by default).

    `params`: a `.params` path (or a ParamsSink) that constants larger than `inline_threshold`
    elements go to; the file is written (or updated) and the text refers to it as `P["name"]`
    (see params_print.py).  Without it every constant not already in a file prints inline."""
    from .params_print import script_params
    with script_params(params, kw) as sink:
        text = _to_script(obj, spelling, imports, **kw)
        return sink.with_header(text) if imports else text


def _to_script(obj, spelling=None, imports=True, **kw) -> str:
    if isinstance(obj, S.PrimFunc):
        sp = spelling or obj.spelling
        body = print_prim_func(obj, sp, **kw)
        return (imports_for(sp) + "\n\n" if imports else "") + body
    mod = obj
    sp = spelling or mod.spelling
    constants = mod.constants
    parts = []
    if mod.name is not None:
        parts.append(print_module_class(mod.name, mod.functions, sp, constants=constants, **kw))
    else:
        for name, f in mod.functions:
            if isinstance(f, S.PrimFunc):
                parts.append(print_prim_func(f, sp, constants=constants, **kw))
    text = "\n\n".join(parts)
    if imports:
        text = imports_for(sp, mod.name is not None) + "\n\n" + text
    return text
