"""Hover, navigation, rename, formatting, symbols, inlay hints, code lens and completion,
end to end over stdio on the shared examples."""
from __future__ import annotations

import pytest
from lsprotocol import types as T
from pygls.exceptions import JsonRpcException

import tirkit
from tirkit.script.format import format_text
from tirkit.script.namespace import DOCS
from lsp_helpers import ROOT, example, open_doc, vscode_client

pytestmark = pytest.mark.asyncio(loop_scope="module")

MATMUL = example("valid/matmul.py")


client = vscode_client(opened=[example(f"valid/{name}.py") for name in
                                ("matmul", "const_bias", "batch_matmul_symbolic", "softmax")])


def doc(uri):
    return T.TextDocumentIdentifier(uri=uri)


async def hover(client, path, line, col):
    h = await client.text_document_hover_async(T.HoverParams(doc(path.as_uri()),
                                                             T.Position(line, col)))
    return h.contents.value if h else None


def apply_edits(text: str, edits) -> str:
    lines = text.split("\n")
    offsets = [0]
    for ln in lines:
        offsets.append(offsets[-1] + len(ln) + 1)

    def off(p):
        return offsets[p.line] + p.character if p.line < len(lines) else len(text)
    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character),
                    reverse=True):
        text = text[:off(e.range.start)] + e.new_text + text[off(e.range.end):]
    return text


# ---------------------------------------------------------------------------- hover
async def test_hover_block_signature_and_costs(client):
    text = await hover(client, MATMUL, 11, 22)          # the "C" of with T.block("C")
    assert "**block** `C` in `matmul`" in text
    for it, kind in (("vi", "spatial"), ("vj", "spatial"), ("vk", "reduce")):
        assert f"| `{it}` | {kind} | `[0, 128)` |" in text
    assert "(declared): `A[vi, vk]`, `B[vk, vj]`" in text
    assert "(declared): `C[vi, vj]`" in text
    assert "**init**: `C[vi, vj] = T.float32(0)`" in text
    assert "FLOPs: 4,194,304" in text                   # 2 * 128^3
    assert "unique bytes: 196,608" in text              # three 128x128 float32 buffers
    assert "arithmetic intensity: 21.33 FLOP/byte" in text
    assert "asymptotic cost: `O(128·128·128)`" in text
    assert "roofline time on llvm" in text and "compute-bound" in text


async def test_hover_inferred_regions(client):
    text = await hover(client, MATMUL, 11, 22)
    assert "(inferred): `A[vi, vk]`, `B[vk, vj]`" in text and "differs" not in text
    p = example("invalid/signature_mismatch.py")
    open_doc(client, p.as_uri(), p.read_text())
    lines = p.read_text().split("\n")
    ln = next(i for i, x in enumerate(lines) if "T.block(" in x)
    text = await hover(client, p, ln, lines[ln].index("T.block(") + 9)
    assert "(declared): `A[vi, vj]`; (inferred): `A[vj, vi]` — **differs**" in text


async def test_hover_block_from_with_line_and_iterator(client):
    on_with = await hover(client, MATMUL, 11, 9)
    on_iter = await hover(client, MATMUL, 12, 20)      # vk where it is defined
    use_iter = await hover(client, MATMUL, 17, 42)     # vk in A[vi, vk]
    for text in (on_with, on_iter, use_iter):
        assert "**block** `C`" in text and "FLOPs: 4,194,304" in text


async def test_hover_gpu_kernel_uses_a_gpu_roofline(client):
    p = example("valid/gpu_matmul_shared.py")
    open_doc(client, p.as_uri(), p.read_text())
    lines = p.read_text().split("\n")
    ln = next(i for i, x in enumerate(lines) if 'T.block("C")' in x)
    text = await hover(client, p, ln, lines[ln].index('"C"') + 1)
    assert "FLOPs: 2,147,483,648" in text                # 2 * 1024^3
    assert "roofline time on cuda (NVIDIA A100 (40 GB))" in text
    ln = next(i for i, x in enumerate(lines) if "for tx in" in x)
    text = await hover(client, p, ln, lines[ln].index("tx"))
    assert "kind: thread_binding" in text and "thread: `threadIdx.x`" in text
    # tx (32) x k_0 (32) x (A_shared 32*32 + B_shared 32*32 + k_1 32)
    assert f"total trip count under it: {32 * 32 * (1024 + 1024 + 32):,}" in text


