"""What every part of the printer shares: layout constants, string quoting, and the
naming of variables and buffers (`PrinterBase`)."""
from __future__ import annotations

import json

from ...ir import expr as E

LINE_LIMIT = 100
INDENT = "    "


def _str(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


class PrinterBase:
    def __init__(self, spelling="classic", tir="T", ir="I", inline_threshold=64, constants=None,
                 params_alias="P", params=None):
        self.spelling = spelling
        self.T = tir
        self.I = ir
        self.names: dict = {}          # id(var or buffer) -> printed name
        self.live: dict = {}           # name -> count of live definitions
        self.loop_of: dict = {}        # id(loop var) -> For, while printing inside it
        self.expr_alias: dict = {}     # id(expr) -> the name of a stepped loop it stands for
        self.scalar_names: dict = {}   # id(buffer) -> name, of a local scalar printed as a name
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
