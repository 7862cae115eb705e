"""Hover on a kernel's name (`def matmul_3(` in a module, or a top-level prim_func): its
signature with shapes and dtypes, FLOPs and estimated time (the core's numbers), the number
of blocks, and how many diagnostics the client is shown for it."""
from __future__ import annotations

import pytest
from lsprotocol import types as T

import tirkit
from tirkit.analysis.cost import format_seconds, kernel_costs, roofline_seconds
from lsp_helpers import example, open_doc, vscode_client, wait_diagnostics

pytestmark = pytest.mark.asyncio(loop_scope="module")

client = vscode_client()


def module_of_matmuls(count: int) -> str:
    """An `@I.ir_module` of `count` matmul kernels matmul_1 ... matmul_count; matmul_2 reads
    a buffer nothing defines."""
    body = example("valid/matmul.py").read_text().split("\n", 3)[3]
    parts = ["from tvm.script import ir as I", "from tvm.script import tir as T", "", "",
             "@I.ir_module", "class Module:"]
    for i in range(1, count + 1):
        k = body.replace("def matmul(", f"def matmul_{i}(").replace(
            '"global_symbol": "matmul"', f'"global_symbol": "matmul_{i}"')
        if i == 2:
            k = k.replace("* B[vk, vj]", "* Z[vk, vj]")
        parts += ["    " + ln if ln else ln for ln in k.rstrip("\n").split("\n")] + [""]
    return "\n".join(parts)


async def hover_on_name(client, uri, text, name):
    lines = text.split("\n")
    line = next(i for i, ln in enumerate(lines) if f"def {name}(" in ln)
    col = lines[line].index(name) + 2
    h = await client.text_document_hover_async(T.HoverParams(
        T.TextDocumentIdentifier(uri), T.Position(line, col)))
    assert h is not None, name
    start = lines[line].index(name)
    assert (h.range.start.line, h.range.start.character, h.range.end.character) == \
        (line, start, start + len(name))
    return h.contents.value


async def test_kernel_in_a_module(client):
    text = module_of_matmuls(3)
    uri = "file:///tmp/tirkit_kernel_hover_module.py"
    open_doc(client, uri, text)
    await wait_diagnostics(client, uri, lambda d: len(d) == 1)
    f = dict(tirkit.parse(text).module.functions)["matmul_3"]
    seconds = format_seconds(roofline_seconds(kernel_costs(f).total, "llvm"))
    value = await hover_on_name(client, uri, text, "matmul_3")
    assert value.startswith("**kernel** `matmul_3` in `Module`")
    assert "matmul_3(A: float32[128, 128], B: float32[128, 128], C: float32[128, 128])" in value
    assert "- FLOPs: 4,194,304" in value
    assert f"- estimated time on llvm (CPU znver4, 1 core): {seconds}, compute-bound" in value
    assert "- blocks: 1" in value
    assert "- diagnostics: none" in value
    # the kernel with the undefined name counts its diagnostic, and only its own
    assert "- diagnostics: 1 (1 error)" in await hover_on_name(client, uri, text, "matmul_2")
    assert "- diagnostics: none" in await hover_on_name(client, uri, text, "matmul_1")


async def test_top_level_kernel_and_on_save_diagnostics(client):
    p = example("valid/softmax.py")
    text = p.read_text()
    open_doc(client, p.as_uri(), text)
    value = await hover_on_name(client, p.as_uri(), text, "softmax")
    assert value.startswith("**kernel** `softmax`\n")
    assert "softmax(A: float32[64, 1024], S: float32[64, 1024])" in value
    assert "- blocks: 4" in value
    # an on-save rule's diagnostic counts once the file is saved (the set the client shows)
    q = example("invalid/uncovered_read.py")
    text = q.read_text()
    open_doc(client, q.as_uri(), text)
    assert "- diagnostics: none" in await hover_on_name(client, q.as_uri(), text,
                                                        "partial_producer")
    client.text_document_did_save(T.DidSaveTextDocumentParams(T.TextDocumentIdentifier(q.as_uri())))
    await wait_diagnostics(client, q.as_uri(), lambda d: len(d) == 1)
    assert "- diagnostics: 1 (1 error)" in await hover_on_name(client, q.as_uri(), text,
                                                              "partial_producer")


async def test_symbolic_kernel(client):
    p = example("valid/batch_matmul_symbolic.py")
    text = p.read_text()
    open_doc(client, p.as_uri(), text)
    value = await hover_on_name(client, p.as_uri(), text, "batch_matmul")
    assert "batch_matmul(A: float32[n, m, 64], B: float32[n, 64, 32], C: float32[n, m, 32])" \
        in value
    assert "- FLOPs: 4,096·m·n" in value
    assert "unknown (symbolic sizes)" in value
