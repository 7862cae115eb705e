"""`shutdown` and `exit` while a large file is being checked: the process ends at once (the
analysis threads do not hold it), with exit code 0.  The time is measured here with a
generous bound; benchmarks/lsp_shutdown.py measures it on its own."""
from __future__ import annotations

import time

import pytest
import pytest_lsp
from lsprotocol import types as T
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from lsp_helpers import SERVER_COMMAND, many_kernels, open_doc, server_env


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER_COMMAND,
                                              server_env=server_env()))
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(T.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"),
        initialization_options={"progressAfterMs": 200}))
    yield


@pytest.mark.asyncio
async def test_exit_during_analysis_is_prompt(client):
    uri = "file:///tmp/tirkit_shutdown_big.py"
    open_doc(client, uri, many_kernels(600))          # ~9,000 lines: seconds of checking
    client.text_document_did_save(T.DidSaveTextDocumentParams(T.TextDocumentIdentifier(uri)))
    # wait until the server reports the analysis as running (work-done progress begins)
    t0 = time.perf_counter()
    while not any(isinstance(r, T.WorkDoneProgressBegin)
                  for reports in client.progress_reports.values() for r in reports):
        assert time.perf_counter() - t0 < 60, "no analysis progress reported"
        await client.wait_for_notification(T.PROGRESS)
    t1 = time.perf_counter()
    await client.shutdown_session()                    # shutdown, exit, wait for the process
    took = time.perf_counter() - t1
    assert took < 3.0, f"the server took {took:.2f} s to end after exit"
    assert not any(isinstance(r, T.WorkDoneProgressEnd)
                   for reports in client.progress_reports.values() for r in reports)
