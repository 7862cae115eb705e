"""Schedule code actions end to end over stdio: what is offered at a loop and at a block,
resolving and applying edits, and the trace command."""
from __future__ import annotations

import pytest
from lsprotocol import types as T

import tirkit
from lsp_helpers import example, open_doc, replace_all, vscode_client
from test_verify_instance_dependence import FOUR, SHIFT
from test_verify_iter_type import ROWSUM
from test_verify_rules import without_init

pytestmark = pytest.mark.asyncio(loop_scope="module")

MATMUL = example("valid/matmul.py")
LOOP_LINE = 10          # `    for i, j, k in T.grid(128, 128, 128):` (0-based)
BLOCK_LINE = 11         # `        with T.block("C"):`


client = vscode_client()


def _apply(text: str, edits) -> str:
    lines = text.split("\n")

    def offset(p):
        return sum(len(x) + 1 for x in lines[:p.line]) + p.character
    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character),
                    reverse=True):
        text = text[:offset(e.range.start)] + e.new_text + text[offset(e.range.end):]
    return text


async def _actions(client, uri, line, col):
    return await client.text_document_code_action_async(T.CodeActionParams(
        text_document=T.TextDocumentIdentifier(uri=uri),
        range=T.Range(T.Position(line, col), T.Position(line, col)),
        context=T.CodeActionContext(diagnostics=[])))


def _base(title):
    """An action's title without the cost model's predicted speed-up."""
    return title.split(" — predicted ")[0]


async def test_actions_at_loop_and_block(client):
    uri = MATMUL.as_uri()
    open_doc(client, uri, MATMUL.read_text())
    titles = [_base(a.title) for a in await _actions(client, uri, LOOP_LINE, 8)]
    for t in ("Split loop 'i' into 32 x 4", "Fuse loop 'i' with 'j'",
              "Reorder loop 'i' with 'j'", "Parallelize loop 'i'", "Unroll loop 'i'"):
        assert t in titles
    assert not any(t.startswith("Bind") for t in titles)          # a CPU kernel
    k_titles = [_base(a.title) for a in await _actions(client, uri, LOOP_LINE, 14)]
    assert "Parallelize loop 'k'" not in k_titles                  # k feeds a reduction
    assert "rfactor loop 'k' of 'C'" in k_titles
    b_titles = [_base(a.title) for a in await _actions(client, uri, BLOCK_LINE, 12)]
    assert "Cache read of 'A' in global memory" in b_titles
    assert "Decompose reduction 'C' at loop 'k'" in b_titles
    assert "Inline block 'C' into its consumers" not in b_titles   # C is an output


async def test_every_offered_action_resolves(client):
    uri = MATMUL.as_uri()
    open_doc(client, uri, MATMUL.read_text())
    for line, col in ((LOOP_LINE, 8), (BLOCK_LINE, 12)):
        for ca in await _actions(client, uri, line, col):
            r = await client.code_action_resolve_async(ca)
            assert r.edit is not None and r.edit.changes[uri], ca.title


async def test_split_then_reorder_matches_the_api(client):
    path = example("valid/matmul.py")
    uri = path.as_uri().replace("matmul.py", "matmul_copy.py")
    text = path.read_text()
    open_doc(client, uri, text)
    ca = next(a for a in await _actions(client, uri, LOOP_LINE, 8)
              if _base(a.title) == "Split loop 'i' into 32 x 4")
    ca = await client.code_action_resolve_async(ca)
    text2 = _apply(text, ca.edit.changes[uri])
    assert all(e.range.start.line >= 10 for e in ca.edit.changes[uri])   # header untouched
    await client.workspace_execute_command_async(T.ExecuteCommandParams(
        command=ca.command.command, arguments=ca.command.arguments))
    replace_all(client, uri, text2, 2, text)
    ca2 = next(a for a in await _actions(client, uri, LOOP_LINE, 8)
               if _base(a.title) == "Reorder loop 'i_0' with 'i_1'")
    ca2 = await client.code_action_resolve_async(ca2)
    text3 = _apply(text2, ca2.edit.changes[uri])
    await client.workspace_execute_command_async(T.ExecuteCommandParams(
        command=ca2.command.command, arguments=ca2.command.arguments))
    r = tirkit.parse(text3)
    assert not r.diagnostics
    assert not [d for d in tirkit.check(text3) if d.severity == "error"]
    sch = tirkit.Schedule(tirkit.parse(text).module)
    i, j, k = sch.get_loops(sch.get_block("C"))
    i0, i1 = sch.split(i, [None, 4])
    sch.reorder(i1, i0)
    assert tirkit.structural_equal(r.module, sch.mod)
    py = await client.workspace_execute_command_async(T.ExecuteCommandParams(
        command="tirkit.showTrace", arguments=[uri]))
    assert "sch.split(loop=l1, factors=[None, 4], preserve_unit_iters=True)" in py
    assert "sch.reorder(" in py
    ns = {"sch": tirkit.Schedule(tirkit.parse(text).module)}
    exec(py, ns)
    assert tirkit.structural_equal(ns["sch"].mod, sch.mod)