PREDICATED = '''from tvm.script import tir as T


@T.prim_func
def f(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(20):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            T.where(i < 16)
            B[vi] = A[vi] * T.float32(2)
'''


async def test_hover_predicate(client):
    uri = "file:///tmp/tirkit_predicate.py"
    open_doc(client, uri, PREDICATED)
    h = await client.text_document_hover_async(T.HoverParams(doc(uri), T.Position(6, 22)))
    assert "- **predicate**: `i < 16`" in h.contents.value
    assert "- **init**: none" in h.contents.value
    assert "FLOPs: 20" in h.contents.value          # an upper bound: the predicate is ignored


BAD_PARAMS = '''from tvm.script import tir as T


@T.prim_func
def f(A: T.Buffer((16,), "float32"), n: T.int33, m: T.int32):
    for i in range(16):
        A[i] = T.float32(n + m)
'''


async def test_hover_a_parameter_whose_annotation_failed(client):
    """A parameter whose type annotation is an error says so, instead of showing the
    analysis's placeholder type."""
    uri = "file:///tmp/tirkit_bad_params.py"
    open_doc(client, uri, BAD_PARAMS)
    line = BAD_PARAMS.split("\n")[6]
    bad = await client.text_document_hover_async(T.HoverParams(doc(uri), T.Position(
        6, line.index("n + m"))))
    good = await client.text_document_hover_async(T.HoverParams(doc(uri), T.Position(
        6, line.index("m)"))))
    assert bad.contents.value == ("**parameter** `n` in `f`: type not known (its annotation "
                                  "is an error)")
    assert good.contents.value == "**parameter** `m`: `int32` in `f`"


async def test_hover_symbolic_block(client):
    p = example("valid/batch_matmul_symbolic.py")
    text = await hover(client, p, 12, 22)
    assert "asymptotic cost: `O(n·m·32·64)`" in text
    assert "FLOPs: 4,096·m·n" in text
    assert "`[0, n)`" in text


async def test_hover_loop(client):
    text = await hover(client, MATMUL, 10, 8)          # i of `for i, j, k in T.grid(...)`
    assert "**loop** `i`" in text
    assert "extent: `128`" in text and "kind: serial" in text
    assert "total trip count under it: 2,097,152" in text
    inner = await hover(client, MATMUL, 10, 14)        # k: the innermost loop
    assert "total trip count under it: 128" in inner


async def test_hover_buffer(client):
    text = await hover(client, MATMUL, 5, 4)           # parameter A
    assert "**buffer** `A` (parameter)" in text
    assert "shape: `(128, 128)`" in text and "dtype: `float32`" in text
    assert "scope: `global`" in text and "size: 65,536 bytes" in text
    assert "producers: none (input)" in text and "consumers: `C`" in text
    out = await hover(client, MATMUL, 17, 12)          # C written by block C
    assert "producers: `C`" in out


async def test_hover_buffer_producers_consumers_softmax(client):
    p = example("valid/softmax.py")
    lines = p.read_text().split("\n")
    ln = next(i for i, x in enumerate(lines) if "expo = T.alloc_buffer" in x)
    text = await hover(client, p, ln, lines[ln].index("expo"))
    assert "producers: `exp`" in text
    assert "consumers: `row_sum`, `norm`" in text


async def test_hover_t_name_and_constant(client):
    text = await hover(client, MATMUL, 10, 22)         # T.grid
    assert DOCS["grid"] in text
    p = example("valid/const_bias.py")
    text = await hover(client, p, 6, 6)                # bias_data = T.allocate_const(...)
    assert "**constant** `bias_data`" in text
    assert "min: -1" in text and "max: 7" in text
    assert "mean: 1.45325" in text                     # (0.5-1+2.25+0+3-0.125+0.001+7) / 8
    text = await hover(client, p, 7, 5)                # bias = T.decl_buffer(..., data=bias_data)
    assert "**buffer** `bias` (declared)" in text and "size: 32 bytes" in text
    assert "min: -1" in text and "max: 7" in text


