"""The real server reads the project's configuration file (found by walking up from the
document), the editor's settings override it, suppression comments apply, and the quick fix
"Ignore CODE on this line" silences a diagnostic."""
from __future__ import annotations

import pytest
from lsprotocol import types as T

from lsp_helpers import codes, open_doc, replace_all, vscode_client, wait_diagnostics
from test_project_config import SMEM
from test_project_suppress import TWO, on_line, write

pytestmark = pytest.mark.asyncio(loop_scope="module")

# the editor says: every rule on each change, and target cuda-sm80
client = vscode_client({"tirkit": {"diagnostics": {"mode": "onChange"},
                                   "target": "cuda-sm80"}})


async def test_file_configuration_and_suppressions_apply(client, tmp_path):
    write(tmp_path / "pyproject.toml",
          '[tool.tirkit]\nignore = ["type/"]\nwarn-unused-ignores = true\n')
    text = on_line(TWO, 10, "  # tirkit: ignore[bounds/out-of-bounds, thread/]")
    uri = (tmp_path / "pkg" / "k.py").as_uri()
    open_doc(client, uri, text)
    diags = await wait_diagnostics(client, uri, lambda ds: len(ds) > 0)
    assert codes(diags) == [(8, "bounds/out-of-bounds"), (9, "suppression/unused")]
    unused = next(d for d in diags if d.code == "suppression/unused")
    line = text.split("\n")[9]
    assert line[unused.range.start.character:unused.range.end.character] == "thread/"
    assert unused.severity == T.DiagnosticSeverity.Warning
    # text that does nothing: the editor fades it; the out-of-bounds error is not faded
    assert list(unused.tags) == [T.DiagnosticTag.Unnecessary]
    assert next(d for d in diags if d.code == "bounds/out-of-bounds").tags is None
    # without a configuration file: the defaults (type/mismatch reported, no unused report)
    other = (tmp_path.parent / f"{tmp_path.name}-bare" / "k.py")
    open_doc(client, other.as_uri(), text)
    diags = await wait_diagnostics(client, other.as_uri(), lambda ds: len(ds) > 0)
    if not any(p.name in ("pyproject.toml", "tirkit.toml") for p in other.parents):
        assert codes(diags) == [(8, "bounds/out-of-bounds"), (8, "type/mismatch")]


async def test_editor_settings_override_the_file(client, tmp_path):
    write(tmp_path / "tirkit.toml", 'target = "cuda-sm90"\n')
    uri = (tmp_path / "smem.py").as_uri()
    open_doc(client, uri, SMEM)          # 200 KB of shared memory: fits sm90, not sm80
    diags = await wait_diagnostics(client, uri, lambda ds: len(ds) > 0)
    assert codes(diags) == [(8, "thread/shared-memory-limit")]


async def test_quick_fix_ignores_the_code_on_its_line(client, tmp_path):
    write(tmp_path / "tirkit.toml", "warn-unused-ignores = true\n")
    uri = (tmp_path / "k.py").as_uri()
    open_doc(client, uri, TWO)
    diags = await wait_diagnostics(client, uri, lambda ds: len(ds) == 3)
    d = next(x for x in diags if x.code == "bounds/out-of-bounds" and x.range.start.line == 9)
    acts = await client.text_document_code_action_async(T.CodeActionParams(
        text_document=T.TextDocumentIdentifier(uri=uri), range=d.range,
        context=T.CodeActionContext(diagnostics=[d], only=[T.CodeActionKind.QuickFix])))
    ignore = [a for a in acts if a.title == "Ignore bounds/out-of-bounds on this line"]
    assert len(ignore) == 1 and ignore[0].kind == T.CodeActionKind.QuickFix
    (edit,) = ignore[0].edit.changes[uri]
    assert edit.range.start == T.Position(9, 0) and edit.range.end.line == 9
    assert edit.new_text == TWO.split("\n")[9] + "  # tirkit: ignore[bounds/out-of-bounds]"
    lines = TWO.split("\n")
    lines[9] = edit.new_text
    fixed = "\n".join(lines)
    replace_all(client, uri, fixed, 2, TWO)
    diags = await wait_diagnostics(client, uri, lambda ds: len(ds) == 2)
    assert codes(diags) == [(8, "bounds/out-of-bounds"), (8, "type/mismatch")]


async def test_editor_settings_map_to_configuration_overrides(tmp_path):
    from tirkit_lsp.features.configuration import editor_overrides
    from tirkit.project.config import resolve
    over = editor_overrides({"target": "llvm", "select": ["bounds/"], "ignore": "type/",
                             "warnUnusedIgnores": True,
                             "constants": {"inlineThreshold": 8}, "diagnostics": {}})
    assert over == {"target": "llvm", "select": ["bounds/"], "ignore": "type/",
                    "warn_unused_ignores": True, "inline_threshold": 8}
    write(tmp_path / "tirkit.toml", 'target = "cuda-sm90"\nignore = ["name/"]\n'
          'select = ["all"]\n[constants]\ninline-threshold = 100\n')
    cfg = resolve(tmp_path / "k.py", **over)
    assert cfg.target == "llvm" and cfg.select == ("bounds/",)
    assert cfg.ignore == ("name/", "type/") and cfg.inline_threshold == 8
    assert resolve(tmp_path / "k.py").target == "cuda-sm90"
    assert editor_overrides({"constants.inlineThreshold": 3}) == {"inline_threshold": 3}


async def test_quick_fix_removes_an_unused_suppression(client, tmp_path):
    write(tmp_path / "tirkit.toml", "warn-unused-ignores = true\n")
    text = on_line(TWO, 9, "  # tirkit: ignore[bounds/out-of-bounds, thread/]")
    uri = (tmp_path / "k.py").as_uri()
    open_doc(client, uri, text)
    diags = await wait_diagnostics(client, uri, lambda ds: any(
        d.code == "suppression/unused" for d in ds))
    d = next(x for x in diags if x.code == "suppression/unused")
    acts = await client.text_document_code_action_async(T.CodeActionParams(
        text_document=T.TextDocumentIdentifier(uri=uri), range=d.range,
        context=T.CodeActionContext(diagnostics=[d], only=[T.CodeActionKind.QuickFix])))
    (fix,) = [a for a in acts if a.title == "Remove unused suppression"]
    (edit,) = fix.edit.changes[uri]
    assert edit.range.start == T.Position(8, 0)
    assert edit.new_text == TWO.split("\n")[8] + "  # tirkit: ignore[bounds/out-of-bounds]"
