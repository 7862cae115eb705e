"""IR moved down or up the file: a copy whose every span (`span`, `header_span`,
`name_span`, spans inside annotations) sits `lines` lines further down.

A definition that moved in its file (lines added or removed above it) is the same program
at a new place; script/parse.py takes its cached lowering and moves it with `shift_lines`
instead of lowering it again.  The input is never changed (cached IR is shared between
versions of a document and read from several threads); the copy keeps the input's sharing
(a variable or buffer used in many places is one new object, used in the same places).
Columns never move: a definition whose columns changed has another text.

`moved_function` defers the copy of a function's program (its parameters, buffers, body,
attributes) to the first time one of them is read: a check after lines were added above
hundreds of functions reads none of them (their rule results are cached by definition), so
it costs what the edit touched, not what moved.  Its name and spans are set at once.  The
copy is made once, under a lock, whichever thread reads first; until then the function is
kept in a weak table of pending copies (it leaves the table when copied or collected).
"""
from __future__ import annotations

import dataclasses
import functools
import threading
import weakref
from operator import is_not

from ..diagnostics import Span
from .stmt import PrimFunc

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


# the fields of a PrimFunc that hold its program: copied on first use
LAZY_FIELDS = frozenset({"params", "buffer_map", "body", "attrs", "sparse_axes"})
_EAGER = tuple(name for name in _fields(PrimFunc) if name not in LAZY_FIELDS)
_BODY = PrimFunc.body.__get__             # the slot itself: raises when not set yet
_pending = weakref.WeakKeyDictionary()     # moved PrimFunc -> (function it copies, lines)
_pending_lock = threading.RLock()


def moved_function(f, lines: int):
    """`f` (a PrimFunc) `lines` lines further down; its program is copied on first use."""
    if not lines or type(f) is not PrimFunc:
        return shift_lines(f, lines)
    try:
        _BODY(f, PrimFunc)                  # set: f is no pending copy (no look-up needed)
    except AttributeError:
        with _pending_lock:
            source = _pending.get(f)
        if source is not None:              # moved again before it was read: one copy
            f, lines = source[0], source[1] + lines
            if not lines:
                return f
    g = _new(PrimFunc)
    for name in _EAGER:
        v = getattr(f, name)
        t = type(v)
        if t is Span:
            v = Span(v[0] + lines, v[1], v[2] + lines, v[3], v[4])
        elif t not in _ATOMS and not (t is tuple and (not v or all(type(y) in _ATOMS
                                                                   for y in v))):
            v = shift_lines(v, lines)
        _set(g, name, v)
    with _pending_lock:
        _pending[g] = (f, lines)
    return g


def materialize(g) -> bool:
    """Fill the program fields of a moved function now (no-op for any other); True when
    they are set (or were never deferred)."""
    with _pending_lock:
        source = _pending.get(g)
        if source is None:
            return True
        f, lines = source
        copied = shift_lines(tuple(getattr(f, name) for name in sorted(LAZY_FIELDS)), lines)
        for name, value in zip(sorted(LAZY_FIELDS), copied):
            _set(g, name, value)
        del _pending[g]
        return True


__all__ = ["shift_lines", "moved_function", "materialize", "LAZY_FIELDS"]
