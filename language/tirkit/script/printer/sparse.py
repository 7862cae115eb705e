"""Sparse kernels: axis declarations, `T.match_sparse_buffer` and `T.sp_iter`, in the
spelling SparseTIR's scripts use (positional arguments; the index type, `sorted=False` and
tirkit's `format="hash"` only where they differ from the default)."""
from __future__ import annotations

from ...ir.sparse import SparseBuffer
from .base import INDENT, _str


class SparsePrinter:
    def sparse_axis_decl(self, a) -> str:
        T = self.T
        name = self.define(a, a.name)
        idt = _str(a.idtype)
        if a.kind == "dense_fixed":
            extra = f", {idt}" if a.idtype != "int32" else ""
            return f"{name} = {T}.dense_fixed({self.expr(a.length)}{extra})"
        shape = f"({self.expr(a.length)}, {self.expr(a.nnz)})"
        if a.kind == "sparse_variable":
            data = f"({self.name_of(a.indptr)}, {self.name_of(a.indices)})"
        elif a.kind == "dense_variable":
            data = self.name_of(a.indptr)
        else:
            data = self.name_of(a.indices)
        tail = ""
        if not a.sorted:
            tail += ", sorted=False"
        if a.format:
            tail += f", format={_str(a.format)}"
        return f"{name} = {T}.{a.kind}({self.name_of(a.parent)}, {shape}, {data}, {idt}{tail})"

    def sparse_buffer_decl(self, param, b) -> str:
        name = self.define_buffer(b)
        axes = ", ".join(self.name_of(a) for a in b.axes)
        if len(b.axes) == 1:
            axes += ","
        return f"{name} = {self.T}.match_sparse_buffer({self.name_of(param)}, ({axes}), " \
            f"{_str(b.dtype)})"

    def _s_SparseIteration(self, s, out, indent):
        T = self.T
        axes = ", ".join(self.name_of(it.axis) for it in s.sp_iter_vars)
        kinds = "".join("R" if it.is_reduction else "S" for it in s.sp_iter_vars)
        names = [self.define(it.var, it.var.name) for it in s.sp_iter_vars]
        self.emit(out, indent, f"with {T}.sp_iter([{axes}], {_str(kinds)}, {_str(s.name)}) as "
                  f"[{', '.join(names)}]:", s, simple=False)
        inner = indent + INDENT
        if s.init is not None:
            out.append(f"{inner}with {T}.init():")
            self.stmt(s.init, out, inner + INDENT)
        self.stmt(s.body, out, inner)
        for it in s.sp_iter_vars:
            self.undefine(it.var)


def is_sparse_buffer(b) -> bool:
    return isinstance(b, SparseBuffer)
