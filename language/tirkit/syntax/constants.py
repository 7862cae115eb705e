"""A file's top-level constants: the one-line assignments at column 0 that a kernel may use
(`N = 1 << 10`, `S = (N, 2 * N)`, `M = K = 64`), computed as `pyconst` computes, never
executed, in the order Python runs them."""
from __future__ import annotations

import re

from . import pyconst

_TOP_LINE = re.compile(r"\n([A-Za-z_][^\n]*)")
_TOP_ASSIGN = re.compile(r"^[A-Za-z_][\w, ]*(?::[^=\n]*)?=[^=]")   # `N = `, `M, N = `, `K: int = `


def top_level_constants(text: str) -> dict:
    """One-line assignments at column 0 (`N = ...`, `M = N = ...`, `M, N = ...`, `K: int =
    ...`) whose value is made of literals (ints, floats, strings, tuples of them), constants
    defined before it, Python's operators and the builtins of `pyconst` (`N = 1 << 10`,
    `S = (N, 2 * N)`, `R = max(M, N)`): the only outside values a kernel may use; computed
    as `pyconst` computes, never executed.  All of the file's, whatever their place."""
    return constants_before(constant_assignments(text), [None])[0]


def constants_before(assignments, lines) -> list:
    """For each 1-based line of `lines` (None: the end of the file), the constants of
    `assignments` (`constant_assignments`) as Python has them when it reaches that line:
    only the assignments above it, each name with its latest value.  A kernel at column 0
    sees these, since its decorator runs where it stands."""
    end = float("inf")
    at = [end if ln is None else ln for ln in lines]
    order = sorted(range(len(at)), key=at.__getitem__)
    out, snaps, k = {}, [None] * len(at), 0
    for line, name, value in [*assignments, (end, None, None)]:
        while k < len(order) and at[order[k]] <= line:
            snaps[order[k]] = dict(out)
            k += 1
        if name is None:
            continue
        if value is None:
            out.pop(name, None)
        else:
            out[name] = value
    return snaps


def constant_assignments(text: str) -> list:
    """[(line, name, value)] of the file's top-level constants (`top_level_constants`) in
    the order Python runs them; value None where the name stops being a constant (it is
    bound to a value of another kind)."""
    import warnings
    found = [(1, text.split("\n", 1)[0])]
    line_no, pos = 1, 0
    for m in _TOP_LINE.finditer(text):
        line_no += text.count("\n", pos, m.start() + 1)
        pos = m.start() + 1
        found.append((line_no, m.group(1)))
    out, events = {}, []
    for line_no, line in found:
        if not line or line[0] in " \t#@" or not _TOP_ASSIGN.match(line):
            continue
        try:
            with warnings.catch_warnings():     # e.g. an invalid escape in the user's string
                warnings.simplefilter("ignore")
                bound = pyconst.assignment(line, out)
        except (pyconst.ConstError, SyntaxError, ValueError, TypeError,
                MemoryError, RecursionError):
            continue
        for name, value in bound:
            if not isinstance(value, (int, float, str, tuple)) or isinstance(value, bool):
                value = None                    # a value of another kind hides an earlier one
            if value is None:
                out.pop(name, None)
            else:
                out[name] = value
            events.append((line_no, name, value))
    return events
