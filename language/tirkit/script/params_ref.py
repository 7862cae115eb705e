"""`P = params.load("x.params")` and `P["name"]` in a script, resolved lazily.

The file's headers are read once per parse (and cached while it is unchanged); a problem
with the file itself is one diagnostic on the `params.load` line, a problem with one
constant (missing name, other dtype or shape) one on its `T.allocate_const` line.  A broken
reference still makes its `AllocateConst` (so later statements see the buffer), with no data.
"""
from __future__ import annotations

import os

from ..diagnostics import Diagnostic, Span
from ..ir.constants import Constant
from ..syntax.chunks import find_params_loads


def param_tables(lines, aliases, path=None):
    """({name: ParamTable}, diagnostics) for the `NAME = params.load(...)` lines."""
    from . import params as P
    from .lower.values import ParamTable
    base_dir = os.path.dirname(os.path.abspath(path)) if path else os.getcwd()
    tables, diags = {}, []
    for ld in find_params_loads(lines, aliases):
        span = Span(ld.line, 1, ld.line, ld.end_column, path)
        table = ParamTable(ld.path, span)
        table.alias = ld.name
        table.index = None
        table.problem = None
        full = ld.path if os.path.isabs(ld.path) else os.path.join(base_dir, ld.path)
        table.full_path = full
        try:
            table.index = P.open_index(full)
        except P.ParamsError as e:
            table.problem = f"{ld.path}: {e.message}"
            diags.append(Diagnostic(e.code, "error", table.problem, span))
        tables[ld.name] = table
    return tables, diags


def file_constant(name, ref, dtype, extents, ctx, call, base_dir=None) -> Constant:
    """The constant `T.allocate_const(P["key"], dtype, extents)` refers to."""
    table = ref.table
    c = Constant(name, dtype, tuple(extents), None, table.path, ref.name,
                 alias=getattr(table, "alias", None))
    index = getattr(table, "index", None)
    if index is None:
        # the file itself is unusable: already reported on the params.load line
        c.problem = getattr(table, "problem", None) or f"{table.path} is not loaded"
        return c
    entry = index.get(ref.name)
    if entry is None:
        c.problem = f"{table.path} has no constant named '{ref.name}'"
        ctx.diag("constants/missing-name", c.problem, ref.span or call)
        return c
    err = entry.mismatch(dtype, extents)
    if err is not None:
        c.problem = f"{table.path}: {err.message}"
        ctx.diag(err.code, c.problem, call)
        return c
    c.loader = entry.load
    return c
