"""Diagnostics: what every part of the core reports (no LSP types here).

Lines and columns are 1-based; ``end_column`` is exclusive.  Columns count Unicode code
points; the server converts to the client's position encoding at its edge.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple, Optional


class Span(NamedTuple):
    line: int
    column: int
    end_line: int
    end_column: int
    file: Optional[str] = None

    def contains(self, line: int, column: int) -> bool:
        if (line, column) < (self.line, self.column):
            return False
        return (line, column) <= (self.end_line, self.end_column)

    def merge(self, other: "Span") -> "Span":
        a = min((self.line, self.column), (other.line, other.column))
        b = max((self.end_line, self.end_column), (other.end_line, other.end_column))
        return Span(a[0], a[1], b[0], b[1], self.file)

    def shifted(self, lines: int) -> "Span":
        """The same span `lines` lines further down (up when negative)."""
        return Span(self.line + lines, self.column, self.end_line + lines, self.end_column,
                    self.file)


SEVERITIES = ("error", "warning", "information", "hint")

# codes whose range is text that does nothing: an allocation whose values nothing uses, a
# suppression that silences nothing (editors show it faded, as unnecessary code)
UNNECESSARY = frozenset({"dataflow/unused-buffer", "suppression/unused"})


@dataclass
class Diagnostic:
    code: str
    severity: str
    message: str
    span: Span
    related: list = field(default_factory=list)   # [(Span, message)]

    @property
    def line(self) -> int:
        return self.span.line

    def to_json(self, file: Optional[str] = None) -> dict:
        return {
            "file": file or self.span.file,
            "line": self.span.line,
            "column": self.span.column,
            "end_line": self.span.end_line,
            "end_column": self.span.end_column,
            "severity": self.severity,
            "code": self.code,
            "message": self.message,
            "related": [
                {"line": s.line, "column": s.column, "end_line": s.end_line,
                 "end_column": s.end_column, "message": m}
                for s, m in self.related
            ],
        }

    def sort_key(self):
        return (self.span.line, self.span.column, self.code)

    def shifted(self, lines: int) -> "Diagnostic":
        """A copy `lines` lines further down (up when negative), related places included."""
        return Diagnostic(self.code, self.severity, self.message,
                          self.span.shifted(lines) if self.span is not None else None,
                          [(sp.shifted(lines) if sp is not None else None, m)
                           for sp, m in self.related])


def error(code: str, message: str, span: Span, related=None) -> Diagnostic:
    return Diagnostic(code, "error", message, span, list(related or []))


def warning(code: str, message: str, span: Span, related=None) -> Diagnostic:
    return Diagnostic(code, "warning", message, span, list(related or []))


def render_text(path, text, d: Diagnostic) -> str:
    """`file:line:col: severity: message [code]` and a caret excerpt."""
    s = d.span
    out = [f"{path}:{s.line}:{s.column}: {d.severity}: {d.message} [{d.code}]"]
    lines = text.split("\n") if isinstance(text, str) else []
    if 0 < s.line <= len(lines):
        src = lines[s.line - 1].rstrip("\r")
        out.append(f"  {s.line:4d} | {src}")
        end = s.end_column if s.end_line == s.line else len(src) + 1
        width = max(1, end - s.column)
        out.append("       | " + " " * (s.column - 1) + "^" * width)
    for rs, msg in d.related:
        if rs is not None:
            out.append(f"  note: {rs.file or path}:{rs.line}:{rs.column}: {msg}")
    return "\n".join(out)


class TirkitError(Exception):
    """An error that carries diagnostics (raised by the embedded `tirkit.script` API)."""

    def __init__(self, diagnostics, text=None):
        self.diagnostics = list(diagnostics)
        first = self.diagnostics[0] if self.diagnostics else None
        msg = (f"{first.span.line}:{first.span.column}: {first.message} [{first.code}]"
               if first else "error")
        if len(self.diagnostics) > 1:
            msg += f" (and {len(self.diagnostics) - 1} more)"
        super().__init__(msg)