async def test_trace_records_an_applied_edit_without_its_command_and_only_once(client):
    """A client may apply a resolved action's edit and drop (or send late) its record
    command: the step is recorded when the edit arrives, and the late command adds nothing."""
    path = example("valid/matmul.py")
    uri = path.as_uri().replace("matmul.py", "matmul_edit_only.py")
    text = path.read_text()
    open_doc(client, uri, text)
    ca = next(a for a in await _actions(client, uri, LOOP_LINE, 8)
              if _base(a.title) == "Split loop 'i' into 32 x 4")
    ca = await client.code_action_resolve_async(ca)
    replace_all(client, uri, _apply(text, ca.edit.changes[uri]), 2, text)
    show = T.ExecuteCommandParams(command="tirkit.showTrace", arguments=[uri])
    py = await client.workspace_execute_command_async(show)
    assert py.count("sch.split(") == 1, py
    await client.workspace_execute_command_async(T.ExecuteCommandParams(
        command=ca.command.command, arguments=ca.command.arguments))
    assert await client.workspace_execute_command_async(show) == py

RACY = '''from tvm.script import tir as T


@T.prim_func
def rowsum(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        for k in T.parallel(8):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]
'''


async def test_quick_fix_makes_the_racy_loop_serial(client):
    from lsp_helpers import wait_diagnostics
    uri = MATMUL.as_uri().replace("matmul.py", "racy_rowsum.py")
    open_doc(client, uri, RACY)
    diags = await wait_diagnostics(
        client, uri, lambda ds: any(d.code == "loop-nest/reduction-on-parallel" for d in ds))
    d = next(d for d in diags if d.code == "loop-nest/reduction-on-parallel")
    acts = await client.text_document_code_action_async(T.CodeActionParams(
        text_document=T.TextDocumentIdentifier(uri=uri), range=d.range,
        context=T.CodeActionContext(diagnostics=[d], only=[T.CodeActionKind.QuickFix])))
    assert [a.title for a in acts] == ["Make loop 'k' serial",
                                       "Ignore loop-nest/reduction-on-parallel on this line"]
    assert acts[0].kind == T.CodeActionKind.QuickFix and acts[0].diagnostics
    ca = await client.code_action_resolve_async(acts[0])
    fixed = _apply(RACY, ca.edit.changes[uri])
    assert "T.parallel" not in fixed
    assert not [x for x in tirkit.check(fixed) if x.severity == "error"]


def _classic(body):
    return "from tvm.script import tir as T\n\n\n" + body


# the rules' own kernels (tests/test_verify_iter_type.py, tests/test_verify_rules.py)
SPATIAL_SUM = _classic(ROWSUM)
NO_INIT = _classic(without_init())
RUNNING = _classic(SHIFT)
ROWS = _classic(FOUR)


async def test_quick_fix_declares_the_accumulated_iterator_a_reduction(client):
    from lsp_helpers import wait_diagnostics
    uri = MATMUL.as_uri().replace("matmul.py", "spatial_sum.py")
    open_doc(client, uri, SPATIAL_SUM)
    diags = await wait_diagnostics(
        client, uri, lambda ds: any(d.code == "signature/iter-type" for d in ds))
    d = next(d for d in diags if d.code == "signature/iter-type")
    assert (d.range.start.line, d.range.start.character) == (8, 16)      # `vj`
    acts = await client.text_document_code_action_async(T.CodeActionParams(
        text_document=T.TextDocumentIdentifier(uri=uri), range=d.range,
        context=T.CodeActionContext(diagnostics=[d], only=[T.CodeActionKind.QuickFix])))
    assert [a.title for a in acts] == ["Declare `vj` a reduction iterator",
                                       "Ignore signature/iter-type on this line"]
    assert acts[0].is_preferred and acts[0].kind == T.CodeActionKind.QuickFix
    (edit,) = acts[0].edit.changes[uri]           # one letter: "SS" -> "SR"
    assert (edit.range.start.line, edit.range.start.character, edit.range.end.character,
            edit.new_text) == (8, 36, 37, "R")
    fixed = _apply(SPATIAL_SUM, [edit])
    assert 'T.axis.remap("SR", [i, j])' in fixed
    assert not [x for x in tirkit.check(fixed) if x.severity == "error"]


async def _iter_type_fixes(client, name, text):
    """(the one signature/iter-type diagnostic of `text` opened as `name`, its quick fixes)."""
    from lsp_helpers import wait_diagnostics
    uri = MATMUL.as_uri().replace("matmul.py", name)
    open_doc(client, uri, text)
    diags = await wait_diagnostics(
        client, uri, lambda ds: any(d.code == "signature/iter-type" for d in ds))
    (d,) = [d for d in diags if d.code == "signature/iter-type"]
    acts = await client.text_document_code_action_async(T.CodeActionParams(
        text_document=T.TextDocumentIdentifier(uri=uri), range=d.range,
        context=T.CodeActionContext(diagnostics=[d], only=[T.CodeActionKind.QuickFix])))
    return d, [(a.title, a.edit.changes[uri] if a.edit else None) for a in acts]


