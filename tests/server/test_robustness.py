"""Robustness: 300 mutated kernels (the compiler core's fuzz corpus where this checkout has
it, and edits of our own) replayed as incremental didChange edits over one
connection, with requests in between; every request is answered and the server is alive
and correct at the end."""
from __future__ import annotations

import asyncio
import random

import pytest
from lsprotocol import types as T
from pygls.exceptions import JsonRpcException

from lsp_helpers import example, open_doc, vscode_client, wait_diagnostics
from mutations import core_corpus, corpus, edit_between

pytestmark = pytest.mark.asyncio(loop_scope="module")


client = vscode_client()


def _requests(client, uri, rng, text):
    lines = text.split("\n")
    line = rng.randrange(len(lines) + 2)            # sometimes past the end
    col = rng.randrange(80)
    pos = T.Position(line, col)
    d = T.TextDocumentIdentifier(uri=uri)
    return [
        client.text_document_hover_async(T.HoverParams(d, pos)),
        client.text_document_definition_async(T.DefinitionParams(d, pos)),
        client.text_document_document_symbol_async(T.DocumentSymbolParams(d)),
        client.text_document_inlay_hint_async(T.InlayHintParams(
            d, T.Range(T.Position(0, 0), T.Position(len(lines), 0)))),
        client.text_document_code_lens_async(T.CodeLensParams(d)),
        client.text_document_completion_async(T.CompletionParams(d, pos)),
        client.text_document_document_highlight_async(T.DocumentHighlightParams(d, pos)),
    ]


def replay_states():
    """(seeds, 300 document states): the core's fuzz corpus interleaved with our own edits."""
    seeds = [example(f"valid/{n}.py").read_text() for n in
             ("matmul", "softmax", "conv2d_nhwc_relu", "gpu_matmul_shared", "module_two_funcs",
              "const_bias", "batch_matmul_symbolic")]
    seeds += [p.read_text() for p in sorted(example("invalid").glob("*.py"))]
    core = core_corpus(200)
    if core:        # the compiler core's fuzz corpus, interleaved with edits of our own
        ours = corpus(seeds, 100)
        states = [x for pair in zip(core[:100], ours) for x in pair] + core[100:]
    else:
        states = corpus(seeds, 300)
    assert len(states) == 300
    return seeds, states


async def replay(client, uri, first, states, pull=False) -> tuple:
    """Open `first`, then change to each state in turn with requests in between (pulls of
    diagnostics too when `pull`), a save every 25 versions; return (answered, last text)."""
    rng = random.Random(99)
    text = first
    open_doc(client, uri, text)
    answered = 0
    pending = []
    for version, new in enumerate(states, start=2):
        client.text_document_did_change(T.DidChangeTextDocumentParams(
            text_document=T.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[edit_between(text, new)]))
        text = new
        if version % 3 == 0:
            pending += _requests(client, uri, rng, text)
            if pull:
                pending.append(client.text_document_diagnostic_async(
                    T.DocumentDiagnosticParams(T.TextDocumentIdentifier(uri))))
        if version % 25 == 0:
            client.text_document_did_save(T.DidSaveTextDocumentParams(
                text_document=T.TextDocumentIdentifier(uri=uri)))
            fmt = client.text_document_formatting_async(T.DocumentFormattingParams(
                T.TextDocumentIdentifier(uri), T.FormattingOptions(4, True)))
            pending.append(fmt)
        if len(pending) > 40:
            answered += await _answered(pending)
            pending = []
    answered += await _answered(pending)
    return answered, text


async def _answered(pending) -> int:
    """Await the requests; each is answered with a result, or (a pull of a version the
    document has moved past) with the error that asks the client to pull again."""
    results = await asyncio.wait_for(asyncio.gather(*pending, return_exceptions=True), 60)
    for r in results:
        if isinstance(r, BaseException):
            assert isinstance(r, JsonRpcException) and r.code == -32802 and \
                r.data == {"retriggerRequest": True}, repr(r)
    return len(results)


async def test_replay_mutated_kernels(client):
    seeds, states = replay_states()
    uri = "file:///tmp/tirkit_fuzz.py"
    answered, text = await replay(client, uri, seeds[0], states)
    assert answered > 600
    # alive, and the document store followed every incremental edit exactly
    good = example("valid/matmul.py").read_text().replace("* B[vk, vj]", "* Qfinal[vk, vj]")
    client.text_document_did_change(T.DidChangeTextDocumentParams(
        text_document=T.VersionedTextDocumentIdentifier(uri=uri, version=10_000),
        content_changes=[edit_between(text, good)]))
    diags = await wait_diagnostics(
        client, uri, lambda d: [(x.code, "Qfinal" in x.message) for x in d] == [("name/undefined", True)],
        timeout=30)
    assert diags[0].range.start.line == 17
    fixed = example("valid/matmul.py").read_text()
    client.text_document_did_change(T.DidChangeTextDocumentParams(
        text_document=T.VersionedTextDocumentIdentifier(uri=uri, version=10_001),
        content_changes=[edit_between(good, fixed)]))
    await wait_diagnostics(client, uri, lambda d: len(d) == 0, timeout=30)
    h = await client.text_document_hover_async(T.HoverParams(
        T.TextDocumentIdentifier(uri), T.Position(11, 22)))
    assert "FLOPs: 4,194,304" in h.contents.value
    assert client.error is None
    errors = [m.message for m in client.log_messages if m.type == T.MessageType.Error]
    assert errors == []              # no feature failed (and answered empty) on the way


async def test_garbage_requests_answer_empty(client):
    """Requests on unknown documents and out-of-range positions answer, never crash."""
    d = T.TextDocumentIdentifier(uri="file:///tmp/never_opened.py")
    assert await client.text_document_hover_async(T.HoverParams(d, T.Position(3, 3))) is None
    assert list(await client.text_document_document_symbol_async(
        T.DocumentSymbolParams(d)) or []) == []
    uri = "file:///tmp/tirkit_binaryish.py"
    open_doc(client, uri, "\x00\x01\ufffd@T.prim_func\ndef f(:\n\t\t  \n")
    h = await client.text_document_hover_async(T.HoverParams(
        T.TextDocumentIdentifier(uri), T.Position(10**6, 10**6)))
    assert h is None
