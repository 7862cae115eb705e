"""The server's edge: core spans (1-based lines, code-point columns) <-> LSP positions
(0-based, in the negotiated encoding: UTF-16 code units unless the client chose another)."""
from __future__ import annotations

from lsprotocol import types as T
from pygls.workspace import PositionCodec

from tirkit.diagnostics import UNNECESSARY

SEVERITY = {
    "error": T.DiagnosticSeverity.Error,
    "warning": T.DiagnosticSeverity.Warning,
    "information": T.DiagnosticSeverity.Information,
    "hint": T.DiagnosticSeverity.Hint,
}


class Converter:
    """Positions of one document's text; the code units of each encoding are counted by
    pygls's PositionCodec."""

    def __init__(self, lines, encoding="utf-16"):
        self.lines = lines
        self.codec = PositionCodec(encoding or T.PositionEncodingKind.Utf16)

    def _line(self, i):
        return self.lines[i] if 0 <= i < len(self.lines) else ""

    def to_client_char(self, line0: int, cp: int) -> int:
        text = self._line(line0)
        return cp if text.isascii() else self.codec.client_num_units(text[:cp])

    def from_client_char(self, line0: int, units: int) -> int:
        text = self._line(line0)
        if text.isascii() or units >= self.codec.client_num_units(text):
            return min(units, len(text))      # (the codec puts a position past the end
        pos = T.Position(0, units)            # on the last character, not after it)
        return self.codec.position_from_client_units([text], pos).character

    # -- spans and positions
    def position(self, line1: int, col1: int) -> T.Position:
        line0 = max(line1 - 1, 0)
        return T.Position(line0, self.to_client_char(line0, max(col1 - 1, 0)))

    def range(self, span) -> T.Range:
        if span is None:
            return T.Range(T.Position(0, 0), T.Position(0, 0))
        return T.Range(self.position(span.line, span.column),
                       self.position(span.end_line, span.end_column))

    def line_col(self, pos: T.Position) -> tuple:
        """An LSP position as the core's (line, column), both 1-based, columns in code points."""
        return pos.line + 1, self.from_client_char(pos.line, pos.character) + 1

    def diagnostic(self, d, uri: str, path=None) -> T.Diagnostic:
        related = None
        if d.related:
            related = [T.DiagnosticRelatedInformation(
                location=T.Location(uri=_uri_of(s, uri, path), range=self.range(s)), message=m)
                for s, m in d.related if s is not None]
        return T.Diagnostic(range=self.range(d.span), message=d.message,
                            severity=SEVERITY.get(d.severity, T.DiagnosticSeverity.Error),
                            code=d.code, source="tirkit", related_information=related or None,
                            tags=[T.DiagnosticTag.Unnecessary] if d.code in UNNECESSARY
                            else None)


def _uri_of(span, uri, path):
    """The document's URI, unless the span names another file."""
    f = getattr(span, "file", None)
    if not f or f == path:
        return uri
    from pygls.uris import from_fs_path
    return from_fs_path(f) or uri


def full_range(lines) -> T.Range:
    return T.Range(T.Position(0, 0), T.Position(len(lines), 0))
