"""The fuzz replay of test_robustness.py through a client that pulls diagnostics and cannot
be asked to refresh (Neovim 0.11's capabilities): pulls between the edits, on-save pushes
after each save; every request is answered and the server is alive and right at the end."""
from __future__ import annotations

import pytest
import pytest_lsp
from lsprotocol import types as T
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from lsp_helpers import SERVER_COMMAND, example, server_env, wait_diagnostics
from mutations import edit_between
from test_robustness import replay, replay_states

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_lsp.fixture(scope="module",
                    config=ClientServerConfig(server_command=SERVER_COMMAND,
                                              server_env=server_env()))
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(T.InitializeParams(
        capabilities=client_capabilities("neovim")))
    yield
    await lsp_client.shutdown_session()


async def test_replay_through_a_pull_client(client):
    seeds, states = replay_states()
    uri = "file:///tmp/tirkit_fuzz_pull.py"
    answered, text = await replay(client, uri, seeds[0], states, pull=True)
    assert answered > 700
    # alive and right: the last version pulls its on-change set; a save pushes the rest
    final = example("invalid/uncovered_read.py").read_text()
    client.text_document_did_change(T.DidChangeTextDocumentParams(
        text_document=T.VersionedTextDocumentIdentifier(uri=uri, version=10_000),
        content_changes=[edit_between(text, final)]))
    rep = await client.text_document_diagnostic_async(
        T.DocumentDiagnosticParams(T.TextDocumentIdentifier(uri)))
    assert list(rep.items) == []
    client.text_document_did_save(T.DidSaveTextDocumentParams(T.TextDocumentIdentifier(uri)))
    pushed = await wait_diagnostics(client, uri, lambda d: len(d) > 0, timeout=30)
    assert [(d.code, d.range.start.line) for d in pushed] == [("dataflow/uncovered-read", 13)]
    assert client.error is None
    errors = [m.message for m in client.log_messages if m.type == T.MessageType.Error]
    assert errors == []
