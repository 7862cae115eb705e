"""End-to-end helpers: a real tirkit-lsp over stdio, driven by pytest-lsp's client."""
from __future__ import annotations

import asyncio
import pathlib
import re
import sys

import pytest_lsp
from lsprotocol import types as T
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from conftest import EXAMPLES, ROOT, server_env  # noqa: F401 - ROOT, for the tests

SERVER_COMMAND = [sys.executable, "-m", "tirkit_lsp"]


def vscode_client(initialization_options=None, opened=()):
    """A module-scoped `client` fixture (assign it to `client` in the test module): a real
    tirkit-lsp over stdio, initialised with VS Code's capabilities and the given
    initialization options, with the files `opened` open; shut down after the module."""
    @pytest_lsp.fixture(scope="module",
                        config=ClientServerConfig(server_command=SERVER_COMMAND,
                                                  server_env=server_env()))
    async def client(lsp_client: LanguageClient):
        await lsp_client.initialize_session(T.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            initialization_options=initialization_options))
        for p in opened:
            open_doc(lsp_client, p.as_uri(), p.read_text())
        yield
        await lsp_client.shutdown_session()
    return client


def example(rel: str) -> pathlib.Path:
    return EXAMPLES / rel


def expected_marks(text: str) -> list:
    """[(0-based line, code)] from `# expect: CODE` comments."""
    out = []
    for i, line in enumerate(text.split("\n")):
        m = re.search(r"#\s*expect:\s*([\w/-]+)", line)
        if m:
            out.append((i, m.group(1)))
    return out


def open_doc(client, uri: str, text: str, version: int = 1) -> None:
    client.text_document_did_open(T.DidOpenTextDocumentParams(
        text_document=T.TextDocumentItem(uri=uri, language_id="python", version=version,
                                         text=text)))


def replace_all(client, uri: str, text: str, version: int, old_text: str) -> None:
    """A didChange with one incremental edit that replaces the whole document."""
    lines = old_text.split("\n")
    rng = T.Range(T.Position(0, 0), T.Position(len(lines) - 1, len(lines[-1])))
    client.text_document_did_change(T.DidChangeTextDocumentParams(
        text_document=T.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[T.TextDocumentContentChangePartial(range=rng, text=text)]))


async def wait_diagnostics(client, uri: str, predicate=lambda d: True, timeout=30.0):
    """Wait until the diagnostics published for uri satisfy predicate; return them."""
    async def loop():
        while True:
            if uri in client.diagnostics and predicate(client.diagnostics[uri]):
                return client.diagnostics[uri]
            await client.wait_for_notification(T.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    return await asyncio.wait_for(loop(), timeout)


def codes(diags) -> list:
    return sorted((d.range.start.line, d.code) for d in diags)


def many_kernels(count: int) -> str:
    """One file of `count` matmul-like kernels (each 15 lines), named k0, k1, ..."""
    head = "from tvm.script import tir as T\n"
    body = example("valid/matmul.py").read_text().split("\n", 2)[2]
    parts = [head]
    for i in range(count):
        parts.append(body.replace("def matmul(", f"def k{i}(")
                     .replace('"global_symbol": "matmul"', f'"global_symbol": "k{i}"'))
    return "\n".join(parts)
