"""The cost model in the editor: predicted time in the kernel hover and code lens beside the
roofline estimate, predicted speed-ups in schedule action titles, fastest first."""
from __future__ import annotations

import re

import pytest
from lsprotocol import types as T

import tirkit
from tirkit.analysis.cost import format_seconds, kernel_costs, roofline_seconds
from tirkit.cost.model import CostModel
from tirkit.cost.predict import predict_kernels
from conftest import ROOT
from lsp_helpers import example, open_doc, vscode_client

pytest.importorskip("xgboost")
pytestmark = pytest.mark.asyncio(loop_scope="module")

client = vscode_client()
MATMUL = example("valid/matmul.py")
PARTIAL = ROOT / "tests" / "data" / "partial" / "undefined_beside_sound.py"


def expected():
    func = tirkit.parse(MATMUL.read_text()).module.prim_funcs()[0][1]
    (p,) = predict_kernels([func])
    roof = format_seconds(roofline_seconds(kernel_costs(func).total, "llvm"))
    return func, p, roof


async def test_the_shipped_model_loads():
    m = CostModel.default()
    assert m is not None and m.machine
    func, p, _ = expected()
    assert p is not None and 1e-7 < p < 10


async def test_hover_and_code_lens_show_the_prediction(client):
    func, p, roof = expected()
    uri = MATMUL.as_uri()
    open_doc(client, uri, MATMUL.read_text())
    lines = MATMUL.read_text().split("\n")
    line = next(i for i, ln in enumerate(lines) if "def matmul(" in ln)
    h = await client.text_document_hover_async(T.HoverParams(
        T.TextDocumentIdentifier(uri), T.Position(line, lines[line].index("matmul") + 1)))
    assert f"- predicted {format_seconds(p)} (model), roofline {roof}" in h.contents.value
    lens = await client.text_document_code_lens_async(
        T.CodeLensParams(T.TextDocumentIdentifier(uri)))
    assert lens[0].command.title == \
        f"4,194,304 FLOPs · predicted {format_seconds(p)} (model), roofline {roof} on llvm"


async def test_schedule_actions_carry_speedups_fastest_first(client):
    uri = MATMUL.as_uri()
    open_doc(client, uri, MATMUL.read_text())
    acts = await client.text_document_code_action_async(T.CodeActionParams(
        text_document=T.TextDocumentIdentifier(uri),
        range=T.Range(T.Position(10, 8), T.Position(10, 8)),
        context=T.CodeActionContext(diagnostics=[], only=[T.CodeActionKind.RefactorRewrite])))
    speed = []
    for a in acts:
        m = re.search(r" — predicted (\d+\.\d)x (faster|slower)$", a.title)
        assert m, a.title
        v = float(m.group(1))
        speed.append(v if m.group(2) == "faster" else 1 / v)
    assert len(speed) >= 4
    assert speed == sorted(speed, reverse=True)
    # the figure is the model's: base time over the time of the kernel the action makes
    from tirkit.schedule.actions import Action, run
    mod = tirkit.parse(MATMUL.read_text()).module
    first = Action.from_json(acts[0].data["action"])
    new = run(mod, first).mod["matmul"]
    base_s, new_s = predict_kernels([mod["matmul"], new])
    assert f"{base_s / new_s:.1f}x" in acts[0].title or f"{new_s / base_s:.1f}x" in acts[0].title


async def test_no_prediction_for_a_kernel_holding_errors(client):
    """A kernel with an undefined name is partial IR: hover and lens give it no FLOPs,
    estimate or predicted time; the sound kernel beside it keeps its figures."""
    text = PARTIAL.read_text()
    uri = PARTIAL.as_uri()
    open_doc(client, uri, text)
    lines = text.split("\n")
    (p,) = predict_kernels([tirkit.parse(text).module["sound"]])

    async def hover(name):
        line = next(i for i, ln in enumerate(lines) if f"def {name}(" in ln)
        h = await client.text_document_hover_async(T.HoverParams(
            T.TextDocumentIdentifier(uri), T.Position(line, lines[line].index(name) + 1)))
        return h.contents.value
    bad = await hover("undefined")
    assert "**kernel** `undefined`" in bad and "diagnostics: 1 (1 error)" in bad
    assert "- FLOPs, time and blocks: not estimated (the kernel has errors)" in bad
    assert "predicted" not in bad and "- FLOPs:" not in bad and "estimated time" not in bad
    block = next(i for i, ln in enumerate(lines) if 'T.block("U")' in ln)
    h = await client.text_document_hover_async(T.HoverParams(
        T.TextDocumentIdentifier(uri), T.Position(block, lines[block].index('"U"') + 1)))
    assert "**block** `U` in `undefined`" in h.contents.value
    assert "**cost**: not estimated (the kernel has errors)" in h.contents.value
    assert "FLOPs" not in h.contents.value and "(inferred)" not in h.contents.value

    async def loop_hover(kernel):       # on `i` of the kernel's `for i in range(...)`
        line = next(i for i, ln in enumerate(lines)
                    if "for i in" in ln and i > lines.index(next(
                        ln for ln in lines if f"def {kernel}(" in ln)))
        h = await client.text_document_hover_async(T.HoverParams(
            T.TextDocumentIdentifier(uri), T.Position(line, lines[line].index("i in"))))
        return h.contents.value
    assert (await loop_hover("undefined")).endswith(
        "- total trip count under it: not estimated (the kernel has errors)")
    assert (await loop_hover("sound")).endswith("- total trip count under it: 64")
    hints = await client.text_document_inlay_hint_async(T.InlayHintParams(
        T.TextDocumentIdentifier(uri), T.Range(T.Position(0, 0), T.Position(len(lines), 0))))
    labels = [(h.position.line, h.label) for h in hints]
    loops = [i for i, ln in enumerate(lines) if "for i in" in ln]
    assert [x for x in labels if x[1].endswith(" iterations")] == [(loops[1], " 64 iterations")]
    assert (loops[0] + 2, ": spatial [0, 16)") in labels     # the iterator's domain stays
    good = await hover("sound")
    assert f"- predicted {format_seconds(p)} (model)" in good and "- FLOPs: 64" in good
    lens = await client.text_document_code_lens_async(
        T.CodeLensParams(T.TextDocumentIdentifier(uri)))
    titles = [(x.range.start.line, x.command.title) for x in lens]
    assert titles[0] == (lines.index(next(ln for ln in lines if "def undefined(" in ln)),
                         "not estimated (the kernel has errors)")
    assert titles[1][0] == lines.index(next(ln for ln in lines if "def sound(" in ln))
    assert titles[1][1].startswith("64 FLOPs · predicted ")
    assert f"predicted {format_seconds(p)} (model)" in titles[1][1]
