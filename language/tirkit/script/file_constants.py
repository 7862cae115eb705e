"""The top-level constants each kernel of a file sees (syntax/constants.py), with the
`.params` tables its `NAME = params.load(...)` lines open: at column 0, the names assigned
above the kernel, with their values there, since Python runs a decorator where it stands."""
from __future__ import annotations

from ..syntax.constants import constant_assignments, constants_before
from .lower.values import LaterConstant


def constants_seen(text, chunks, aliases, path=None):
    """([{name: value}] for each chunk, diagnostics of the `.params` loads).  A chunk at
    column 0 sees the constants assigned above it, and the names assigned only below it as
    `LaterConstant`s (their use is an error that says where they are assigned); a nested
    one (in a function, run later) sees every constant of the file."""
    if not chunks:
        return [], []
    assignments, diags = constant_assignments(text), []
    if aliases.params:
        from .params_ref import param_tables
        tables, diags = param_tables(text.split("\n"), aliases, path)
        assignments = sorted(assignments + [(t.span.line, name, t) for name, t in tables.items()],
                             key=lambda a: a[0])
    at = [c.start_line if c.col_offset == 0 else None for c in chunks]
    lines = {}
    for line, name, value in assignments:
        if value is not None:
            lines.setdefault(name, []).append(line)
    out = []
    for start, snap in zip(at, constants_before(assignments, at)):
        if start is not None:
            for name, where in lines.items():
                later = [ln for ln in where if ln > start]
                if name not in snap and later:
                    snap[name] = LaterConstant(later[0])
        out.append(snap)
    return out, diags
