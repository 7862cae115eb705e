"""Pull diagnostics (a Neovim 0.11 client profile), the on-save full set, the onChange
setting through workspace/configuration, and UTF-32 positions when the client asks."""
from __future__ import annotations

import asyncio

import pytest
import pytest_lsp
from lsprotocol import types as T
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

import tirkit
from tirkit.verify import run_rules
from lsp_helpers import (SERVER_COMMAND, example, open_doc, replace_all, server_env,
                         wait_diagnostics)

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_lsp.fixture(scope="module",
                    config=ClientServerConfig(server_command=SERVER_COMMAND,
                                              server_env=server_env()))
async def client(lsp_client: LanguageClient):
    caps = client_capabilities("neovim")
    caps.general = T.GeneralClientCapabilities(
        position_encodings=[T.PositionEncodingKind.Utf32, T.PositionEncodingKind.Utf16])
    lsp_client.set_configuration({"diagnostics": {"mode": "onSave"}, "target": "llvm"},
                                 section="tirkit")
    lsp_client.refreshed = []

    @lsp_client.feature(T.WORKSPACE_INLAY_HINT_REFRESH)
    def inlay_refresh(params):
        lsp_client.refreshed.append("inlayHint")

    @lsp_client.feature(T.WORKSPACE_CODE_LENS_REFRESH)
    def lens_refresh(params):
        lsp_client.refreshed.append("codeLens")

    result = await lsp_client.initialize_session(T.InitializeParams(capabilities=caps))
    assert result.capabilities.position_encoding == T.PositionEncodingKind.Utf32
    assert result.capabilities.diagnostic_provider is not None
    yield
    await lsp_client.shutdown_session()


async def pull(client, uri, previous=None):
    return await client.text_document_diagnostic_async(T.DocumentDiagnosticParams(
        text_document=T.TextDocumentIdentifier(uri=uri), previous_result_id=previous))


def core_codes(text, path, full):
    res = tirkit.parse(text, path)
    diags = run_rules(res) if full else run_rules(res, fast_only=True)
    return sorted((d.span.line - 1, d.code) for d in diags)


async def test_pull_reports_exact_codes(client):
    p = example("invalid/undefined_name.py")
    open_doc(client, p.as_uri(), p.read_text())
    # the server reads the client's settings (target llvm) just after initialisation; a
    # report made before that carries the default target in its id
    for _ in range(400):
        rep = await pull(client, p.as_uri())
        if rep.result_id.endswith(":llvm"):
            break
        await asyncio.sleep(0.05)
    assert rep.kind == "full"
    assert rep.result_id.endswith(":llvm")
    assert [(d.code, d.range.start.line, d.range.start.character) for d in rep.items] == \
        [("name/undefined", 8, 28)]
    # a second pull of the same version is answered "unchanged"
    again = await pull(client, p.as_uri(), rep.result_id)
    assert again.kind == "unchanged"
    # a client that pulls is not also pushed the same diagnostics
    assert p.as_uri() not in client.diagnostics


async def test_fast_set_while_typing_full_set_after_save(client):
    for p in sorted(example("invalid").glob("*.py")):
        text = p.read_text()
        open_doc(client, p.as_uri(), text)
        rep = await pull(client, p.as_uri())
        assert sorted((d.range.start.line, d.code) for d in rep.items) == \
            core_codes(text, str(p), False), p.name
        pushes = client.diagnostics.pop(p.as_uri(), None)
        assert pushes is None, p.name
        client.text_document_did_save(T.DidSaveTextDocumentParams(
            text_document=T.TextDocumentIdentifier(uri=p.as_uri())))
        # this client cannot be asked to pull again: what the save adds is pushed, and the
        # pull keeps its on-change set, so the two together are the full set, none twice
        pushed = await wait_diagnostics(client, p.as_uri(), timeout=30)
        rep = await pull(client, p.as_uri())
        assert sorted((d.range.start.line, d.code) for d in rep.items) == \
            core_codes(text, str(p), False), p.name
        assert sorted((d.range.start.line, d.code) for d in [*rep.items, *pushed]) == \
            core_codes(text, str(p), True), p.name
        # the next change withdraws the pushed set
        replace_all(client, p.as_uri(), text + "\n", 2, text)
        if pushed:
            await wait_diagnostics(client, p.as_uri(), lambda d: len(d) == 0, timeout=30)
        client.text_document_did_close(T.DidCloseTextDocumentParams(
            T.TextDocumentIdentifier(p.as_uri())))


async def test_utf32_columns(client):
    text = ('from tvm.script import tir as T\n\n\n@T.prim_func\n'
            'def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):\n'
            '    for i in range(4):\n        with T.block("B"):\n'
            '            vi = T.axis.spatial(4, i)\n'
            '            B[vi] = T.call_extern("float32", "g\U0001F600", Z[vi])\n')
    uri = "file:///tmp/tirkit_utf32.py"
    open_doc(client, uri, text)
    rep = await pull(client, uri)
    cp = text.split("\n")[8].index("Z[")
    assert [(d.code, d.range.start.character) for d in rep.items] == [("name/undefined", cp)]


async def test_on_change_setting(client):
    """With mode onChange the full set is reported before any save."""
    client.set_configuration({"diagnostics": {"mode": "onChange"}}, section="tirkit")
    client.workspace_did_change_configuration(T.DidChangeConfigurationParams(settings=None))
    p = example("invalid/domain_mismatch.py")
    uri = "file:///tmp/tirkit_onchange_domain.py"
    text = p.read_text()
    open_doc(client, uri, text)
    replace_all(client, uri, text + "\n", 2, text)
    # the server fetches the new setting with workspace/configuration: poll until applied
    for _ in range(400):          # up to 20 s on a loaded machine; returns as soon as applied
        rep = await pull(client, uri)
        if rep.result_id.split(":")[1] == "full":
            break
        await asyncio.sleep(0.05)
    assert sorted((d.range.start.line, d.code) for d in rep.items) == \
        core_codes(text + "\n", str(p), True)
    assert rep.result_id.split(":")[1] == "full"
    client.set_configuration({"diagnostics": {"mode": "onSave"}}, section="tirkit")
    client.workspace_did_change_configuration(T.DidChangeConfigurationParams(settings=None))


async def test_target_setting_changes_the_roofline(client):
    p = example("valid/matmul.py")
    open_doc(client, p.as_uri(), p.read_text())

    async def hover_text():
        h = await client.text_document_hover_async(T.HoverParams(
            T.TextDocumentIdentifier(p.as_uri()), T.Position(11, 22)))
        return h.contents.value

    assert "roofline time on llvm (CPU znver4, 1 core)" in await hover_text()
    client.set_configuration("cuda-sm90", section="tirkit.target")
    client.workspace_did_change_configuration(T.DidChangeConfigurationParams(settings=None))
    for _ in range(400):          # up to 20 s on a loaded machine; returns as soon as applied
        text = await hover_text()
        if "cuda-sm90" in text:
            break
        await asyncio.sleep(0.05)
    assert "roofline time on cuda-sm90 (NVIDIA H100 SXM)" in text
    # the client was asked to fetch lenses and hints again (they show the target)
    assert "inlayHint" in client.refreshed         # (this profile has no codeLens refresh)
    client.set_configuration("llvm", section="tirkit.target")
    client.workspace_did_change_configuration(T.DidChangeConfigurationParams(settings=None))
