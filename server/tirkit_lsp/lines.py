"""A document's lines by an index of where each starts, and content changes applied through it.

`Lines(text)` is the sequence `text.split("\\n")` without building it: one vectorised pass finds
the newlines (a few milliseconds for 5 MB), and a line is cut from the text when asked for.
A change at one place of a large document then costs that pass and one string copy, where
pygls's own incremental update walks every line in Python.  Lines end at "\\n" only, as the
core counts them (a "\\r" before it stays part of the line and is never counted as a column
a client can address).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np


class Lines(Sequence):
    """`text.split("\\n")` as a lazy sequence (indexing, slicing, `len`, iteration)."""

    __slots__ = ("text", "_ends")

    def __init__(self, text: str, ends=None):
        self.text = text
        if ends is None:
            ends = np.append(_newlines(text), len(text))
        # the offset of every newline, then the end of the text: line k ends at _ends[k]
        self._ends = ends

    def replaced(self, a: int, b: int, new: str) -> "Lines":
        """The lines of the text with [a, b) replaced by `new`, the index updated from this
        one (the newlines before a kept, those after b moved): no pass over the text."""
        ends = self._ends
        i, j = np.searchsorted(ends[:-1], a), np.searchsorted(ends[:-1], b)
        moved = ends[j:] + (len(new) - (b - a))
        return Lines(self.text[:a] + new + self.text[b:],
                     np.concatenate([ends[:i], _newlines(new) + a, moved]))

    def __len__(self) -> int:
        return len(self._ends)

    def start(self, k: int) -> int:
        """Offset of the first character of line k (0-based)."""
        return 0 if k == 0 else int(self._ends[k - 1]) + 1

    def end(self, k: int) -> int:
        """Offset just past line k's last character (its newline excluded)."""
        return int(self._ends[k])

    def __getitem__(self, k):
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(len(self)))]
        n = len(self._ends)
        if k < 0:
            k += n
        if not 0 <= k < n:
            raise IndexError("line index out of range")
        return self.text[self.start(k):self.end(k)]

    def __iter__(self):
        return iter(self.text.split("\n"))

    def offset(self, line0: int, char: int) -> int:
        """Offset of (0-based line, code-point column), clamped to the line (a trailing
        "\\r" excluded) and to the document: a line past the end is the end of the text."""
        if line0 >= len(self._ends):
            return len(self.text)
        line0 = max(line0, 0)
        start, end = self.start(line0), self.end(line0)
        if end > start and self.text[end - 1] == "\r":
            end -= 1
        return start + min(max(char, 0), end - start)


def _newlines(text: str):
    """Offsets of the newlines of `text` (code points), by one vectorised pass."""
    if text.isascii():
        codes = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
    else:
        codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    return np.flatnonzero(codes == 10)


def apply_change(lines: Lines, start: tuple, end: tuple, new: str) -> Lines:
    """The lines of the text with the code points between start and end, each a (0-based
    line, code-point column) pair, replaced by `new`; a range given backwards is read
    forwards."""
    a, b = lines.offset(*start), lines.offset(*end)
    if b < a:
        a, b = b, a
    return lines.replaced(a, b, new)
