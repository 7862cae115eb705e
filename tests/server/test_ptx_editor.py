"""PTX's warp instructions in the editor over stdio: a register buffer of another type and a
configuration PTX has not are reported as the user types (`ptx-operands`), and hover on a
call's name says which instruction it is, what each lane gives and holds, and where the first
lanes' registers sit in the tiles (PTX's fragment layout tables, written out here)."""
from __future__ import annotations

import pytest
from lsprotocol import types as T

from lsp_helpers import codes, open_doc, replace_all, vscode_client, wait_diagnostics

pytestmark = pytest.mark.asyncio(loop_scope="module")

client = vscode_client()

TEXT = '''from tvm.script import tir as T


@T.prim_func
def ldmatrix_mma(A: T.Buffer((16, 16), "float16"), B: T.Buffer((16, 8), "float16"), C: T.Buffer((16, 8), "float32")):
    S = T.alloc_buffer((256,), "float16", scope="shared")
    a = T.alloc_buffer((8,), "float16", scope="local")
    b = T.alloc_buffer((4,), "float16", scope="local")
    c = T.alloc_buffer((4,), "float32", scope="local")
    for tx in T.thread_binding(32, thread="threadIdx.x"):
        for i in range(8):
            S[tx * 8 + i] = A[tx // 2, tx % 2 * 8 + i]
        T.evaluate(T.ptx_ldmatrix(False, 4, ".b16", a.data, 0, S.data, 16 * (tx % 16) + 8 * (tx // 16), dtype="float16"))
        for i in range(4):
            b[i] = B[tx % 4 * 2 + i % 2 + i // 2 * 8, tx // 4]
            c[i] = T.float32(0)
        T.evaluate(T.ptx_mma("m16n8k16", "row", "col", "fp16", "fp16", "fp32", a.data, 0, b.data, 0, c.data, 0, False))
        for i in range(4):
            C[tx // 4 + i // 2 * 8, tx % 4 * 2 + i % 2] = c[i]
'''
LDM, MMA = 12, 16           # 0-based lines of the two calls
# (S holds A row by row; the ldmatrix gives each lane its registers of A in the m16n8k16
# fragment layout, so C = A B: tests/codegen/test_cuda_threads.py's REFERENCE runs it)


def errors(diags):
    return [d for d in diags if d.severity == T.DiagnosticSeverity.Error]


async def hover(client, uri, line, name):
    text = TEXT.split("\n")[line]
    col = text.index(name) + 3
    h = await client.text_document_hover_async(T.HoverParams(
        T.TextDocumentIdentifier(uri), T.Position(line, col)))
    assert h is not None
    start = text.index("T." + name)
    assert (h.range.start.line, h.range.start.character, h.range.end.character) == \
        (line, start, text.index("(", start))
    return h.contents.value


async def test_hover_on_an_mma_gives_its_instruction_and_fragments(client):
    uri = "file:///tmp/tirkit_ptx_hover.py"
    open_doc(client, uri, TEXT)
    assert list(await wait_diagnostics(client, uri)) == []
    value = await hover(client, uri, MMA, "ptx_mma")
    assert value.startswith("**`T.ptx_mma`**")
    assert "`mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32`" in value
    assert "A 16×16 (f16), B 16×8 (f16), C and D 16×8 (f32), 2,048 multiply-adds" in value
    assert "| A | 8 | `a` from element `0` |" in value
    assert "| C, D | 4 | `c` from element `0` |" in value
    # PTX's m16n8k16 layouts, lane = 4 g + t: a0, a1 at (g, 2t..2t+1), a2, a3 at row g + 8,
    # a4..a7 the same 8 columns on; b0, b1 at (2t..2t+1, g), b2, b3 8 rows on; c0, c1 at
    # (g, 2t..2t+1), c2, c3 at row g + 8
    assert "| A | (0,0) (0,1) (8,0) (8,1) (0,8) (0,9) (8,8) (8,9) | " \
           "(0,2) (0,3) (8,2) (8,3) (0,10) (0,11) (8,10) (8,11) | " \
           "(1,0) (1,1) (9,0) (9,1) (1,8) (1,9) (9,8) (9,9) |" in value
    assert "| B | (0,0) (1,0) (8,0) (9,0) | (2,0) (3,0) (10,0) (11,0) | " \
           "(0,1) (1,1) (8,1) (9,1) |" in value
    assert "| C | (0,0) (0,1) (8,0) (8,1) | (0,2) (0,3) (8,2) (8,3) | (1,0) (1,1) (9,0) (9,1) |" \
        in value


async def test_hover_on_an_ldmatrix(client):
    uri = "file:///tmp/tirkit_ptx_hover_ldm.py"
    open_doc(client, uri, TEXT)
    await wait_diagnostics(client, uri)
    value = await hover(client, uri, LDM, "ptx_ldmatrix")
    assert "`ldmatrix.sync.aligned.m8n8.x4.shared.b16`" in value
    assert "(`S` from element `16 * (tx % 16) + 8 * (tx // 16)`, 8 elements each)" in value
    assert "into elements 2j and 2j + 1 of `a` from element `0`: 8 elements per lane" in value


async def test_operands_that_do_not_fit_are_reported_as_the_user_types(client):
    uri = "file:///tmp/tirkit_ptx_diagnostics.py"
    open_doc(client, uri, TEXT)
    assert list(await wait_diagnostics(client, uri)) == []
    text = TEXT.replace('c = T.alloc_buffer((4,), "float32"', 'c = T.alloc_buffer((4,), "float16"')
    replace_all(client, uri, text, 2, TEXT)
    diags = errors(await wait_diagnostics(client, uri, lambda d: len(errors(d)) > 0))
    assert codes(diags) == [(MMA, "type/mismatch")]
    assert "reads C as fp32, but 'c' holds float16" in diags[0].message
    value = await hover(client, uri, MMA, "ptx_mma")     # the layout is the call's still
    assert "| C | (0,0) (0,1) (8,0) (8,1) |" in value and "does not run" not in value
    text2 = text.replace('"fp16", "fp16", "fp32", a.data', '"fp16", "int8", "fp32", a.data')
    replace_all(client, uri, text2, 3, text)
    diags = errors(await wait_diagnostics(client, uri,
                                          lambda d: any("s8" in x.message for x in d)))
    assert codes(diags) == [(MMA, "type/mismatch")]
    assert "multiplicands of types f16 and s8 do not go together" in diags[0].message
    value = await hover(client, uri, MMA, "ptx_mma")
    assert "no PTX mma: multiplicands of types f16 and s8 do not go together" in value