# ---------------------------------------------------------------------------- navigation
async def test_definition(client):
    res = await client.text_document_definition_async(T.DefinitionParams(
        doc(MATMUL.as_uri()), T.Position(17, 42)))    # vk in A[vi, vk]
    assert [(r.range.start.line, r.range.start.character, r.range.end.character)
            for r in res] == [(12, 20, 22)]
    res = await client.text_document_definition_async(T.DefinitionParams(
        doc(MATMUL.as_uri()), T.Position(17, 48)))    # B in * B[vk, vj]
    assert [(r.range.start.line, r.range.start.character) for r in res] == [(6, 4)]


async def test_references_and_highlight(client):
    res = await client.text_document_references_async(T.ReferenceParams(
        text_document=doc(MATMUL.as_uri()), position=T.Position(7, 4),
        context=T.ReferenceContext(include_declaration=True)))
    assert sorted((r.range.start.line, r.range.start.character) for r in res) == \
        [(7, 4), (14, 21), (16, 16), (17, 12), (17, 24)]
    res = await client.text_document_references_async(T.ReferenceParams(
        text_document=doc(MATMUL.as_uri()), position=T.Position(7, 4),
        context=T.ReferenceContext(include_declaration=False)))
    assert len(res) == 4
    hl = await client.text_document_document_highlight_async(T.DocumentHighlightParams(
        doc(MATMUL.as_uri()), T.Position(12, 12)))    # vi
    kinds = sorted((h.range.start.line, h.range.start.character, h.kind) for h in hl)
    assert kinds[0] == (12, 12, T.DocumentHighlightKind.Write)
    assert [k[:2] for k in kinds[1:]] == [(13, 22), (14, 23), (16, 18), (17, 14), (17, 26),
                                         (17, 38)]


async def test_rename_variable(client):
    text = MATMUL.read_text()
    edit = await client.text_document_rename_async(T.RenameParams(
        doc(MATMUL.as_uri()), T.Position(17, 14), "row"))
    new = apply_edits(text, edit.changes[MATMUL.as_uri()])
    assert "vi" not in new and new.count("row") == 7
    a, b = tirkit.parse(text), tirkit.parse(new)
    assert not b.diagnostics
    assert tirkit.structural_equal(a.module, b.module)


async def test_rename_buffer(client):
    text = MATMUL.read_text()
    edit = await client.text_document_rename_async(T.RenameParams(
        doc(MATMUL.as_uri()), T.Position(5, 4), "Lhs"))
    new = apply_edits(text, edit.changes[MATMUL.as_uri()])
    assert "Lhs: T.Buffer((128, 128)" in new and "Lhs[vi, vk]" in new
    assert not tirkit.parse(new).diagnostics


async def test_rename_refuses_clashes(client):
    for name in ("vj", "B", "T", "for", "2x"):
        with pytest.raises(JsonRpcException):
            await client.text_document_rename_async(T.RenameParams(
                doc(MATMUL.as_uri()), T.Position(12, 12), name))


async def test_document_symbols(client):
    p = example("valid/softmax.py")
    res = await client.text_document_document_symbol_async(T.DocumentSymbolParams(doc(p.as_uri())))
    assert [s.name for s in res] == ["softmax"]
    kids = res[0].children
    assert [k.name for k in kids if k.kind == T.SymbolKind.Struct] == \
        ["row_max", "exp", "row_sum", "norm"]
    assert {"A", "S", "row_max", "expo", "row_sum"} <= {k.name for k in kids}


# ---------------------------------------------------------------------------- formatting
MESSY = '''import os   # not a kernel: left alone
from tvm.script import tir as T


def helper( x ):
    return x+1


@T.prim_func
def add(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi]=A[vi]+T.float32(1)
'''


