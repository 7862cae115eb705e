"""Content changes applied through the line index give the text pygls's own line-by-line
update gives (random edits in ASCII, non-BMP and CRLF texts, in UTF-16 and UTF-32 units), and
`Lines` is `text.split("\\n")`; end to end, a large document edited over stdio ends with the
text the client has (its diagnostics follow the edits)."""
import asyncio
import random

import pytest
from lsprotocol import types as T
from pygls.workspace import PositionCodec, TextDocument

from lsp_helpers import open_doc, vscode_client  # noqa: F401
from tirkit_lsp.lines import Lines
from tirkit_lsp.protocol import changed_lines, changed_text

TEXTS = [
    "",
    "a",
    "\n",
    "def f():\n    return 1\n",
    "x = '😀é'\ny = 'naïve'\n\n# 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 comment\nz = 3",
    "line one\r\nline two\r\n\r\nlast",
]


def _random_change(rng, text, encoding):
    """An incremental change as a client sends it (positions in `encoding` units, inside the
    document, the range forwards)."""
    codec = PositionCodec(encoding)
    lines = text.split("\n")
    n = max(1, len(text.splitlines()))

    def pos():
        line = rng.randrange(n)
        body = lines[line].rstrip("\r")
        cp = rng.randrange(len(body) + 1)
        return T.Position(line, codec.client_num_units(body[:cp]))

    a, b = pos(), pos()
    if (b.line, b.character) < (a.line, a.character):
        a, b = b, a
    new = rng.choice(["", "Q", "\n", "é😀", "two\nlines\n", "\r\n"])
    return T.TextDocumentContentChangePartial(range=T.Range(a, b), text=new)


def _partial(l0, c0, l1, c1, text):
    return T.TextDocumentContentChangePartial(
        range=T.Range(T.Position(l0, c0), T.Position(l1, c1)), text=text)


def test_positions_outside_the_text_are_clamped():
    text = "ab\r\ncd\n"
    # past a line's end: its end (before "\r\n"); past the last line: the end of the text
    assert changed_text(text, [_partial(0, 9, 1, 1, "X")], "utf-16") == "abXd\n"
    assert changed_text(text, [_partial(1, 2, 7, 0, "!")], "utf-16") == "ab\r\ncd!"
    assert changed_text(text, [_partial(5, 0, 5, 0, "end")], "utf-16") == text + "end"
    # a surrogate pair is two UTF-16 units and one UTF-32 unit
    assert changed_text("😀x\n", [_partial(0, 2, 0, 3, "y")], "utf-16") == "😀y\n"
    assert changed_text("😀x\n", [_partial(0, 1, 0, 2, "y")], "utf-32") == "😀y\n"


@pytest.mark.parametrize("encoding", ["utf-16", "utf-32"])
def test_changes_agree_with_pygls(encoding):
    rng = random.Random(13)
    n = 0
    for start in TEXTS:
        ours = theirs = start
        index = Lines(start)            # updated change by change, never rebuilt
        for _ in range(60):
            change = _random_change(rng, theirs, encoding)
            mine = changed_text(ours, [change], encoding)     # (pygls may clamp the range
            index = changed_lines(index, [change], encoding)  # of a change in place)
            doc = TextDocument("file:///t.py", theirs, position_codec=PositionCodec(encoding))
            doc.apply_change(change)
            theirs, ours = doc.source, mine
            assert ours == theirs, (start, change)
            assert index.text == ours
            assert len(index) == len(ours.split("\n"))
            assert index[:] == ours.split("\n")
            n += 1
    assert n > 200


def test_several_changes_in_one_notification_apply_in_order():
    text = "abc\ndef\n"
    changes = [T.TextDocumentContentChangePartial(range=T.Range(T.Position(0, 1),
                                                                 T.Position(1, 1)), text="X"),
               T.TextDocumentContentChangeWholeDocument(text="new\ntext"),
               T.TextDocumentContentChangePartial(range=T.Range(T.Position(1, 0),
                                                                 T.Position(1, 4)), text="t")]
    assert changed_text(text, changes, "utf-16") == "new\nt"


@pytest.mark.parametrize("text", TEXTS + ["\n\n", "é\nü\n😀"])
def test_lines_is_split(text):
    lines = Lines(text)
    parts = text.split("\n")
    assert len(lines) == len(parts)
    assert list(lines) == parts
    assert [lines[i] for i in range(len(parts))] == parts
    assert lines[-1] == parts[-1] and lines[1:] == parts[1:]
    with pytest.raises(IndexError):
        lines[len(parts)]


client = vscode_client({"tirkit": {"diagnostics": {"mode": "onChange"}}})


@pytest.mark.asyncio(loop_scope="module")
async def test_large_document_edited_over_stdio(client, tmp_path_factory):  # noqa: F811
    """Thirty edits to a 2,000-line file with non-ASCII comments: after each one the server's
    diagnostics are those of the text the client holds (a name broken and fixed)."""
    body = ['from tvm.script import tir as T', '', '']
    for k in range(120):
        body += ['@T.prim_func',
                 f'def k{k}(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):',
                 '    # é😀 copy',
                 '    for i in range(8):',
                 '        with T.block("B"):',
                 '            vi = T.axis.spatial(8, i)',
                 '            B[vi] = A[vi]',
                 '', '', '', '', '', '', '', '', '', '']
    text = "\n".join(body) + "\n"
    uri = (tmp_path_factory.mktemp("lines") / "big.py").as_uri()
    open_doc(client, uri, text)
    rng = random.Random(5)
    broken = set()
    lines = text.split("\n")
    a_lines = [i for i, ln in enumerate(lines) if ln.endswith("B[vi] = A[vi]")]
    for version in range(2, 32):
        i = rng.choice(a_lines)
        col = len(lines[i]) - len("A[vi]")
        fix = i in broken
        client.text_document_did_change(T.DidChangeTextDocumentParams(
            text_document=T.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[T.TextDocumentContentChangePartial(
                range=T.Range(T.Position(i, col), T.Position(i, col + 1)),
                text="A" if fix else "Z")]))
        (broken.discard if fix else broken.add)(i)
        lines[i] = lines[i][:col] + ("A" if fix else "Z") + lines[i][col + 1:]
    for _ in range(200):
        await asyncio.sleep(0.1)
        got = client.diagnostics.get(uri)
        if got is not None and {d.range.start.line for d in got} == broken:
            break
    got = client.diagnostics.get(uri)
    assert broken and {(d.range.start.line, d.code) for d in got} == \
        {(i, "name/undefined") for i in broken}
