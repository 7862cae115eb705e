"""The functions of an `@I.ir_module` in the editor over stdio: `Module.f` in a call goes to
f's `def`, f's references are its `def` and every call, renaming it edits them all (and is
refused where another function has the name), and hover on a call gives f's signature and
its callers."""
from __future__ import annotations

import pytest
from lsprotocol import types as T
from pygls.exceptions import JsonRpcException

import tirkit
from call_texts import SIZED
from lsp_helpers import open_doc, vscode_client, wait_diagnostics
from test_features import apply_edits

pytestmark = pytest.mark.asyncio(loop_scope="module")

client = vscode_client()

URI = "file:///tmp/tirkit_module_functions.py"
TEXT = '''from tvm.script import ir as I
from tvm.script import tir as T


@I.ir_module
class Module:
    @T.prim_func
    def main(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "int32"),
             C: T.Buffer((64,), "float32")):
        for i in range(64):
            C[i] = Module.scale(A[i], B[i]) + Module.scale(A[i], 0)

    @T.prim_func(private=True)
    def scale(a: T.float32, b: T.int32) -> T.float32:
        if b > 0:
            return a * T.float32(2)
        return a - T.float32(1)

    @T.prim_func
    def twice(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "int32")):
        for i in range(64):
            A[i] = Module.scale(A[i], B[i])
'''
LINES = TEXT.split("\n")
CALL, DEF, OTHER = 10, 13, 21           # 0-based lines: two calls, the def, a third call


def at(line, word, nth=0):
    """The position of the nth `word` on a line (0-based), on its second character."""
    col = -1
    for _ in range(nth + 1):
        col = LINES[line].index(word, col + 1)
    return T.Position(line, col + 1)


def spans(locations):
    return sorted((r.range.start.line, r.range.start.character, r.range.end.character)
                  for r in locations)


USES = [(CALL, LINES[CALL].index("scale"), LINES[CALL].index("scale") + 5),
        (CALL, LINES[CALL].rindex("scale"), LINES[CALL].rindex("scale") + 5),
        (DEF, 8, 13),
        (OTHER, LINES[OTHER].index("scale"), LINES[OTHER].index("scale") + 5)]


async def opened(client):
    open_doc(client, URI, TEXT)
    assert [d for d in await wait_diagnostics(client, URI)
            if d.severity == T.DiagnosticSeverity.Error] == []


async def test_a_call_goes_to_the_def(client):
    await opened(client)
    for pos in (at(CALL, "scale"), at(CALL, "scale", 1), at(OTHER, "scale")):
        res = await client.text_document_definition_async(T.DefinitionParams(
            T.TextDocumentIdentifier(URI), pos))
        assert spans(res) == [(DEF, 8, 13)], pos


async def test_references_are_the_def_and_every_call(client):
    await opened(client)
    for pos in (at(DEF, "scale"), at(OTHER, "scale")):
        res = await client.text_document_references_async(T.ReferenceParams(
            text_document=T.TextDocumentIdentifier(URI), position=pos,
            context=T.ReferenceContext(include_declaration=True)))
        assert spans(res) == USES, pos


async def test_rename_edits_the_def_and_every_call(client):
    await opened(client)
    edit = await client.text_document_rename_async(T.RenameParams(
        T.TextDocumentIdentifier(URI), at(CALL, "scale"), "double_or_less"))
    new = apply_edits(TEXT, edit.changes[URI])
    assert "scale" not in new and new.count("double_or_less") == 4
    result = tirkit.parse(new, "m.py")
    assert not [d for d in result.diagnostics if d.severity == "error"]
    assert [n for n, _ in result.module.functions] == ["main", "double_or_less", "twice"]
    for name in ("twice", "main", "for", "2x"):
        with pytest.raises(JsonRpcException):
            await client.text_document_rename_async(T.RenameParams(
                T.TextDocumentIdentifier(URI), at(DEF, "scale"), name))


async def test_hover_gives_the_signature_and_the_callers(client):
    await opened(client)
    for pos in (at(CALL, "scale"), at(OTHER, "scale")):     # (on the def: the kernel's hover)
        h = await client.text_document_hover_async(T.HoverParams(
            T.TextDocumentIdentifier(URI), pos))
        assert h is not None
        assert h.contents.value.split("\n") == [
            "**function** `scale` of `Module` (private)", "",
            "```python",
            "def scale(a: T.float32, b: T.int32) -> T.float32",
            "```", "",
            "- work per call: 2 FLOPs",           # `a * 2` and `a - 1`: both branches count
            "- called from `main` (line 11, twice), `twice` (line 22)"], pos