async def test_formatting_minimal_and_idempotent(client):
    uri = "file:///tmp/tirkit_messy.py"
    open_doc(client, uri, MESSY)
    opts = T.FormattingOptions(tab_size=4, insert_spaces=True)
    edits = await client.text_document_formatting_async(T.DocumentFormattingParams(doc(uri),
                                                                                   opts))
    new = apply_edits(MESSY, edits)
    assert new == format_text(MESSY)[0]
    assert "B[vi] = A[vi] + T.float32(1)" in new
    assert "def helper( x ):\n    return x+1" in new          # the rest is untouched
    changed = {i for i, (x, y) in enumerate(zip(MESSY.split("\n"), new.split("\n"))) if x != y}
    touched = set()
    for e in edits:
        touched |= set(range(e.range.start.line, max(e.range.end.line, e.range.start.line + 1)))
    assert touched == changed                                   # only the changed lines
    client.text_document_did_change(T.DidChangeTextDocumentParams(
        text_document=T.VersionedTextDocumentIdentifier(uri=uri, version=2),
        content_changes=[T.TextDocumentContentChangePartial(range=e.range, text=e.new_text)
                         for e in sorted(edits, key=lambda e: e.range.start.line,
                                         reverse=True)]))
    again = await client.text_document_formatting_async(T.DocumentFormattingParams(doc(uri),
                                                                                   opts))
    assert list(again or []) == []


CONST16 = '''from tvm.script import tir as T


@T.prim_func
def add_bias(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    bias_data = T.allocate_const(VALUES, "float32", [16])
    bias = T.decl_buffer((16,), "float32", data=bias_data)
    for i in range(16):
        B[i] = A[i] + bias[i]
'''


async def set_threshold(client, n):
    for method in (T.WORKSPACE_CODE_LENS_REFRESH, T.WORKSPACE_INLAY_HINT_REFRESH):
        if method not in client.protocol.fm.features:   # a settings change asks for these
            client.feature(method)(lambda params: None)
    client.workspace_did_change_configuration(T.DidChangeConfigurationParams(
        settings={"tirkit": {"constants": {"inlineThreshold": n}}}))


async def test_formatting_moves_constants_past_the_inline_threshold(client, tmp_path):
    import numpy as np
    values = np.random.default_rng(7).standard_normal(16).astype("float32")
    text = CONST16.replace("VALUES", "[" + ", ".join(repr(float(v)) for v in values) + "]")
    text = format_text(text)[0]              # canonical, constants inline
    path = tmp_path / "bias.py"
    path.write_text(text)
    uri = path.as_uri()
    open_doc(client, uri, text)
    opts = T.FormattingOptions(tab_size=4, insert_spaces=True)
    try:
        await set_threshold(client, 64)      # 16 elements print inline: nothing to do
        edits = await client.text_document_formatting_async(T.DocumentFormattingParams(doc(uri),
                                                                                       opts))
        assert list(edits or []) == [] and not (tmp_path / "bias.params").exists()
        await set_threshold(client, 8)       # now they go to bias.params beside the script
        edits = await client.text_document_formatting_async(T.DocumentFormattingParams(doc(uri),
                                                                                       opts))
        new = apply_edits(text, edits)
        assert (tmp_path / "bias.params").exists()
        assert 'P = params.load("bias.params")' in new
        assert 'T.allocate_const(P["' in new.replace(" ", "").replace("\n", "") or \
            'P["' in new.split("T.allocate_const")[1].split(")")[0]
        r = tirkit.parse(new, str(path))
        assert [d for d in r.diagnostics if d.severity == "error"] == []
        (const,) = r.module.constants.values() if isinstance(r.module.constants, dict) \
            else list(r.module.constants)
        assert const.external and const.file == "bias.params"
        assert np.array_equal(const.array().reshape(-1), values)     # bit-exact
    finally:
        await set_threshold(client, 64)


async def test_formatting_valid_examples_is_a_fixpoint(client):
    opts = T.FormattingOptions(tab_size=4, insert_spaces=True)
    for name in ("matmul", "softmax"):
        p = example(f"valid/{name}.py")
        edits = await client.text_document_formatting_async(
            T.DocumentFormattingParams(doc(p.as_uri()), opts))
        assert list(edits or []) == [], name


# ---------------------------------------------------------------------------- the rest
async def test_inlay_hints(client):
    res = await client.text_document_inlay_hint_async(T.InlayHintParams(
        doc(MATMUL.as_uri()), T.Range(T.Position(0, 0), T.Position(18, 0))))
    labels = {(h.position.line, h.label) for h in res}
    assert (10, " 2,097,152 iterations") in labels
    assert (12, ": reduce [0, 128)") in labels
    assert sum(1 for ln, lab in labels if ln == 12 and lab == ": spatial [0, 128)") == 1


