"""Printing constants: inline lists for small ones, `P["name"]` into a `.params` file for
large ones (and for every constant that already lives in a file).

A `ParamsSink` is the file a printer may write: `to_script(mod, params="model.params")` and
`tirkit fmt` make one; without a path nothing is moved out of the text.  Names are kept
stable: a constant keeps the name it has in its file; a constant moved out of the text takes
its name in the module (made unique in the file, or the same entry reused when it already
holds the very same tensor).  `commit()` writes the file once, through a temporary file and a
rename; entries other scripts may use are kept.
"""
from __future__ import annotations

import os
from collections import OrderedDict

import numpy as np

from ..ir import dtype as D
from .floats import float_items

DEFAULT_INLINE_THRESHOLD = 64


class ParamsSink:
    """The `.params` file of one script, as the printer sees it."""

    def __init__(self, path=None, ref=None, alias="P", inline_threshold=DEFAULT_INLINE_THRESHOLD,
                 declared=False):
        self.path = os.fspath(path) if path is not None else None   # where to write; None: never
        self.ref = ref if ref is not None else (os.path.basename(self.path) if self.path else None)
        self.alias = alias
        self.inline_threshold = inline_threshold
        self.declared = declared            # the script already has `alias = params.load(ref)`
        self.pending: "OrderedDict[str, np.ndarray]" = OrderedDict()
        self.used: "OrderedDict[str, str]" = OrderedDict()   # alias -> ref, files printed
        self._index = None
        self._index_read = False
        self._by_const = {}                 # id(Constant) -> key

    # ---- the existing file -------------------------------------------------------------
    def index(self):
        if not self._index_read:
            self._index_read = True
            if self.path is not None and os.path.exists(self.path):
                from .params import ParamsError, open_index
                try:
                    self._index = open_index(self.path)
                except ParamsError:
                    self._index = None      # a broken file is diagnosed, never overwritten
        return self._index

    def writable(self) -> bool:
        if self.path is None:
            return False
        return not os.path.exists(self.path) or self.index() is not None

    # ---- choosing where a constant goes ------------------------------------------------------
    def text(self, c, T="T") -> str:
        """The data argument of `T.allocate_const` for constant c."""
        if c.external:
            alias = self.bind(c.alias or self.alias, c.file)
            return f"{alias}[{_quote(c.key or c.name)}]"
        if c.size > self.inline_threshold and self.writable() and storable(c.dtype):
            alias = self.bind(self.alias, self.ref)
            return f"{alias}[{_quote(self.key_for(c))}]"
        return inline_values(c.array(), c.dtype, T)

    def bind(self, alias, ref) -> str:
        """The name the printed text gives file `ref`: `alias`, unless another file has it."""
        for a, r in self.used.items():
            if r == ref:
                return a
        base, i = alias, 0
        while alias in self.used:
            i += 1
            alias = f"{base}_{i}"
        self.used[alias] = ref
        return alias

    def key_for(self, c) -> str:
        key = self._by_const.get(id(c))
        if key is not None:
            return key
        arr = np.asarray(c.array())
        index = self.index()
        base = c.name
        key, i = base, 0
        while True:
            if key in self.pending:
                if _same(self.pending[key], arr):
                    break
            elif index is not None and index.get(key) is not None:
                e = index.get(key)
                if e.dtype == c.dtype and tuple(e.shape) == tuple(arr.shape) and \
                        e.load().tobytes() == arr.tobytes():
                    break                   # already there: reuse, nothing to write
            else:
                self.pending[key] = arr
                break
            i += 1
            key = f"{base}_{i}"
        self._by_const[id(c)] = key
        return key

    # ---- writing ------------------------------------------------------------------------------
    def commit(self) -> bool:
        """Write the file when new constants went into it; True when it was written."""
        if not self.pending or self.path is None:
            return False
        from .params import save
        index = self.index()
        items = [(e.name, e) for e in index] if index is not None else []
        items += [(k, a) for k, a in self.pending.items() if index is None or index.get(k) is None]
        save(self.path, items)
        self.pending.clear()
        return True

    def header_lines(self, params_module="params") -> list:
        """`P = params.load("x.params")` for each file the printed text refers to."""
        return [f"{alias} = {params_module}.load({_quote(ref)})"
                for alias, ref in self.used.items()]


def storable(dtype) -> bool:
    """Whether a .params file can hold the dtype (every type TVM saves that ml_dtypes holds)."""
    from .params import _CODES
    return dtype in _CODES