async def test_completion_after_the_class_name_offers_its_functions(client):
    """`Module.` (the class's own name) completes to the module's functions with their
    signatures; `Module.sc` to those that start so."""
    uri = "file:///tmp/tirkit_module_complete.py"
    typed = TEXT.replace("A[i] = Module.scale(A[i], B[i])", "A[i] = Module.sc")
    open_doc(client, uri, typed)
    line = typed.split("\n")[OTHER]
    for col, want in ((line.index("Module.") + 7, ["main", "scale", "twice"]),
                      (len(line), ["scale"])):
        res = await client.text_document_completion_async(T.CompletionParams(
            T.TextDocumentIdentifier(uri), T.Position(OTHER, col)))
        assert [i.label for i in res.items] == want
        scale = next(i for i in res.items if i.label == "scale")
        assert scale.kind == T.CompletionItemKind.Function
        assert scale.detail == "(a: T.float32, b: T.int32) -> T.float32"
    # the dot just typed: the class does not parse, and its functions are still offered
    uri = "file:///tmp/tirkit_module_complete_dot.py"
    typed = TEXT.replace("A[i] = Module.scale(A[i], B[i])", "A[i] = Module.")
    open_doc(client, uri, typed)
    line = typed.split("\n")[OTHER]
    res = await client.text_document_completion_async(T.CompletionParams(
        T.TextDocumentIdentifier(uri), T.Position(OTHER, len(line))))
    assert [(i.label, i.detail) for i in res.items] == [
        ("main", '(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "int32"), '
                 'C: T.Buffer((64,), "float32"))'),
        ("scale", "(a: T.float32, b: T.int32) -> T.float32"),
        ("twice", '(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "int32"))')]


async def test_the_kernel_hover_of_a_called_function_names_its_callers(client):
    await opened(client)
    h = await client.text_document_hover_async(T.HoverParams(
        T.TextDocumentIdentifier(URI), at(DEF, "scale")))
    lines = h.contents.value.split("\n")
    assert lines[0] == "**kernel** `scale` in `Module`"
    assert "- called from `main` (line 11, twice), `twice` (line 22)" in lines
    h = await client.text_document_hover_async(T.HoverParams(
        T.TextDocumentIdentifier(URI), at(7, "main")))
    assert not any(x.startswith("- called from") for x in h.contents.value.split("\n"))
    # main's FLOPs hold the work of its two calls: per element its `+` and, in each call,
    # `a * 2` or `a - 1` (a returned value counts as a stored one; both branches count)
    assert "- FLOPs: 320" in h.contents.value.split("\n")


async def test_call_hierarchy_gives_the_callers_and_the_callees(client):
    """textDocument/prepareCallHierarchy on a call or a def, then callHierarchy/incomingCalls
    (the functions that call it, with the range of each call) and outgoingCalls (the
    functions it calls)."""
    await opened(client)
    doc = T.TextDocumentIdentifier(URI)
    for pos in (at(CALL, "scale"), at(DEF, "scale")):
        items = await client.text_document_prepare_call_hierarchy_async(
            T.CallHierarchyPrepareParams(doc, pos))
        assert [(i.name, i.kind, i.detail) for i in items] == [
            ("scale", T.SymbolKind.Function, "(a: T.float32, b: T.int32) -> T.float32")]
        (scale,) = items
        assert (scale.selection_range.start.line, scale.selection_range.start.character) == \
            (DEF, 8)
        assert (scale.range.start.line, scale.range.end.line) == (DEF, DEF + 3)
    incoming = await client.call_hierarchy_incoming_calls_async(
        T.CallHierarchyIncomingCallsParams(scale))
    assert [(c.from_.name, spans([T.Location(URI, r) for r in c.from_ranges]))
            for c in incoming] == [("main", USES[:2]), ("twice", USES[3:])]
    (main,) = await client.text_document_prepare_call_hierarchy_async(
        T.CallHierarchyPrepareParams(doc, at(7, "main")))
    outgoing = await client.call_hierarchy_outgoing_calls_async(
        T.CallHierarchyOutgoingCallsParams(main))
    assert [(c.to.name, len(c.from_ranges)) for c in outgoing] == [("scale", 2)]
    assert list(await client.call_hierarchy_incoming_calls_async(
        T.CallHierarchyIncomingCallsParams(main))) == []
    assert await client.text_document_prepare_call_hierarchy_async(
        T.CallHierarchyPrepareParams(doc, at(CALL, "A[i]"))) is None


async def test_signature_help_while_the_arguments_are_typed(client):
    """Inside `Module.f(` the signature of f, its parameters, and the one being typed (the
    class does not parse while the call is open)."""
    uri = "file:///tmp/tirkit_module_signature.py"
    typed = TEXT.replace("A[i] = Module.scale(A[i], B[i])", "A[i] = Module.scale(A[i], ")
    open_doc(client, uri, typed)
    line = typed.split("\n")[OTHER]
    for col, active in ((line.index("(") + 1, 0), (len(line), 1)):
        h = await client.text_document_signature_help_async(T.SignatureHelpParams(
            T.TextDocumentIdentifier(uri), T.Position(OTHER, col)))
        (sig,) = h.signatures
        assert sig.label == "scale(a: T.float32, b: T.int32) -> T.float32"
        assert [p.label for p in sig.parameters] == ["a: T.float32", "b: T.int32"]
        assert (h.active_signature, h.active_parameter) == (0, active)
    assert await client.text_document_signature_help_async(T.SignatureHelpParams(
        T.TextDocumentIdentifier(uri), T.Position(OTHER, line.index("A[i]")))) is None


