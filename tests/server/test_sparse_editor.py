"""Sparse iterations in the editor over stdio: hover shows the asymptotic cost of the
inner-product SpGEMM, `cost/asymptotically-dominated` is published on its `T.sp_iter` line,
and its quick fix turns it into Gustavson's order; the edited file checks clean and runs."""
from __future__ import annotations

import numpy as np
import pytest
from lsprotocol import types as T

import tirkit
from lsp_helpers import ROOT, open_doc, replace_all, vscode_client, wait_diagnostics

pytestmark = pytest.mark.asyncio(loop_scope="module")

INNER = ROOT / "examples" / "sparse" / "spgemm_inner.py"
SP_ITER = 31            # `    with T.sp_iter([I, K, J], "SSR", "spgemm") as [i, k, j]:`
CODE = "cost/asymptotically-dominated"

client = vscode_client()


def _apply(text, edits):
    lines = text.split("\n")

    def offset(p):
        return sum(len(x) + 1 for x in lines[:p.line]) + p.character
    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character),
                    reverse=True):
        text = text[:offset(e.range.start)] + e.new_text + text[offset(e.range.end):]
    return text


async def test_hover_shows_the_cost(client):
    uri = INNER.as_uri()
    open_doc(client, uri, INNER.read_text())
    h = await client.text_document_hover_async(T.HoverParams(
        text_document=T.TextDocumentIdentifier(uri=uri), position=T.Position(SP_ITER, 10)))
    assert h is not None
    assert "asymptotic cost: `O(nnz(A)·K + nnz(BT)·I + I·K)`" in h.contents.value
    assert "[I, J, K]: `O(nnz(A)·K + I)`" in h.contents.value
    body = await client.text_document_hover_async(T.HoverParams(
        text_document=T.TextDocumentIdentifier(uri=uri), position=T.Position(SP_ITER + 1, 40)))
    assert body is not None and "sparse iteration `spgemm`" in body.contents.value


async def test_no_cost_for_an_iteration_of_a_kernel_holding_errors(client):
    """An undefined name drops the statement from the kernel's IR: the iteration's cost
    would be that of an empty body."""
    text = INNER.read_text().replace("A[i, j] * BT[k, j]", "A[i, j] * Q[k, j]")
    uri = INNER.as_uri().replace("spgemm_inner.py", "spgemm_inner_partial.py")
    open_doc(client, uri, text)
    h = await client.text_document_hover_async(T.HoverParams(
        text_document=T.TextDocumentIdentifier(uri=uri), position=T.Position(SP_ITER, 10)))
    assert h is not None
    assert h.contents.value == ("**sparse iteration `spgemm`**\n\n"
                                "asymptotic cost: not estimated (the kernel has errors)")


async def test_quick_fix_reorders_into_gustavson(client):
    text = INNER.read_text()
    uri = INNER.as_uri().replace("spgemm_inner.py", "spgemm_inner_copy.py")
    open_doc(client, uri, text)
    diags = await wait_diagnostics(client, uri, lambda d: len(d) > 0)
    dom = [d for d in diags if d.code == CODE]
    assert [(d.range.start.line, d.severity) for d in dom] == [
        (SP_ITER, T.DiagnosticSeverity.Information)]
    assert "[I, J, K]" in dom[0].message
    actions = await client.text_document_code_action_async(T.CodeActionParams(
        text_document=T.TextDocumentIdentifier(uri=uri), range=dom[0].range,
        context=T.CodeActionContext(diagnostics=dom)))
    fixes = [a for a in actions if a.kind == T.CodeActionKind.QuickFix and
             a.title.startswith("Iterate 'spgemm' over [I, J, K]")]
    assert len(fixes) == 1 and fixes[0].edit is not None
    edits = fixes[0].edit.changes[uri]
    assert [e.range.start.line for e in edits] == [SP_ITER]      # one line changes
    new = _apply(text, edits)
    assert 'with T.sp_iter([I, J, K], "SRS", "spgemm") as [i, j, k]:' in new
    replace_all(client, uri, new, 2, text)
    after = await wait_diagnostics(client, uri, lambda d: not any(x.code == CODE for x in d))
    assert list(after) == []
    assert tirkit.check(new) == []
    _runs_like_scipy(new)


def _runs_like_scipy(text):
    sp = pytest.importorskip("scipy.sparse")
    from tirkit.codegen import build
    from tirkit.sparse.inputs import sparse_inputs
    from tirkit.sparse.lower import lower_sparse
    f = tirkit.parse(text).module.functions[0][1]
    low = lower_sparse(f)
    rng = np.random.default_rng(7)
    m, n, p = 21, 17, 19
    A = sp.random(m, n, 0.2, "csr", random_state=rng, dtype=np.float32)
    B = sp.random(n, p, 0.2, "csr", random_state=rng, dtype=np.float32)
    A.data += 0.5
    B.data += 0.5
    C = (A @ B).tocsr()
    C.sort_indices()
    BT = B.T.tocsr()
    BT.sort_indices()
    arrays, scalars, _ = sparse_inputs(
        f, low, rng, {"m": m, "n": n, "p": p}, 0.2,
        {"J": (A.indptr, A.indices), "J_t": (BT.indptr, BT.indices),
         "K_c": (C.indptr, C.indices)})
    names = [low.buffer_of(q).name for q in low.params if low.buffer_of(q) is not None]
    by = dict(zip(names, arrays))
    by["A"][:] = A.data
    by["BT"][:] = BT.data
    by["C"][:] = 0
    build(low)(*arrays, scalars=scalars)
    got = sp.csr_matrix((by["C"], by["c_indices"], by["c_indptr"]), shape=C.shape)
    assert C.nnz > 0
    np.testing.assert_allclose(got.toarray(), C.toarray(), rtol=1e-5, atol=1e-5)


async def test_every_feature_answers_on_sparse_kernels(client):
    """Symbols, code lens, inlay hints, formatting and hover on every line of each sparse
    example: answers without errors, and formatting changes nothing (canonical already)."""
    for path in sorted((ROOT / "examples" / "sparse").glob("*.py")):
        uri = path.as_uri().replace(".py", "_features.py")
        text = path.read_text()
        open_doc(client, uri, text)
        doc = T.TextDocumentIdentifier(uri=uri)
        n = len(text.split("\n"))
        symbols = await client.text_document_document_symbol_async(
            T.DocumentSymbolParams(text_document=doc))
        assert symbols
        await client.text_document_code_lens_async(T.CodeLensParams(text_document=doc))
        await client.text_document_inlay_hint_async(T.InlayHintParams(
            text_document=doc, range=T.Range(T.Position(0, 0), T.Position(n, 0))))
        edits = await client.text_document_formatting_async(T.DocumentFormattingParams(
            text_document=doc, options=T.FormattingOptions(tab_size=4, insert_spaces=True)))
        assert not edits
        for line in range(n):
            await client.text_document_hover_async(T.HoverParams(
                text_document=doc, position=T.Position(line, 10)))
    failed = [m.message for m in client.log_messages if m.type == T.MessageType.Error]
    assert failed == []