async def test_quick_fix_declares_a_scan_where_instances_depend_on_each_other(client):
    d, acts = await _iter_type_fixes(client, "running.py", RUNNING)
    assert (d.range.start.line, d.range.start.character, d.severity) == \
        (8, 12, T.DiagnosticSeverity.Error)
    assert [r.message for r in d.related_information] == [
        "`vi` = 0 writes `A[1]` here", "`vi` = 1 reads `A[1]` here"]
    assert [title for title, _ in acts] == ["Declare `vi` a scan iterator",
                                            "Ignore signature/iter-type on this line"]
    fixed = _apply(RUNNING, acts[0][1])
    assert "vi = T.axis.scan(15, i)" in fixed
    assert not [x for x in tirkit.check(fixed) if x.code == "signature/iter-type"]


async def test_quick_fix_splits_a_remap_to_declare_the_scan(client):
    d, acts = await _iter_type_fixes(client, "rows.py", ROWS)
    assert (d.range.start.line, d.range.start.character) == (8, 20)      # `vi`
    title, (edit,) = acts[0]
    assert title == "Declare `vi` a scan iterator"
    assert (edit.range.start.line, edit.range.end.line) == (8, 9)      # the call wraps
    fixed = _apply(ROWS, [edit])
    assert 'vb, vc = T.axis.remap("SS", [b, c])\n            vi = T.axis.scan(15, i)\n' \
        "            vj = T.axis.spatial(4, j)  # one row after another\n" in fixed
    assert tirkit.check(fixed) == []


async def test_quick_fix_initializes_a_forgotten_accumulator(client):
    from lsp_helpers import wait_diagnostics
    uri = MATMUL.as_uri().replace("matmul.py", "no_init.py")
    open_doc(client, uri, NO_INIT)
    # a data-flow rule: it runs on save (the default mode checks the fast set while typing)
    client.text_document_did_save(T.DidSaveTextDocumentParams(T.TextDocumentIdentifier(uri)))
    diags = await wait_diagnostics(
        client, uri, lambda ds: any(d.code == "dataflow/uncovered-read" for d in ds))
    d = next(d for d in diags if d.code == "dataflow/uncovered-read")
    acts = await client.text_document_code_action_async(T.CodeActionParams(
        text_document=T.TextDocumentIdentifier(uri=uri), range=d.range,
        context=T.CodeActionContext(diagnostics=[d], only=[T.CodeActionKind.QuickFix])))
    assert [a.title for a in acts] == ["Initialize `acc[vi]` to 0 in a T.init()",
                                       "Ignore dataflow/uncovered-read on this line"]
    fixed = _apply(NO_INIT, acts[0].edit.changes[uri])
    assert "            with T.init():\n                acc[vi] = T.float32(0)\n" \
        "            acc[vi] = acc[vi] + A[vi, vk]" in fixed
    assert not [x for x in tirkit.check(fixed) if x.severity == "error"]


UNTOUCHED = '''from tvm.script import tirx as T


@T.prim_func(s_tir=True)
def f(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    temp = T.alloc_buffer((32,), "float32")
    for i in range(16):
        with T.sblock("b"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi] * T.float32(3)
'''


async def test_an_unused_allocation_is_faded_and_its_quick_fix_removes_it(client):
    from lsp_helpers import wait_diagnostics
    uri = MATMUL.as_uri().replace("matmul.py", "untouched.py")
    open_doc(client, uri, UNTOUCHED)
    # a fast rule: reported while typing
    diags = await wait_diagnostics(
        client, uri, lambda ds: any(d.code == "dataflow/unused-buffer" for d in ds))
    (d,) = diags
    assert (d.range.start.line, d.range.start.character, d.range.end.character) == (5, 4, 8)
    assert d.severity == T.DiagnosticSeverity.Warning
    assert list(d.tags) == [T.DiagnosticTag.Unnecessary]
    acts = await client.text_document_code_action_async(T.CodeActionParams(
        text_document=T.TextDocumentIdentifier(uri=uri), range=d.range,
        context=T.CodeActionContext(diagnostics=[d], only=[T.CodeActionKind.QuickFix])))
    assert [a.title for a in acts] == ["Remove the unused allocation of `temp`",
                                       "Ignore dataflow/unused-buffer on this line"]
    assert acts[0].is_preferred
    fixed = _apply(UNTOUCHED, acts[0].edit.changes[uri])
    assert fixed == UNTOUCHED.replace('    temp = T.alloc_buffer((32,), "float32")\n', "")
    assert tirkit.check(fixed) == []