async def test_a_scalar_of_another_dtype_has_the_convert_quick_fix(client):
    """`twice` passes B[i] (int32) where scale takes a float32: an error at the argument
    while typing, and the preferred quick fix wraps it in T.Cast; the fixed text checks
    clean."""
    uri = URI.replace(".py", "_convert.py")
    text = TEXT.replace("Module.scale(A[i], B[i])\n", "Module.scale(B[i], B[i])\n")
    assert text.count("Module.scale(B[i], B[i])") == 1
    open_doc(client, uri, text)
    diags = await wait_diagnostics(client, uri, lambda ds: any(
        d.code == "type/mismatch" and d.severity == T.DiagnosticSeverity.Error for d in ds))
    (d,) = [d for d in diags if d.severity == T.DiagnosticSeverity.Error]
    line = LINES[OTHER].replace("A[i], B[i]", "B[i], B[i]")
    col = line.index("B[i], B[i]")
    assert (d.range.start.line, d.range.start.character, d.range.end.character) == (
        OTHER, col, col + 4)
    acts = await client.text_document_code_action_async(T.CodeActionParams(
        text_document=T.TextDocumentIdentifier(uri=uri), range=d.range,
        context=T.CodeActionContext(diagnostics=[d], only=[T.CodeActionKind.QuickFix])))
    assert [a.title for a in acts] == ["Convert `B[i]` to float32 with T.Cast",
                                       "Ignore type/mismatch on this line"]
    assert acts[0].is_preferred
    fixed = apply_edits(text, acts[0].edit.changes[uri])
    assert 'Module.scale(T.Cast("float32", B[i]), B[i])' in fixed
    assert [x for x in tirkit.check(fixed) if x.severity == "error"] == []


async def test_inlay_hints_name_the_parameters_of_a_call(client):
    """Before each argument of a call `Module.f(...)`, f's parameter name (a `T.Buffer`
    parameter's is its buffer's), as rust-analyzer shows them; none where the argument is
    written as the parameter's name."""
    await opened(client)
    res = await client.text_document_inlay_hint_async(T.InlayHintParams(
        T.TextDocumentIdentifier(URI), T.Range(T.Position(0, 0), T.Position(len(LINES), 0))))
    hints = sorted((h.position.line, h.position.character, h.label) for h in res
                   if h.kind == T.InlayHintKind.Parameter)
    row, other = LINES[CALL], LINES[OTHER]
    first, second = row.index("scale(") + 6, row.rindex("scale(") + 6
    assert hints == [(CALL, first, "a:"), (CALL, row.index("B[i]"), "b:"),
                     (CALL, second, "a:"), (CALL, row.index("0)"), "b:"),
                     (OTHER, other.index("scale(") + 6, "a:"),
                     (OTHER, other.index("B[i]"), "b:")]
    assert all(h.padding_right for h in res if h.kind == T.InlayHintKind.Parameter)
    uri = URI.replace(".py", "_named.py")
    text = TEXT.replace("Module.scale(A[i], B[i])\n", "Module.scale(A[i], b)\n").replace(
        "        for i in range(64):\n            A[i]", "        for b in range(64):\n"
        "            A[b]")
    assert "A[b] = Module.scale(A[i], b)" in text
    text = text.replace("A[b] = Module.scale(A[i], b)", "A[b] = Module.scale(A[b], b)")
    open_doc(client, uri, text)
    await wait_diagnostics(client, uri)
    res = await client.text_document_inlay_hint_async(T.InlayHintParams(
        T.TextDocumentIdentifier(uri), T.Range(T.Position(OTHER, 0), T.Position(OTHER + 1, 0))))
    assert [h.label for h in res if h.kind == T.InlayHintKind.Parameter] == ["a:"]


async def test_hover_gives_the_work_of_a_function_that_loops_over_a_size_it_is_passed(client):
    """In its parameter's name: the caller's count puts the call's argument there.  The
    caller's hover gives its time on the roofline, and no prediction of the cost model."""
    uri = "file:///tmp/tirkit_module_sized.py"
    text = SIZED.format(second=16)
    open_doc(client, uri, text)
    assert [d for d in await wait_diagnostics(client, uri)
            if d.severity == T.DiagnosticSeverity.Error] == []
    line = text.split("\n")[9]
    h = await client.text_document_hover_async(T.HoverParams(
        T.TextDocumentIdentifier(uri), T.Position(9, line.index("row_sum") + 1)))
    lines = h.contents.value.split("\n")
    # per iteration: Y[0] and X[j] read, Y[0] written; once: Y[0] = 0 written
    assert "- work per call: n FLOPs, 12·n + 4 bytes read and written" in lines, lines
    h = await client.text_document_hover_async(T.HoverParams(
        T.TextDocumentIdentifier(uri), T.Position(7, 9)))
    assert "- FLOPs: 2,048" in h.contents.value.split("\n")      # 128 calls of 16
    # the cost model reads a kernel's own statements, not its callees': no prediction
    assert "predicted" not in h.contents.value and "- estimated time on llvm" in h.contents.value
