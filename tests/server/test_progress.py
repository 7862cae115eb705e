"""Work over the progress threshold (a second by default) is reported with work-done
progress, begin ... end."""
from __future__ import annotations

import asyncio
import time

import pytest
from lsprotocol import types as T

from lsp_helpers import many_kernels, open_doc, vscode_client

pytestmark = pytest.mark.asyncio(loop_scope="module")


# progress is reported for work over `progressAfterMs` (a second by default); a low
# threshold makes the analysis of a 1,500-line file cross it on any machine
client = vscode_client(initialization_options={"tirkit": {"progressAfterMs": 50}})


async def test_progress_for_slow_analysis(client):
    text = many_kernels(100)                # about 1,500 lines
    uri = "file:///tmp/tirkit_big.py"
    open_doc(client, uri, text)
    t0 = time.perf_counter()
    res = await client.text_document_code_lens_async(T.CodeLensParams(
        T.TextDocumentIdentifier(uri)))
    took = time.perf_counter() - t0
    assert len(res) == 100 and res[0].command.title.startswith("4,194,304 FLOPs")
    assert took > 0.05
    # the rules of the open run apart from the code lenses: let their report end too
    for _ in range(600):
        reports = list(client.progress_reports.values())
        # a token is listed as soon as it is created, before its first report arrives
        if reports and all(r and r[-1].kind == "end" for r in reports):
            break
        await asyncio.sleep(0.05)
    assert reports and all(r[0].kind == "begin" and r[-1].kind == "end" for r in reports)
    assert {r[0].title for r in reports} <= {"tirkit: analysing", "tirkit: code lenses",
                                            "tirkit: lsp diagnostics"}
