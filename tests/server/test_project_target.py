"""The roofline target that hover and the code lens show follows the document's configuration:
the project file's `target` when the editor sets none, the editor's `tirkit.target` over it,
and the project file's again when the editor's setting is unset (null)."""
from __future__ import annotations

import pytest
from lsprotocol import types as T

from lsp_helpers import example, open_doc, vscode_client, wait_diagnostics
from test_project_suppress import write

pytestmark = pytest.mark.asyncio(loop_scope="module")

client = vscode_client({"tirkit": {"diagnostics": {"mode": "onChange"}}})


async def lens_titles(client, uri):
    lenses = await client.text_document_code_lens_async(T.CodeLensParams(
        text_document=T.TextDocumentIdentifier(uri=uri)))
    return [lens.command.title for lens in lenses]


def set_target(client, target):
    for method in (T.WORKSPACE_CODE_LENS_REFRESH, T.WORKSPACE_INLAY_HINT_REFRESH):
        if method not in client.protocol.fm.features:   # a settings change asks for these
            client.feature(method)(lambda params: None)
    client.workspace_did_change_configuration(T.DidChangeConfigurationParams(
        settings={"tirkit": {"target": target}}))


async def until(fn, pred, tries=50):
    import asyncio
    for _ in range(tries):
        got = await fn()
        if pred(got):
            return got
        await asyncio.sleep(0.1)
    return got


async def test_lens_and_hover_follow_project_then_editor_then_project(client, tmp_path):
    write(tmp_path / "tirkit.toml", 'target = "cuda-sm90"\n')
    text = example("valid/matmul.py").read_text()
    uri = (tmp_path / "k.py").as_uri()
    open_doc(client, uri, text)
    await wait_diagnostics(client, uri, lambda ds: True)
    titles = await lens_titles(client, uri)
    assert titles and all(t.endswith("on cuda-sm90") for t in titles), titles
    line = next(i for i, s in enumerate(text.split("\n")) if s.lstrip().startswith("def "))
    col = text.split("\n")[line].index("def ") + 4
    hover = await client.text_document_hover_async(T.HoverParams(
        text_document=T.TextDocumentIdentifier(uri=uri), position=T.Position(line, col)))
    assert hover is not None and "cuda-sm90" in hover.contents.value

    set_target(client, "llvm")                 # the editor's setting wins over the file
    titles = await until(lambda: lens_titles(client, uri),
                         lambda ts: ts and all(t.endswith("on llvm") for t in ts))
    assert titles and all(t.endswith("on llvm") for t in titles), titles

    set_target(client, None)                   # unset: the project file decides again
    titles = await until(lambda: lens_titles(client, uri),
                         lambda ts: ts and all(t.endswith("on cuda-sm90") for t in ts))
    assert titles and all(t.endswith("on cuda-sm90") for t in titles), titles
