"""The project's view of a document's diagnostics, and the quick fixes "Ignore CODE on this
line" and "Remove unused suppression".

Diagnostics go through the core's project pipeline (`tirkit.project.pipeline.finish`): the
configuration's `select`/`ignore`/`per-file-ignores` and the file's `# tirkit: ignore`
comments apply, and `suppression/unused` is reported (with `warn-unused-ignores`) on the
full rule set only.  The quick fix is offered for every diagnostic of the request; it adds
the code to the line's `# tirkit: ignore[...]` comment or appends one
(`tirkit.project.suppress.add_ignore`); a `suppression/unused` diagnostic offers to remove
its pattern (`remove_unused`).  The diagnostics and code-action features call this
module; it registers no handler of its own.
"""
from __future__ import annotations

from lsprotocol import types as T

from tirkit.project.pipeline import finish
from tirkit.project.suppress import UNUSED, add_ignore, remove_unused

from .configuration import project_config


def visible_diagnostics(server, a, full: bool, pause=None) -> list:
    """The core diagnostics the project reports for analysis `a` (`pause`: see
    `Analysis.diagnostics`)."""
    if not a.has_kernels:
        return []
    cfg = project_config(server, a.path)
    dirs = tuple(server.settings.intrinsics) + tuple(cfg.intrinsics)    # document_intrinsics
    return finish(a.text, a.diagnostics(full, cfg.target, dirs, pause), cfg, a.path, complete=full)


def config_key(server, a) -> str:
    """What besides the document decides its diagnostics (for pull result ids)."""
    return project_config(server, a.path).fingerprint()


def ignore_fixes(server, a, diagnostics) -> list:
    """[CodeAction] "Ignore CODE on this line" (or "Remove unused suppression"), one per code
    and line of `diagnostics`."""
    out, seen = [], set()
    lines = a.text.split("\n")
    for d in diagnostics or []:
        code = str(d.code) if d.code is not None else ""
        if not code or d.source not in (None, "tirkit"):
            continue
        line0 = d.range.start.line
        key = (code, line0, d.range.start.character if code == UNUSED else 0)
        if key in seen or not 0 <= line0 < len(lines):
            continue
        seen.add(key)
        old = lines[line0]
        conv = server.converter(a)
        if code == UNUSED:
            title = "Remove unused suppression"
            new = remove_unused(old, conv.line_col(d.range.start)[1],
                                conv.line_col(d.range.end)[1])
        else:
            title = f"Ignore {code} on this line"
            new = add_ignore(old, code)
        if new == old:
            continue
        rng = T.Range(T.Position(line0, 0),
                      T.Position(line0, conv.to_client_char(line0, len(old))))
        out.append(T.CodeAction(
            title=title, kind=T.CodeActionKind.QuickFix,
            diagnostics=[d],
            edit=T.WorkspaceEdit(changes={a.uri: [T.TextEdit(range=rng, new_text=new)]})))
    return out
