"""Pushed diagnostics over stdio: exact codes and ranges on the shared examples, debounced
changes, files without kernels, UTF-16 columns."""
from __future__ import annotations

import pytest
from lsprotocol import types as T

import tirkit
from tirkit.verify import run_rules
from lsp_helpers import (codes, example, expected_marks, open_doc, replace_all, vscode_client,
                         wait_diagnostics)

pytestmark = pytest.mark.asyncio(loop_scope="module")


client = vscode_client()


def _rng(d):
    r = d.range
    return (r.start.line, r.start.character, r.end.line, r.end.character)


async def test_undefined_name_exact_range(client):
    p = example("invalid/undefined_name.py")
    open_doc(client, p.as_uri(), p.read_text())
    diags = await wait_diagnostics(client, p.as_uri(), lambda d: len(d) > 0)
    assert [(d.code, _rng(d)) for d in diags] == [("name/undefined", (8, 28, 8, 29))]
    assert diags[0].severity == T.DiagnosticSeverity.Error
    assert diags[0].source == "tirkit"
    assert (8, "name/undefined") in expected_marks(p.read_text())


async def test_syntax_error_and_recovery(client):
    p = example("invalid/syntax_recovery.py")
    open_doc(client, p.as_uri(), p.read_text())
    diags = await wait_diagnostics(client, p.as_uri(), lambda d: len(d) > 0)
    syntax = [d for d in diags if d.code == "syntax"]
    assert [_rng(d) for d in syntax] == [(8, 26, 8, 27)]
    # every code the server reports on this file is one the file expects, on its line
    marks = expected_marks(p.read_text())
    assert set(codes(diags)) <= set(marks)


async def test_every_invalid_example_matches_the_core(client):
    """The pushed set is the core's fast rule set, code for code and range for range."""
    for p in sorted(example("invalid").glob("*.py")):
        text = p.read_text()
        open_doc(client, p.as_uri(), text)
        diags = await wait_diagnostics(client, p.as_uri())
        core = run_rules(tirkit.parse(text, str(p)), fast_only=True)
        assert sorted((d.code,) + _rng(d) for d in diags) == sorted(
            (d.code, d.span.line - 1, d.span.column - 1, d.span.end_line - 1,
             d.span.end_column - 1) for d in core), p.name


async def test_valid_examples_are_clean(client):
    for p in sorted(example("valid").glob("*.py")):
        open_doc(client, p.as_uri(), p.read_text())
        diags = await wait_diagnostics(client, p.as_uri())
        assert [d for d in diags if d.severity == T.DiagnosticSeverity.Error] == [], p.name


async def test_no_kernels_no_diagnostics(client):
    uri = "file:///tmp/tirkit_plain_python.py"
    open_doc(client, uri, "import os\n\ndef f(x:\n    return Z\n")
    diags = await wait_diagnostics(client, uri)
    assert list(diags) == []


async def test_change_introduces_and_fixes_an_error(client):
    p = example("valid/matmul.py")
    uri = "file:///tmp/tirkit_edit_matmul.py"
    good = p.read_text()
    open_doc(client, uri, good)
    assert list(await wait_diagnostics(client, uri)) == []
    bad = good.replace("A[vi, vk] * B[vk, vj]", "A[vi, vk] * Q[vk, vj]")
    replace_all(client, uri, bad, 2, good)
    diags = await wait_diagnostics(client, uri, lambda d: len(d) > 0)
    assert [(d.code, d.range.start.line) for d in diags] == [("name/undefined", 17)]
    # an incremental edit of one character puts B back
    line = bad.split("\n")[17]
    col = line.index("Q[")
    client.text_document_did_change(T.DidChangeTextDocumentParams(
        text_document=T.VersionedTextDocumentIdentifier(uri=uri, version=3),
        content_changes=[T.TextDocumentContentChangePartial(
            range=T.Range(T.Position(17, col), T.Position(17, col + 1)), text="B")]))
    diags = await wait_diagnostics(client, uri, lambda d: len(d) == 0)
    assert list(diags) == []


async def test_burst_of_changes_publishes_the_last_version(client):
    """Debounced: a burst of edits ends with diagnostics of the final text only."""
    good = example("valid/matmul.py").read_text()
    uri = "file:///tmp/tirkit_burst.py"
    open_doc(client, uri, good)
    await wait_diagnostics(client, uri)
    text = good
    for v in range(2, 12):
        new = good.replace("* B[vk, vj]", f"* B{v}[vk, vj]")
        replace_all(client, uri, new, v, text)
        text = new
    diags = await wait_diagnostics(
        client, uri, lambda d: len(d) == 1 and "B11" in d[0].message)
    assert diags[0].code == "name/undefined"


_EMOJI_KERNEL = '''from tvm.script import tir as T


@T.prim_func
def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            B[vi] = T.call_extern("float32", "g\U0001F600", Z[vi])
'''


async def test_utf16_columns(client):
    uri = "file:///tmp/tirkit_emoji.py"
    open_doc(client, uri, _EMOJI_KERNEL)
    diags = await wait_diagnostics(client, uri, lambda d: len(d) > 0)
    line = _EMOJI_KERNEL.split("\n")[8]
    cp = line.index("Z[")
    assert [d.code for d in diags] == ["name/undefined"]
    # the emoji is one code point but two UTF-16 code units
    assert diags[0].range.start.character == cp + 1
    assert diags[0].range.end.character == cp + 2
