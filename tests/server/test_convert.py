"""The server's edge: spans to LSP ranges in each position encoding, related information."""
from __future__ import annotations

from lsprotocol import types as T

from tirkit.diagnostics import Diagnostic, Span
from tirkit_lsp.convert import Converter

LINES = ['x = "\U0001F600é" + y', "z"]


def test_positions_in_each_encoding():
    col_y = LINES[0].index("y") + 1                     # 1-based code points
    assert Converter(LINES, "utf-32").position(1, col_y).character == col_y - 1
    assert Converter(LINES, "utf-16").position(1, col_y).character == col_y          # emoji: 2
    assert Converter(LINES, "utf-8").position(1, col_y).character == col_y - 1 + 3 + 1
    for enc in ("utf-8", "utf-16", "utf-32"):
        c = Converter(LINES, enc)
        p = c.position(1, col_y)
        assert c.line_col(p) == (1, col_y)


def test_positions_past_the_end_of_a_line_stay_at_its_end():
    for enc in ("utf-8", "utf-16", "utf-32"):
        c = Converter(LINES, enc)
        end = c.to_client_char(0, len(LINES[0]))
        assert c.line_col(T.Position(0, end)) == (1, len(LINES[0]) + 1)
        assert c.line_col(T.Position(0, end + 5)) == (1, len(LINES[0]) + 1)
        assert c.line_col(T.Position(1, 9)) == (2, 2)                 # "z": ASCII line


def test_related_information_becomes_locations():
    d = Diagnostic("well-formed/redefinition", "error", "'A' is defined twice",
                   Span(2, 1, 2, 2, "/tmp/k.py"),
                   [(Span(1, 1, 1, 2, "/tmp/k.py"), "first definition"),
                    (Span(3, 5, 3, 9, "/tmp/other.py"), "in another file")])
    out = Converter(LINES, "utf-16").diagnostic(d, "file:///tmp/k.py", "/tmp/k.py")
    assert out.code == "well-formed/redefinition" and out.severity == T.DiagnosticSeverity.Error
    rel = out.related_information
    assert [(r.location.uri, r.location.range.start.line, r.message) for r in rel] == [
        ("file:///tmp/k.py", 0, "first definition"),
        ("file:///tmp/other.py", 2, "in another file")]
