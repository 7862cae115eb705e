"""The constants hooks: `T.allocate_const` data printed inline or referred to in a `.params`
file (the work itself lives in ../params_print.py)."""
from __future__ import annotations

from .base import _str


class ConstPrinter:
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
        from ..params_print import const_data
        return const_data(self, const_name)


def inline_values(arr, dtype, T="T") -> str:
    from ..params_print import inline_values as values
    return values(arr, dtype, T)
