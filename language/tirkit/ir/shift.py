"""IR moved down or up the file: a copy whose every span (`span`, `header_span`,
`name_span`, spans inside annotations) sits `lines` lines further down.

A definition that moved in its file (lines added or removed above it) is the same program
at a new place; script/parse.py takes its cached lowering and moves it with `shift_lines`
instead of lowering it again.  The input is never changed (cached IR is shared between
versions of a document and read from several threads); the copy keeps the input's sharing
(a variable or buffer used in many places is one new object, used in the same places).
Columns never move: a definition whose columns changed has another text.
"""
from __future__ import annotations

import dataclasses
import functools
from operator import is_not

from ..diagnostics import Span

_ATOMS = frozenset({str, int, float, bool, complex, bytes, type(None)})
_new = object.__new__
_set = object.__setattr__


@functools.lru_cache(maxsize=1024)
def _fields(cls) -> tuple:
    """Every field name of an IR node's class (trivia included); () for anything else
    (left as it is)."""
    return tuple(f.name for f in dataclasses.fields(cls)) if dataclasses.is_dataclass(cls) \
        else ()


def shift_lines(node, lines: int):
    """A copy of `node` (an IR node, a tuple of them, or a `Span`) with every span `lines`
    lines further down; `node` itself when `lines` is 0."""
    if not lines:
        return node
    memo: dict = {}

    def go(x):
        t = type(x)
        if t in _ATOMS:
            return x
        if t is Span:
            return Span(x[0] + lines, x[1], x[2] + lines, x[3], x[4])
        if t is tuple:
            items = [go(y) for y in x]
            return tuple(items) if any(map(is_not, items, x)) else x
        if t is list:
            return [go(y) for y in x]
        names = _fields(t)
        if not names:
            return x                        # numbers, arrays, tables: nothing placed
        hit = memo.get(id(x))
        if hit is not None:
            return hit
        y = _new(t)
        memo[id(x)] = y                     # before the fields: a node may refer back
        for name in names:
            _set(y, name, go(getattr(x, name)))
        return y

    return go(node)


__all__ = ["shift_lines"]