async def test_code_lens(client):
    res = await client.text_document_code_lens_async(T.CodeLensParams(doc(MATMUL.as_uri())))
    assert len(res) == 1 and res[0].range.start.line == 4
    assert res[0].command.title.startswith("4,194,304 FLOPs")


async def test_completion(client):
    uri = "file:///tmp/tirkit_complete.py"
    text = MATMUL.read_text().replace("T.grid(128, 128, 128)", "T.gr")
    open_doc(client, uri, text)
    line = text.split("\n")[10]
    res = await client.text_document_completion_async(T.CompletionParams(
        doc(uri), T.Position(10, line.index("T.gr") + 4)))
    names = [i.label for i in res.items]
    assert "grid" in names and all(n.startswith("gr") for n in names)
    grid = next(i for i in res.items if i.label == "grid")
    assert grid.documentation.value == DOCS["grid"]
    res = await client.text_document_completion_async(T.CompletionParams(
        doc(uri), T.Position(10, line.index("T.gr") + 2)))
    assert len(res.items) > 300 and "prim_func" in [i.label for i in res.items]
    line12 = text.split("\n")[12]
    res = await client.text_document_completion_async(T.CompletionParams(
        doc(uri), T.Position(12, line12.index("remap"))))
    assert [i.label for i in res.items] == ["spatial", "reduce", "scan", "opaque", "remap"]


async def test_ir_module_symbols_and_hover(client):
    p = example("valid/module_two_funcs.py")
    open_doc(client, p.as_uri(), p.read_text())
    res = await client.text_document_document_symbol_async(
        T.DocumentSymbolParams(doc(p.as_uri())))
    assert [(s.name, s.kind) for s in res] == [("Module", T.SymbolKind.Module)]
    assert [k.name for k in res[0].children] == ["add_one", "scale"]
    lines = p.read_text().split("\n")
    ln = [i for i, x in enumerate(lines) if 'T.block("B")' in x][1]     # block B of scale
    text = await hover(client, p, ln, lines[ln].index('"B"') + 1)
    assert "**block** `B` in `scale`" in text and "FLOPs: 1,024" in text
    lens = await client.text_document_code_lens_async(T.CodeLensParams(doc(p.as_uri())))
    assert [c.command.title.split(" FLOPs")[0] for c in lens] == ["1,024", "1,024"]


async def test_tirx_spelling_and_alias(client):
    text = (ROOT / "examples" / "row_mean_tirx.py").read_text().replace(
        "tirx as T", "tirx as Tx").replace("T.", "Tx.")
    uri = "file:///tmp/tirkit_tirx_alias.py"
    open_doc(client, uri, text)
    lines = text.split("\n")
    ln = next(i for i, x in enumerate(lines) if 'Tx.sblock("acc")' in x)
    h = await client.text_document_hover_async(T.HoverParams(
        doc(uri), T.Position(ln, lines[ln].index('"acc"') + 1)))
    assert "**block** `acc` in `row_mean`" in h.contents.value
    assert "FLOPs: 16,384" in h.contents.value           # one add per (i, k): 64 * 256
    h = await client.text_document_hover_async(T.HoverParams(
        doc(uri), T.Position(ln, lines[ln].index("sblock") + 1)))
    assert DOCS["sblock"] in h.contents.value


STEPS_AND_SCALARS = '''from tvm.script import tirx as T


@T.prim_func(s_tir=True)
def rowsum(A: T.Buffer((4, 128), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        acc = T.float32(0)
        for k in range(1, 128, 5):
            acc = acc + A[i, k]
        B[i] = acc
'''


async def test_hover_stepped_loop_and_local_scalar(client, tmp_path):
    path = tmp_path / "steps.py"
    path.write_text(STEPS_AND_SCALARS)
    open_doc(client, path.as_uri(), STEPS_AND_SCALARS)
    loop = await hover(client, path, 7, 12)            # k of `range(1, 128, 5)`
    assert "- range: `1` to `128` by `5`: `26` iterations" in loop
    assert "total trip count under it: 26" in loop
    scalar = await hover(client, path, 8, 12)          # acc, assigned again in the loop
    assert "**local scalar** `acc` in `rowsum`" in scalar
    assert "- dtype: `float32`" in scalar
