"""Recovery never reports its own placeholders, and a bad byte is reported once."""
import tirkit

SRC = (b'from tvm.script import tir as T\n\n@T.prim_func\n'
       b'def f(A: T.Buffer((4,), "float32")):\n'
       b'    for i in range(4)\n'
       b'        A[i] = \xff\xfe A[i] +\n'
       b'  x = (\n')


def test_each_error_once_on_its_own_line():
    diags = tirkit.parse(SRC, "bad.py").diagnostics
    got = [(d.code, d.line, d.span.column) for d in diags]
    assert got == [("syntax", 5, 21), ("syntax", 6, 16), ("syntax", 7, 1)]
    messages = [d.message for d in diags]
    assert messages[0] == "expected ':'"
    assert "UTF-8" in messages[1]
    assert "unindent" in messages[2]
    assert not any("pass" in m or "if 0" in m for m in messages)


def test_bad_dedent_does_not_hide_the_next_kernel():
    text = ('from tvm.script import tir as T\n\n\n@T.prim_func\n'
            'def f(A: T.Buffer((4,), "float32")):\n'
            '    for i in range(4):\n'
            '        A[i] = A[i]\n'
            '  A[0] = A[1]\n\n\n'
            '@T.prim_func\n'
            'def g(A: T.Buffer((4,), "float32")):\n'
            '    A[0] = Z[0]\n')
    got = [(d.code, d.line) for d in tirkit.parse(text).diagnostics]
    assert got == [("syntax", 8), ("name/undefined", 13)]


def test_lone_surrogates_read_as_the_bytes_they_stand_for():
    """Text decoded with `surrogateescape` (or JSON `\\udcXX` escapes) reports like the bytes:
    the same diagnostics, U+FFFD in the text, columns unchanged."""
    as_bytes = tirkit.parse(SRC, "bad.py")
    as_text = tirkit.parse(SRC.decode("utf-8", "surrogateescape"), "bad.py")
    assert [(d.code, d.line, d.span.column, d.message) for d in as_text.diagnostics] == \
        [(d.code, d.line, d.span.column, d.message) for d in as_bytes.diagnostics]
    assert "\ufffd\ufffd A[i]" in as_text.text
    lone = tirkit.parse("x = 1\ny = '\ud800'\n")
    assert [(d.code, d.line, d.span.column) for d in lone.diagnostics] == [("syntax", 2, 6)]
    assert "U+D800" in lone.diagnostics[0].message and "\ud800" not in lone.text
