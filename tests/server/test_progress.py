"""Work that takes over a second is reported with work-done progress (begin ... end)."""
from __future__ import annotations

import time

import pytest
import pytest_lsp
from lsprotocol import types as T
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from lsp_helpers import SERVER_COMMAND, many_kernels, open_doc, server_env

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.slow]


@pytest_lsp.fixture(scope="module",
                    config=ClientServerConfig(server_command=SERVER_COMMAND,
                                              server_env=server_env()))
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(T.InitializeParams(
        capabilities=client_capabilities("visual-studio-code")))
    yield
    await lsp_client.shutdown_session()


async def test_progress_for_slow_analysis(client):
    text = many_kernels(400)                # about 6,000 lines
    uri = "file:///tmp/tirkit_big.py"
    open_doc(client, uri, text)
    t0 = time.perf_counter()
    res = await client.text_document_code_lens_async(T.CodeLensParams(
        T.TextDocumentIdentifier(uri)))
    took = time.perf_counter() - t0
    assert len(res) == 400 and res[0].command.title.startswith("4,194,304 FLOPs")
    if took < 1.2:
        pytest.skip(f"analysis took {took:.2f} s: too fast to need progress here")
    reports = [r for rs in client.progress_reports.values() for r in rs]
    kinds = [r.kind for r in reports]
    assert kinds[0] == "begin" and kinds[-1] == "end"
    assert reports[0].title == "tirkit: analysing"
