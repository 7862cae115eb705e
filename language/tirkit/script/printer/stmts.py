"""Statements: loops (with `T.grid` nests), blocks and their iterators, scoping statements
printed flat or as `with` blocks, and the emission of lines with their comments."""
from __future__ import annotations

from ...ir import expr as E
from ...ir import stmt as S
from ...ir.equality import identical
from ...ir.visit import vars_in, walk
from .base import INDENT, _str
from .exprs import _add, _is_zero
from .wrap import wrap_line


class StmtPrinter:
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
        if self.scalar_names and id(s.buffer) in self.scalar_names:
            self.emit(out, indent, f"{self.scalar_names[id(s.buffer)]} = {self.expr(s.value)}", s)
            return
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
        stepped = _stepped(s)
        if stepped:
            name = self.define(s.loop_var, s.loop_var.name)
            self.expr_alias[id(stepped[4])] = name
            self.loop_of[id(s.loop_var)] = s
            self.emit(out, indent, f"for {name} in {self.loop_iter(s, stepped)}:", s,
                      simple=False)
            self.stmt(s.body, out, indent + INDENT)
            self.expr_alias.pop(id(stepped[4]), None)
            self.undefine(s.loop_var)
            self.loop_of.pop(id(s.loop_var), None)
            return
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

    def loop_iter(self, f: S.For, stepped=None) -> str:
        T = self.T
        if stepped:
            start, stop, step = stepped[:3]
            rng = f"{self.expr(start)}, {self.expr(stop)}"
        elif _is_zero(f.min):
            rng = self.expr(f.extent)
        else:
            rng = f"{self.expr(f.min)}, {self.expr(_add(f.min, f.extent))}"
        kw = [f"step={step.value}"] if stepped else []
        if f.kind == "thread_binding":
            kw.append(f"thread={_str(f.thread_tag)}")
        if f.annotations:
            kw.append(f"annotations={self.annotations(f.annotations)}")
        args = ", ".join([rng] + kw)
        if f.kind == "serial":
            if stepped and not f.annotations:
                return f"range({rng}, {step.value})"
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
    def _s_DeclBuffer(self, s, out, indent):
        nested = self.take_nested()
        b = s.buffer
        scalar = None if nested or id(b.data) in self.names else _local_scalar(s)
        if scalar is not None:      # `acc: T.float32 = v`, then `acc = acc + x`, as written
            first, rest = scalar
            value = self.expr(first.value)
            name = self.define_buffer(b)
            self.scalar_names[id(b)] = name
            self.emit(out, indent, f"{name}: {self.T}.{b.dtype} = {value}", s)
            self.stmt(rest, out, indent)
            self.scalar_names.pop(id(b), None)
            self.undefine(b)
            return
        # without `data=` T.decl_buffer allocates: a data variable nothing else names is its own
        own_data = id(b.data) not in self.names
        args = self.buffer_args(b, data=not own_data)
        name = self.define_buffer(b)
        kw = "decl_buffer"
        if own_data and s.spelling == "alloc_buffer" and self.spelling == "tirx" and not nested:
            kw = "alloc_buffer"
        if s.annotations:
            args += f", annotations={self.annotations(s.annotations)}"
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
            if f is not None and iv.kind in ("S", "R") and identical(f.min, iv.dom.min) and \
                    identical(f.extent, iv.dom.extent) and iv.var.dtype == v.dtype:
                group.append(i)
            else:
                flush()
                single(i)
        flush()


_SCOPING = (S.LetStmt, S.AssertStmt, S.Allocate, S.DeclBuffer, S.AttrStmt)


def _same_dtype_dom(iv) -> bool:
    return iv.dom.extent.dtype == iv.var.dtype


def _plain_serial(f: S.For) -> bool:
    return f.kind == "serial" and not f.annotations and _is_zero(f.min) and not f.stepped


def _local_scalar(d: S.DeclBuffer):
    """(first store, the rest) of a local scalar that prints back as the name it was written
    as: one element of local scope, set first, assigned again later (so the name reads back as
    a local scalar, not a LetStmt), used only as that element; None otherwise."""
    b, body = d.buffer, d.body
    if d.spelling != "local_scalar" or b.scope != "local" or b.strides or \
            b.elem_offset is not None or len(b.shape) != 1 or not E.is_const_int(b.shape[0], 1) or \
            type(body) is not S.SeqStmt or len(body.seq) < 2:
        return None
    first = body.seq[0]
    if type(first) is not S.BufferStore or first.buffer is not b or not _at_zero(first.indices):
        return None
    rest = body.seq[1] if len(body.seq) == 2 else S.SeqStmt(body.seq[1:])
    stores, other = [], []

    def visit(x):
        if type(x) in (S.BufferStore, E.BufferLoad) and x.buffer is b:
            if not _at_zero(x.indices):
                other.append(x)
            elif type(x) is S.BufferStore:
                stores.append(x)
                walk(x.value, visit)
            return False
        if x is b or x is b.data:
            other.append(x)
        return not other
    walk(rest, visit)
    return (first, rest) if stores and not other else None


def _at_zero(indices) -> bool:
    return len(indices) == 1 and E.is_const_int(indices[0], 0)


def _stepped(f: S.For):
    """The trivia of a loop written with a step, when it still describes the loop: the extent
    is the one it made, and the loop's variable appears only in the expression that stood for
    the loop's name (a transformation may have rebuilt that; the loop then prints as it is)."""
    st = f.stepped
    if not st or f.extent is not st[3] or not _is_zero(f.min):
        return None
    sub, var, stray = st[4], f.loop_var, []

    def visit(x):
        if x is sub:
            return False
        if x is var:
            stray.append(x)
        return not stray
    walk(f.body, visit)
    return None if stray else st


def _uses_any(e, loops) -> bool:
    ids = {id(f.loop_var) for f in loops}
    return any(id(v) in ids for v in vars_in(e))
