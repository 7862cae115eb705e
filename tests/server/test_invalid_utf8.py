"""A document that is not valid UTF-8, as it reaches the server over stdio: raw bytes in the
JSON body of a didOpen or didChange (the body is then not UTF-8), or lone surrogates escaped
in the JSON string (`\\udcff`).  Either way the text is read with replacement characters and
gets one `syntax` diagnostic at the first bad byte; no message pops up, every feature answers."""
from __future__ import annotations

import json

import pytest
from lsprotocol import types as T

from lsp_helpers import example, open_doc, vscode_client, wait_diagnostics

pytestmark = pytest.mark.asyncio(loop_scope="module")

client = vscode_client()

MATMUL = example("valid/matmul.py").read_text()


def send_raw(client, message: dict, replace: dict) -> None:
    """Frame `message` as JSON, then put raw bytes in place of each placeholder."""
    body = json.dumps(message).encode()
    for placeholder, raw in replace.items():
        assert placeholder.encode() in body
        body = body.replace(placeholder.encode(), raw)
    client.protocol.writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)


def syntax_at(diags) -> list:
    return [(d.code, d.range.start.line, d.range.start.character) for d in diags]


def no_popups(client) -> None:
    assert [m.message for m in client.messages] == []
    assert [m.message for m in client.log_messages if m.type == T.MessageType.Error] == []
    assert client.error is None


async def test_raw_bytes_in_did_open(client):
    uri = "file:///tmp/tirkit_latin1.py"
    text = MATMUL.replace('with T.block("C"):', 'with T.block("C"):  # caf@@')
    line = text.split("\n").index(next(ln for ln in text.split("\n") if "@@" in ln))
    col = text.split("\n")[line].index("@@")
    send_raw(client, {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
        "textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}}},
        {"@@": b"\xe9\xff"})                     # Latin-1 "é", then a byte UTF-8 never has
    diags = await wait_diagnostics(client, uri, lambda d: len(d) > 0)
    assert syntax_at(diags) == [("syntax", line, col)]
    assert "0xe9" in diags[0].message
    # the rest of the file is analysed as usual
    h = await client.text_document_hover_async(T.HoverParams(
        T.TextDocumentIdentifier(uri), T.Position(11, 22)))
    assert "FLOPs: 4,194,304" in h.contents.value
    no_popups(client)


async def test_raw_bytes_in_did_change_then_fixed(client):
    uri = "file:///tmp/tirkit_change_bytes.py"
    open_doc(client, uri, MATMUL)
    await wait_diagnostics(client, uri, lambda d: len(d) == 0)
    lines = MATMUL.split("\n")
    k = next(i for i, ln in enumerate(lines) if "vi, vj, vk" in ln)
    send_raw(client, {"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
        "textDocument": {"uri": uri, "version": 2},
        "contentChanges": [{"range": {"start": {"line": k, "character": 0},
                                      "end": {"line": k, "character": 0}},
                            "text": "#@@\n"}]}}, {"@@": b"\x80\x80\x80"})
    diags = await wait_diagnostics(client, uri, lambda d: len(d) > 0)
    assert syntax_at(diags) == [("syntax", k, 1)]
    # the document store holds the bad bytes where the client put them: an edit after them
    # lands in the right place, and removing them clears the diagnostic
    client.text_document_did_change(T.DidChangeTextDocumentParams(
        text_document=T.VersionedTextDocumentIdentifier(uri=uri, version=3),
        content_changes=[T.TextDocumentContentChangePartial(
            range=T.Range(T.Position(k, 0), T.Position(k + 1, 0)), text="")]))
    await wait_diagnostics(client, uri, lambda d: len(d) == 0)
    no_popups(client)


async def test_escaped_surrogates(client):
    """A client that decoded the file with `surrogateescape` sends `\\udcXX` escapes."""
    uri = "file:///tmp/tirkit_escaped.py"
    text = MATMUL.replace("A[vi, vk]", "A[vi, v\udcc3k]", 1)
    open_doc(client, uri, text)
    diags = await wait_diagnostics(client, uri, lambda d: len(d) > 0)
    line = next(i for i, ln in enumerate(text.split("\n")) if "\udcc3" in ln)
    assert syntax_at(diags) == [("syntax", line, text.split("\n")[line].index("\udcc3"))]
    assert "0xc3" in diags[0].message
    # requests on it all answer (the kernel does not parse: no symbols, no edits)
    d = T.TextDocumentIdentifier(uri)
    assert list(await client.text_document_document_symbol_async(
        T.DocumentSymbolParams(d)) or []) == []
    assert await client.text_document_hover_async(T.HoverParams(d, T.Position(line, 10))) is None
    assert not await client.text_document_formatting_async(T.DocumentFormattingParams(
        d, T.FormattingOptions(4, True)))
    no_popups(client)


async def test_unopened_file_with_bad_bytes_on_disk(client, tmp_path):
    """Requests on a file the client never opened, whose bytes on disk are not UTF-8 (the
    document store would read it from disk): every answer is empty, nothing pops up."""
    f = tmp_path / "latin1_on_disk.py"
    f.write_bytes(MATMUL.replace("# ", "# caf\xe9 ").encode("latin-1") + b"\xff\n")
    d = T.TextDocumentIdentifier(f.as_uri())
    assert await client.text_document_hover_async(T.HoverParams(d, T.Position(11, 22))) is None
    assert list(await client.text_document_document_symbol_async(
        T.DocumentSymbolParams(d)) or []) == []
    assert list(await client.text_document_code_lens_async(T.CodeLensParams(d)) or []) == []
    client.text_document_did_save(T.DidSaveTextDocumentParams(d))
    assert await client.text_document_hover_async(T.HoverParams(d, T.Position(11, 22))) is None
    no_popups(client)
