"""Functions and modules: the `T.prim_func` header and declarations, the composed
`Printer`, and the entry points (`to_script`, `print_prim_func`, `print_module_class`)."""
from __future__ import annotations

from ...ir import expr as E
from ...ir import stmt as S
from ...ir.visit import contains, vars_in
from .base import INDENT, PrinterBase, _str
from .consts import ConstPrinter
from .exprs import ExprPrinter
from .sparse import SparsePrinter, is_sparse_buffer
from .stmts import StmtPrinter


class FuncPrinter:
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
                for v in vars_in(e):
                    if id(v) not in seen and id(v) not in self.names:
                        seen.add(id(v))
                        name = self.define(v, v.name)
                        out.append(f"{inner}{name} = {T}.{v.dtype}()")
        for p, b in f.buffer_map:
            if id(p) not in sugared and not is_sparse_buffer(b):
                shared = id(b.data) in self.names      # another buffer's data (`data=A.data`)
                name = self.define_buffer(b)
                self.emit(out, inner, f"{name} = {T}.match_buffer({self.name_of(p)}, "
                          f"{self.buffer_args(b, data=shared)})")
        # a sparse kernel's axes, then its sparse buffers (they name the axes)
        for a in f.sparse_axes:
            self.emit(out, inner, self.sparse_axis_decl(a))
        for p, b in f.buffer_map:
            if is_sparse_buffer(b):
                self.emit(out, inner, self.sparse_buffer_decl(p, b))
        body = f.body
        if isinstance(body, S.BlockRealize) and _implicit_root(body):
            blk = body.block
            for buf in blk.alloc_buffers:
                name = self.define_buffer(buf)
                self.emit(out, inner, f"{name} = {T}.{self.alloc_kw(buf)}({self.buffer_args(buf)})")
            body = blk.body
        # a thread variable launched more than once is declared once, as TVMScript does
        for var, tag in _declared_threads(body):
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


class Printer(FuncPrinter, SparsePrinter, StmtPrinter, ConstPrinter, ExprPrinter, PrinterBase):
    """IR -> canonical TVMScript text; one instance prints one function."""


def _simple_buffer(b: S.Buffer) -> bool:
    return (not is_sparse_buffer(b) and all(isinstance(x, E.IntImm) for x in b.shape) and not b.strides and
            b.elem_offset is None and b.scope == "global" and b.align == -1 and
            b.offset_factor == 0 and b.buffer_type == "default" and not b.axis_separators)


def _declared_threads(body) -> list:
    """(var, tag) of the thread variables printed as `T.env_thread` declarations: those more
    than one T.launch_thread binds, and those whose dtype differs from their extent's (which
    `T.launch_thread("tag", extent)` would give the variable)."""
    from ...ir.visit import walk
    seen, order, typed = {}, [], set()

    def visit(x):
        if type(x) is S.AttrStmt and x.attr_key == "thread_extent" and \
                isinstance(x.node, S.IterVar):
            v = x.node.var
            if id(v) not in seen:
                seen[id(v)] = 0
                order.append((v, x.node.thread_tag))
            seen[id(v)] += 1
            if v.dtype != x.value.dtype:
                typed.add(id(v))
        return not isinstance(x, E.PrimExpr)

    walk(body, visit)
    return [(v, tag) for v, tag in order if seen[id(v)] > 1 or id(v) in typed]


def _implicit_root(r: S.BlockRealize) -> bool:
    """Whether the root block can be left out of the text: it says nothing of its own, the
    text without it reads back with an implicit root (which needs a block in the body or a
    function-level allocation), and its body will not read back as the root (a lone block
    without iterators would)."""
    b = r.block
    lone = isinstance(b.body, S.BlockRealize) and not b.body.block.iter_vars and \
        not b.alloc_buffers
    implied = b.alloc_buffers or contains(b.body, lambda _: True, S.BlockRealize)
    return (b.name_hint == "root" and not b.iter_vars and b.reads is None and b.writes is None
            and b.init is None and not b.match_buffers and not b.annotations and not r.comments
            and not lone and bool(implied))


def free_vars_stmt(s) -> list:
    """Variables a statement uses that no statement inside it defines (the `n = T.int32()`
    declarations a printed function needs)."""
    from ...ir.visit import free_variables
    return free_variables(s)


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
    from ..params_print import script_params
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
