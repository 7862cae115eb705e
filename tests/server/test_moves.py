"""Lines added or removed above the functions of a module, over stdio: diagnostics, hover,
go-to-definition and inlay hints follow the functions to their new lines."""
from __future__ import annotations

import pytest
from lsprotocol import types as T

from lsp_helpers import open_doc, vscode_client, wait_diagnostics

pytestmark = pytest.mark.asyncio(loop_scope="module")

client = vscode_client()

HEADER = "from tvm.script import ir as I\nfrom tvm.script import tir as T\n\n\n"


def method(i: int, offset: int = 0) -> str:
    return f'''    @T.prim_func
    def k{i}(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        for j in range(16):
            with T.block("b"):
                vj = T.axis.spatial(16, j)
                B[vj] = A[vj + {offset}] * T.float32(2)
'''


TEXT = HEADER + "@I.ir_module\nclass Module:\n" + "\n".join(
    method(i, 1 if i == 3 else 0) for i in range(5))
LINES = TEXT.split("\n")
BAD = next(i for i, ln in enumerate(LINES) if "A[vj + 1]" in ln)          # 0-based
K3 = next(i for i, ln in enumerate(LINES) if "def k3(" in ln)


def doc(uri):
    return T.TextDocumentIdentifier(uri=uri)


def insert_at_top(client, uri, text, version):
    at = T.Range(T.Position(0, 0), T.Position(0, 0))
    client.text_document_did_change(T.DidChangeTextDocumentParams(
        text_document=T.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[T.TextDocumentContentChangePartial(range=at, text=text)]))


def remove_top_lines(client, uri, n, version):
    at = T.Range(T.Position(0, 0), T.Position(n, 0))
    client.text_document_did_change(T.DidChangeTextDocumentParams(
        text_document=T.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[T.TextDocumentContentChangePartial(range=at, text="")]))


def bounds_lines(diags):
    return sorted(d.range.start.line for d in diags if d.code == "bounds/out-of-bounds")


async def where(client, uri, shift):
    """Hover and definition on the `A` of `A[vj + 1]` in k3, `shift` lines down."""
    line = BAD + shift
    col = LINES[BAD].index("A[vj + 1]")
    h = await client.text_document_hover_async(T.HoverParams(doc(uri), T.Position(line, col)))
    d = await client.text_document_definition_async(T.DefinitionParams(
        doc(uri), T.Position(line, col)))
    hints = await client.text_document_inlay_hint_async(T.InlayHintParams(
        doc(uri), T.Range(T.Position(K3 + shift, 0), T.Position(K3 + shift + 6, 0))))
    return h.contents.value, [(r.range.start.line, r.range.start.character) for r in d], \
        sorted({h.position.line - shift for h in hints})


async def test_lines_added_and_removed_above_a_module(client):
    uri = "file:///tmp/tirkit_moves.py"
    open_doc(client, uri, TEXT)
    diags = await wait_diagnostics(client, uri, lambda d: bool(bounds_lines(d)))
    assert bounds_lines(diags) == [BAD]
    hover0, definition0, hints0 = await where(client, uri, 0)
    assert "**buffer** `A` (parameter)" in hover0
    assert definition0 == [(K3, LINES[K3].index("A: T.Buffer"))]
    assert hints0, "inlay hints in k3"

    insert_at_top(client, uri, "# one\n# two\n\n", 2)
    diags = await wait_diagnostics(client, uri, lambda d: bounds_lines(d) == [BAD + 3])
    assert [d.code for d in diags] == ["bounds/out-of-bounds"]
    hover3, definition3, hints3 = await where(client, uri, 3)
    assert hover3 == hover0
    assert definition3 == [(K3 + 3, LINES[K3].index("A: T.Buffer"))]
    assert hints3 == hints0

    remove_top_lines(client, uri, 2, 3)             # one line above the module is left
    diags = await wait_diagnostics(client, uri, lambda d: bounds_lines(d) == [BAD + 1])
    hover1, definition1, hints1 = await where(client, uri, 1)
    assert hover1 == hover0
    assert definition1 == [(K3 + 1, LINES[K3].index("A: T.Buffer"))]
    assert hints1 == hints0
