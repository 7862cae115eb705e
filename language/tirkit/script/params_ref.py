"""`P["name"]` references into `.params` files, resolved lazily (see tirkit.script.params)."""
from __future__ import annotations

import os

from ..ir.constants import Constant


def file_constant(name, ref, dtype, extents, ctx, call, base_dir):
    from . import params as P
    path = ref.table.path
    full = path if os.path.isabs(path) or base_dir is None else os.path.join(base_dir, path)
    try:
        index = P.open_index(full)
    except P.ParamsError as e:
        ctx.fail("constants/params-file", f"{path}: {e}", ref.table.span)
    entry = index.get(ref.name)
    if entry is None:
        ctx.fail("constants/params-file", f"{path} has no constant named '{ref.name}'", call)
    problem = entry.mismatch(dtype, extents)
    if problem:
        ctx.fail("constants/params-file", f"constant '{ref.name}' in {path}: {problem}", call)
    return Constant(name, dtype, tuple(extents), None, path, ref.name, entry.load)
