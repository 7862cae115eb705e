"""Tensorization in the editor over stdio: `tensorize/available` (a hint on the block's name)
on the u8·s8→s32 example, its quick fix rewrites the kernel so that it checks clean and runs
bit-exactly; hover lists the intrinsics and the reasons of the others; nothing is offered on
the fp32 matmul; the `tirkit.intrinsics` setting adds an invented intrinsic."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from lsprotocol import types as T

import tirkit
from host_intrinsics import absent, best
from lsp_helpers import EXAMPLES, open_doc, replace_all, vscode_client, wait_diagnostics

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tensorize"))
import invented  # noqa: E402

pytestmark = pytest.mark.asyncio(loop_scope="module")

U8 = EXAMPLES / "valid" / "matmul_u8s8s32.py"
F32 = EXAMPLES / "valid" / "matmul.py"
BLOCK = 11                      # `        with T.block("C"):` (0-based)
CODE = "tensorize/available"
BEST = best()                   # the intrinsic this CPU is offered

client = vscode_client()


def _apply(text, edits):
    lines = text.split("\n")

    def offset(p):
        return sum(len(x) + 1 for x in lines[:p.line]) + p.character
    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character),
                    reverse=True):
        text = text[:offset(e.range.start)] + e.new_text + text[offset(e.range.end):]
    return text



def _bare(title: str) -> str:
    """An action's title without the cost model's "— predicted N.Nx faster" suffix."""
    return title.split(" — predicted ")[0]

async def _actions(client, uri, rng, diags=()):
    return await client.text_document_code_action_async(T.CodeActionParams(
        text_document=T.TextDocumentIdentifier(uri=uri), range=rng,
        context=T.CodeActionContext(diagnostics=list(diags))))


async def test_hint_and_quick_fix(client):
    text = U8.read_text()
    uri = U8.as_uri().replace("matmul_u8s8s32.py", "matmul_u8s8s32_fix.py")
    open_doc(client, uri, text)
    diags = await wait_diagnostics(client, uri, lambda d: any(x.code == CODE for x in d))
    hint = [d for d in diags if d.code == CODE]
    assert [(d.range.start.line, d.range.start.character, d.range.end.character, d.severity)
            for d in hint] == [(BLOCK, 21, 24, T.DiagnosticSeverity.Hint)]
    assert hint[0].message.startswith(f"block `C` can use {BEST.label}")
    assert ("saturate to s16" in hint[0].message) == BEST.saturates
    assert [d for d in diags if d.code != CODE] == []
    actions = await _actions(client, uri, hint[0].range, hint)
    fixes = [a for a in actions if a.kind == T.CodeActionKind.QuickFix and
             _bare(a.title) == f"Tensorize block 'C' with {BEST.label}"]
    assert len(fixes) == 1
    fix = fixes[0]
    if fix.edit is None:
        fix = await client.code_action_resolve_async(fix)
    edits = fix.edit.changes[uri]
    assert min(e.range.start.line for e in edits) >= 10        # the header is untouched
    new = _apply(text, edits)
    assert f'"{BEST.llvm}"' in new
    assert tirkit.check(new) == []
    replace_all(client, uri, new, 2, text)
    after = await wait_diagnostics(client, uri, lambda d: not any(x.code == CODE for x in d))
    assert list(after) == []
    _runs_exactly(new)


def _runs_exactly(text):
    from tirkit.codegen import build
    from tirkit.codegen.interp import run_reference
    mod = tirkit.parse(text).module
    f = mod["matmul_u8s8s32"]
    rng = np.random.default_rng(11)
    A = rng.integers(1, 128, (128, 256)).astype("uint8")
    B = rng.integers(-128, 128, (256, 64)).astype("int8")
    ref = A.astype(np.int64) @ B.astype(np.int64)
    C = np.zeros((128, 64), "int32")
    build(f, mod)(A, B, C)
    assert np.array_equal(C, ref)
    A, B = A[:, :], B[:, :]
    C2 = np.zeros((128, 64), "int32")
    run_reference(f, [A, B, C2], module=mod)
    assert np.array_equal(C2, ref)


async def test_offered_on_the_block_without_the_diagnostic(client):
    uri = U8.as_uri()
    open_doc(client, uri, U8.read_text())
    rng = T.Range(T.Position(BLOCK, 22), T.Position(BLOCK, 22))
    acts = await _actions(client, uri, rng)
    titles = [(_bare(a.title), a.kind) for a in acts]
    # the cost model ranks the quick fix with the schedule actions: it comes first, faster
    assert acts[0].title.startswith("Tensorize") and acts[0].title.endswith("x faster")
    assert (f"Tensorize block 'C' with {BEST.label}", T.CodeActionKind.QuickFix) in titles


async def test_hover_lists_intrinsics_and_reasons(client):
    uri = U8.as_uri()
    open_doc(client, uri, U8.read_text())
    h = await client.text_document_hover_async(T.HoverParams(
        text_document=T.TextDocumentIdentifier(uri=uri), position=T.Position(BLOCK, 22)))
    text = h.contents.value
    assert "**Tensorize**" in text
    assert f"**{BEST.label}** (`{BEST.name}`): `vj` by {BEST.lane}" in text
    for intrin, feature in absent():
        assert f"not `{intrin.name}`: llvm lacks " in text and feature in text


async def test_nothing_on_fp32(client):
    uri = F32.as_uri()
    open_doc(client, uri, F32.read_text())
    diags = await wait_diagnostics(client, uri)
    assert not [d for d in diags if d.code == CODE]
    rng = T.Range(T.Position(BLOCK, 22), T.Position(BLOCK, 22))
    assert not [a for a in await _actions(client, uri, rng) if "Tensorize" in a.title]
    h = await client.text_document_hover_async(T.HoverParams(
        text_document=T.TextDocumentIdentifier(uri=uri), position=T.Position(BLOCK, 22)))
    assert "`C` is float32, the instruction's `C` is int32 (dtype)" in h.contents.value


async def test_setting_adds_an_intrinsic(client, tmp_path):
    folder = invented.write(tmp_path)
    for method in (T.WORKSPACE_CODE_LENS_REFRESH, T.WORKSPACE_INLAY_HINT_REFRESH):
        if method not in client.protocol.fm.features:   # a settings change asks for these
            client.feature(method)(lambda params: None)
    client.workspace_did_change_configuration(T.DidChangeConfigurationParams(
        settings={"tirkit": {"intrinsics": [folder]}}))
    text = U8.read_text().replace('"uint8"', '"int8"').replace("matmul_u8s8s32", "mm_s8")
    uri = (tmp_path / "mm_s8.py").as_uri()
    open_doc(client, uri, text)
    diags = await wait_diagnostics(client, uri, lambda d: any(x.code == CODE for x in d))
    hint = [d for d in diags if d.code == CODE]
    assert "invented 8x2 dot" in hint[0].message
    actions = await _actions(client, uri, hint[0].range, hint)
    assert [_bare(a.title) for a in actions if a.title.startswith("Tensorize")] == \
        ["Tensorize block 'C' with invented 8x2 dot (s8·s8→s32)"]
    client.workspace_did_change_configuration(T.DidChangeConfigurationParams(
        settings={"tirkit": {"intrinsics": []}}))


async def test_hover_names_the_tensor_core_intrinsics_on_a_cuda_kernel(client, tmp_path):
    """A thread-bound f16 GEMM is checked against cuda-sm80: the hover lists wmma and
    mma.sync with their mappings, and the CPU intrinsics with the reason (dtype)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tensorize"))
    from test_tensorize_cuda import F16, MMA, gemm
    text = gemm(64, 32, 48, F16)
    line = next(i for i, x in enumerate(text.split("\n")) if 'T.block("C")' in x)
    uri = (tmp_path / "wmma_gemm.py").as_uri()
    open_doc(client, uri, text)
    col = text.split("\n")[line].index('"C"') + 1
    h = await client.text_document_hover_async(T.HoverParams(
        text_document=T.TextDocumentIdentifier(uri=uri), position=T.Position(line, col)))
    value = h.contents.value
    assert "**Tensorize**" in value
    assert f"**CUDA wmma (f16·f16→f32, 16x16x16)** (`{F16}`): `vi` by 16" in value
    assert f"(`{MMA}`): `vi` by 16 (as `vi`), `vj` by 8" in value
    assert "not `x86.vnni.dot_16x4_u8s8s32`" in value
