""""Tune this kernel" over stdio: the code lens and its command, work-done progress with the
best time so far, cancellation, and the one edit that applies the best schedule (the file
then checks clean and runs correctly)."""
from __future__ import annotations

import asyncio
import sys

import pytest
import pytest_lsp
from lsprotocol import types as T
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

import tirkit
from conftest import server_env
from lsp_helpers import open_doc

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent.parent / "tune"))
from tune_util import MATMUL, parsed, run_matmul  # noqa: E402

pytest.importorskip("llvmlite")
pytestmark = pytest.mark.asyncio(loop_scope="module")

EDITS: list = []


@pytest_lsp.fixture(scope="module", config=ClientServerConfig(
    server_command=[sys.executable, "-m", "tirkit_lsp"], server_env=server_env()))
async def client(lsp_client: LanguageClient):
    @lsp_client.feature(T.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: T.ApplyWorkspaceEditParams):
        EDITS.append(params.edit)
        return T.ApplyWorkspaceEditResult(applied=True)

    await lsp_client.initialize_session(T.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"),
        initialization_options={"tirkit": {"tune": {"codeLens": True, "trials": 4}}}))
    yield
    await lsp_client.shutdown_session()


def apply_edits(text, edits):
    lines = text.split("\n")
    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character),
                    reverse=True):
        s, t = e.range.start, e.range.end
        head = "\n".join(lines[:s.line] + [lines[s.line][:s.character]]) if s.line < len(lines) \
            else "\n".join(lines)
        tail_line = lines[t.line][t.character:] if t.line < len(lines) else ""
        tail = "\n".join([tail_line] + lines[t.line + 1:])
        lines = (head + e.new_text + tail).split("\n")
    return "\n".join(lines)


def tune_reports(client):
    return {k: v for k, v in client.progress_reports.items() if str(k).startswith("tirkit-tune-")}


async def test_tune_lens_progress_and_edit(client):
    uri = "file:///tmp/tirkit_tune_mm.py"
    open_doc(client, uri, MATMUL)
    lenses = await client.text_document_code_lens_async(T.CodeLensParams(
        T.TextDocumentIdentifier(uri)))
    tune = [c for c in lenses if c.command.title == "Tune this kernel"]
    assert len(tune) == 1 and tune[0].command.command == "tirkit.tuneKernel"
    assert list(tune[0].command.arguments) == [uri, "mm"] and tune[0].range.start.line == 4
    before = set(tune_reports(client))
    EDITS.clear()
    res = await client.workspace_execute_command_async(T.ExecuteCommandParams(
        command="tirkit.tuneKernel", arguments=list(tune[0].command.arguments)))
    assert res["applied"] is True and res["trials"] == 4 and res["best_ms"] > 0
    assert "4 measured" in res["summary"]
    (token,) = set(tune_reports(client)) - before
    reps = client.progress_reports[token]
    assert reps[0].kind == "begin" and reps[0].cancellable and reps[0].title == "Tuning mm"
    steps = [r.message for r in reps if r.kind == "report"]
    assert steps and steps[-1].startswith("4/4 trials, best ") and "GFLOP/s" in steps[-1]
    assert reps[-1].kind == "end" and "(applied)" in reps[-1].message
    assert len(EDITS) == 1
    new = apply_edits(MATMUL, EDITS[0].changes[uri])
    assert new != MATMUL
    assert [d.code for d in tirkit.check(new) if d.severity == "error"] == []
    assert run_matmul(parsed(new).module) < 1e-5


async def test_tune_can_be_cancelled(client):
    uri = "file:///tmp/tirkit_tune_cancel.py"
    open_doc(client, uri, MATMUL)
    before = set(tune_reports(client))
    EDITS.clear()
    task = asyncio.ensure_future(client.workspace_execute_command_async(T.ExecuteCommandParams(
        command="tirkit.tuneKernel", arguments=[uri, "mm", {"trials": 500}])))
    token = None
    for _ in range(1200):
        new = set(tune_reports(client)) - before
        if new:
            token = next(iter(new))
            if any(r.kind == "report" for r in client.progress_reports[token]):
                break
        await asyncio.sleep(0.05)
    assert token is not None
    client.window_work_done_progress_cancel(T.WorkDoneProgressCancelParams(token=token))
    res = await asyncio.wait_for(task, 120)
    assert res["cancelled"] is True and res["applied"] is False and 0 < res["trials"] < 500
    assert client.progress_reports[token][-1].message == "cancelled"
    assert EDITS == []


async def test_tune_unknown_kernel_answers_a_message(client):
    uri = "file:///tmp/tirkit_tune_mm.py"
    res = await client.workspace_execute_command_async(T.ExecuteCommandParams(
        command="tirkit.tuneKernel", arguments=[uri, "nope"]))
    assert res == {"message": "no kernel named 'nope' in this file"}



async def test_no_tuning_of_a_kernel_holding_errors(client):
    """A kernel with an undefined name (partial IR) gets no "Tune this kernel" lens, and the
    command refuses it at once; the sound kernel beside it keeps its lens."""
    broken = MATMUL.replace("def mm(", "def broken(").replace('"mm"', '"broken"') \
        .replace("A[vi, vk]", "Q[vi, vk]")
    assert "Q[vi, vk]" in broken
    text = broken + "\n\n" + MATMUL.split("\n", 1)[1]
    uri = "file:///tmp/tirkit_tune_broken.py"
    open_doc(client, uri, text)
    lens = await client.text_document_code_lens_async(
        T.CodeLensParams(T.TextDocumentIdentifier(uri)))
    tunes = [x.command.arguments[1] for x in lens if x.command.title == "Tune this kernel"]
    assert tunes == ["mm"]
    res = await client.workspace_execute_command_async(T.ExecuteCommandParams(
        command="tirkit.tuneKernel", arguments=[uri, "broken"]))
    assert res == {"message": "'broken' has errors: fix them before tuning it"}
