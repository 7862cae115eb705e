"""An `@I.ir_module` class split into parts: its decorators and `class` line, then one
part per method with the comments above it, each dedented to column 0 (syntax/chunks.py
makes them `Chunk`s of kind "class" and "method").  A class that holds anything else (a
docstring, an assignment, a decorator whose arguments span lines) is not split.  Memoised
by the class's text, so an unchanged class costs one look-up wherever it sits."""
from __future__ import annotations

import bisect
import functools
import itertools
import operator
import re

from .chunks import Chunk, _dedent, _def_end_at, _definition_end, _indent

_CODE_LINE = re.compile(r"\n[ \t]*[^ \t\r\n\f\v#]")
_CLASS_LINE = re.compile(r"^[ \t]*class\s+(\w+)\s*(?:\([^()#]*\))?\s*:\s*(?:#.*)?$")
_BARE_DECORATOR = re.compile(r"^[ \t]*@\s*[\w.]+\s*(?:\([^()#]*\))?\s*(?:#.*)?$")
_DEF_LINE = re.compile(r"^[ \t]*(?:async\s+)?def\s+(\w+)")
_RETURNS = re.compile(r"\)\s*->\s*([A-Za-z_][\w.]*)\s*$")


class _Lines:
    """A class's lines and the offset where each starts."""

    def __init__(self, text: str):
        self.text = text
        self.lines = text.split("\n")
        self.starts = [0, *map(operator.add, itertools.accumulate(map(len, self.lines)),
                               itertools.count(1))]

    def line_of(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset) - 1

    def region(self, first: int, last: int) -> str:
        """Lines first..last (0-based, inclusive) joined by newlines."""
        return self.text[self.starts[first]:self.starts[last + 1] - 1]


def _def_end(src: _Lines, head: int, base: int) -> int:
    """`_definition_end` of a class's own text (indented by spaces only)."""
    found = _def_end_at(src.text, src.starts[head], base)
    return head + found[0] if found is not None else _definition_end(src.lines, head, base)


def method_signatures(parts) -> tuple:
    """((name, the dotted name its return annotation spells or None, its signature's text),
    ...) of a class's method parts (`Chunk.parts[1:]`): what a call `Module.f(...)` returns is
    known before the body of f is read, as TVM declares every function of a module first,
    and a method's lowering and rule results are keyed by its siblings' signatures."""
    out = []
    for part in parts:
        m = re.search(r"^[ \t]*(?:async\s+)?def\s+(\w+)", part.text, re.M)
        if m is None:
            continue
        depth, end = 0, len(part.text)
        for k in range(m.end(), len(part.text)):      # the signature: up to its `:`
            ch = part.text[k]
            depth += ch in "([{"
            depth -= ch in ")]}"
            if ch == ":" and depth == 0:
                end = k
                break
        r = _RETURNS.search(part.text, m.end(), end)
        out.append((m.group(1), r.group(1) if r is not None else None,
                    " ".join(part.text[m.end():end].split())))
    return tuple(out)


@functools.lru_cache(maxsize=1024)
def placed_parts(region: str, head: int, indent_str: str, start: int, spelling: str,
                 name: str) -> tuple:
    """(parts, method names) of an @I.ir_module class whose text is `region`, its `class`
    line at `head` and its first line at file line `start` (0-based): its header, then
    one part per method; ((), ()) when the class holds anything else (a docstring, an
    assignment, a decorator whose arguments span lines), which is then read as one piece."""
    rel, names = _class_parts(region, head, indent_str)
    parts = tuple(Chunk(kind, first + start, last + start, width, text, spelling,
                        part_name or name) for kind, first, last, width, text, part_name in rel)
    return parts, names


@functools.lru_cache(maxsize=1024)
def _class_parts(region: str, head: int, indent_str: str) -> tuple:
    """`placed_parts` of one class's text, lines numbered from 1 at its first line."""
    src = _Lines(region)
    lines = src.lines
    end = len(lines) - 1
    if not _CLASS_LINE.match(lines[head]):
        return (), ()
    for k in range(head):
        s = lines[k].strip()
        if s and not s.startswith("#") and not _BARE_DECORATOR.match(lines[k]):
            return (), ()
    base = len(indent_str)
    parts = [("class", 1, head + 1, base, _dedent(src.region(0, head), indent_str), "")]
    names = []
    body = None
    p = head + 1
    while p <= end:
        m = _CODE_LINE.search(region, src.starts[p] - 1)
        q = src.line_of(m.end() - 1) if m is not None else end + 1
        if q > end:
            break
        w = _indent(lines[q])
        if body is None:
            body = w
        if w != body or w <= base:
            return (), ()
        d = q
        while d <= end and lines[d].lstrip().startswith("@"):
            if not _BARE_DECORATOR.match(lines[d]):
                return (), ()
            d += 1
            while d <= end and (not lines[d].strip() or lines[d].lstrip().startswith("#")):
                d += 1
        head_m = _DEF_LINE.match(lines[d]) if d <= end else None
        if head_m is None or _indent(lines[d]) != w:
            return (), ()
        e = _def_end(src, d, w)
        if e > end:
            return (), ()
        parts.append(("method", p + 1, e + 1, w, _dedent(src.region(p, e), " " * w),
                      head_m.group(1)))
        names.append(head_m.group(1))
        p = e + 1
    return tuple(parts), tuple(names)