def sink_for_script(text, path, inline_threshold=DEFAULT_INLINE_THRESHOLD) -> ParamsSink:
    """The sink `tirkit fmt` uses for a file: the first `NAME = params.load(...)` it has, else
    `<script name>.params` beside it under the name `P`."""
    from ..syntax.chunks import find_aliases, find_params_loads
    lines = text.split("\n")
    al = find_aliases(lines)
    base = os.path.dirname(os.path.abspath(path)) if path else None
    loads = find_params_loads(lines, al)
    if loads:
        ld = loads[0]
        full = ld.path if os.path.isabs(ld.path) or base is None else os.path.join(base, ld.path)
        return ParamsSink(full if path else None, ld.path, ld.name, inline_threshold, True)
    if path is None:
        return ParamsSink(None, None, "P", inline_threshold)
    ref = os.path.splitext(os.path.basename(path))[0] + ".params"
    taken = {ln.split("=")[0].strip() for ln in lines if ln[:1].isidentifier() and "=" in ln}
    alias = "P"
    while alias in taken or alias in al.tir or alias in al.ir:
        alias += "_"
    return ParamsSink(os.path.join(base, ref), ref, alias, inline_threshold)


def add_header(text: str, sink: ParamsSink, before_line: int) -> str:
    """Insert `from tirkit.script import params` and the sink's `P = params.load(...)` after
    the imports that precede line `before_line` (1-based), when the script lacks them."""
    from ..syntax.chunks import find_aliases
    if sink.declared or sink.ref not in sink.used.values():
        return text
    alias = next(a for a, r in sink.used.items() if r == sink.ref)
    lines = text.split("\n")
    al = find_aliases(lines)
    module = next(iter(sorted(al.params)), None)
    new = []
    if module is None:
        module = "params"
        new.append("from tirkit.script import params")
    new.append(f"{alias} = {module}.load({_quote(sink.ref)})")
    at = 0
    depth = 0
    for i, ln in enumerate(lines[:max(0, before_line - 1)]):
        if depth == 0 and (ln.startswith("from ") or ln.startswith("import ")):
            at = i + 1
            depth = ln.count("(") - ln.count(")")
        elif depth > 0:
            depth += ln.count("(") - ln.count(")")
            at = i + 1
    lines[at:at] = new
    return "\n".join(lines)


def inline_values(arr, dtype, T="T") -> str:
    """`[...]` of every value, exact to the bit (integers in full, floats see floats.py)."""
    flat = np.asarray(arr).reshape(-1)
    if D.is_float(dtype):
        items = float_items(flat, dtype, T)
    elif D.is_bool(dtype):
        items = ["True" if x else "False" for x in flat]
    else:
        items = [str(int(x)) for x in flat]
    return "[" + ", ".join(items) + "]"


def _same(a, b) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def _quote(s: str) -> str:
    import json
    return json.dumps(s, ensure_ascii=False)


# ---- the printer's side --------------------------------------------------------------------
def const_data(printer, const_name) -> str:
    """`Printer.const_data`: the data argument of one `T.allocate_const`."""
    sink = printer.params
    if sink is None:
        sink = printer.params = ParamsSink(None, alias=printer.params_alias,
                                           inline_threshold=printer.inline_threshold)
    table = printer.constants
    c = table[const_name] if table is not None and const_name in table else None
    if c is None:
        return f"{sink.bind(sink.alias, sink.ref)}[{_quote(const_name)}]"
    return sink.text(c, printer.T)


class _ScriptParams:
    """`to_script(..., params=)`: the sink for one call, committed when printing succeeds."""

    def __init__(self, params, kw):
        threshold = kw.get("inline_threshold", DEFAULT_INLINE_THRESHOLD)
        if isinstance(params, ParamsSink):
            self.sink = params
        else:
            self.sink = ParamsSink(params, inline_threshold=threshold)
        kw["params"] = self.sink

    def __enter__(self) -> "ParamsSink":
        return self.sink

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.sink.commit()
        return False


def script_params(params, kw) -> _ScriptParams:
    return _ScriptParams(params, kw)


def _with_header(self: ParamsSink, text: str) -> str:
    """Text of a whole script with `from tirkit.script import params` and the
    `P = params.load(...)` lines after its imports."""
    lines = self.header_lines()
    if not lines:
        return text
    i = text.find("\n\n")
    block = "from tirkit.script import params\n" + "\n".join(lines) + "\n"
    if i < 0:
        return block + "\n\n" + text
    return text[:i + 1] + block + text[i + 1:]


ParamsSink.with_header = _with_header
