"""The functions of an `@I.ir_module` as symbols of the position index (symbols.py): kind
"function", defined at the name of the `def` (`PrimFunc.header_span`), used at that name and
at every call `Module.f(...)` in any function of the module.  A function's uses are complete
once every function is indexed: `SymbolIndex.at` indexes them all when it finds one."""
from __future__ import annotations

from ..diagnostics import Span
from ..ir import stmt as S


class FunctionSymbols:
    """Mixed into `SymbolIndex`: `self.result`, `self.lines`, `self._funcs` and
    `self._symbols` are its; `self._lock` is held while functions are indexed."""

    def _function_symbols(self) -> dict:
        """{name: Symbol} of the module's prim_funcs that have a name span (made once)."""
        table = self._by_function
        if table is None:
            from .symbols import Symbol
            whole = Span(1, 1, len(self.lines) + 1, 1)
            table = {}
            for f in self._funcs:
                if f.header_span is not None and f.name not in table:
                    sym = Symbol("function", f.name, f, f.header_span, whole, f, "function",
                                 None, [f.header_span])
                    table[f.name] = sym
                    self._symbols.append(sym)
            self._by_function = table
        return table

    def function_symbol(self, name: str):
        """The symbol of the module's function `name`, or None."""
        with self._lock:
            return self._function_symbols().get(name)

    def function_token(self, token):
        """The function symbol an identifier token names, or None: `Module.f` with Module
        the module's class, or the name of a `def`.  The token is recorded as a use."""
        table = self._function_symbols()
        module = self.result.module.name
        sym = table.get(token.name)
        if sym is None:
            return None
        if token.attribute:
            if module is None or token.base != module:
                return None
        elif (token.span.line, token.span.column) != (sym.def_span.line, sym.def_span.column):
            return None
        if all((u.line, u.column) != (token.span.line, token.span.column) for u in sym.uses):
            sym.uses.append(token.span)
            sym.uses.sort(key=lambda u: (u.line, u.column))
        return sym

    def function_rename_conflict(self, sym, new_name: str):
        """Why renaming function `sym` to `new_name` is refused, or None."""
        taken = {n for n, f in self.result.module.functions if isinstance(f, S.PrimFunc)}
        if new_name != sym.name and new_name in taken:
            module = self.result.module.name
            return f"'{new_name}' is already a function of " + \
                (f"'{module}'" if module else "this file")
        return None

    def callers(self, sym) -> list:
        """[(calling PrimFunc, [spans of its calls])] of a function symbol, in the order the
        callers are defined."""
        self._all()
        out = []
        for f in self._funcs:
            uses = [u for u in sym.uses if u != sym.def_span and
                    f.span.line <= u.line <= f.span.end_line]
            if uses:
                out.append((f, uses))
        return out

    def callees(self, sym) -> list:
        """[(called function's Symbol, [spans of the calls])] of the function of `sym`, in
        the order the callees are defined."""
        self._all()
        f = sym.func
        out = []
        for g in self._by_function.values():
            uses = [u for u in g.uses if u != g.def_span and
                    f.span.line <= u.line <= f.span.end_line]
            if uses:
                out.append((g, uses))
        return out
