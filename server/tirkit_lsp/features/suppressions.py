"""The project's view of a document's diagnostics, and the quick fix "Ignore CODE on this
line".

Diagnostics go through the core's project pipeline (`tirkit.project.pipeline.finish`): the
configuration's `select`/`ignore`/`per-file-ignores` and the file's `# tirkit: ignore`
comments apply, and `suppression/unused` is reported (with `warn-unused-ignores`) on the
full rule set only.  The quick fix is offered for every diagnostic of the request; it adds
the code to the line's `# tirkit: ignore[...]` comment or appends one
(`tirkit.project.suppress.add_ignore`).  The diagnostics and code-action features call this
module; it registers no handler of its own.
"""
from __future__ import annotations

from lsprotocol import types as T

from tirkit.project.pipeline import finish
from tirkit.project.suppress import UNUSED, add_ignore

from .configuration import project_config


def visible_diagnostics(server, a, full: bool) -> list:
    """The core diagnostics the project reports for analysis `a`."""
    if not a.has_kernels:
        return []
    cfg = project_config(server, a.path)
    return finish(a.text, a.diagnostics(full, cfg.target), cfg, a.path, complete=full)


def config_key(server, a) -> str:
    """What besides the document decides its diagnostics (for pull result ids)."""
    return project_config(server, a.path).fingerprint()


def ignore_fixes(server, a, diagnostics) -> list:
    """[CodeAction] "Ignore CODE on this line", one per code and line of `diagnostics`."""
    out, seen = [], set()
    lines = a.text.split("\n")
    for d in diagnostics or []:
        code = str(d.code) if d.code is not None else ""
        if not code or code == UNUSED or d.source not in (None, "tirkit"):
            continue
        line0 = d.range.start.line
        if (code, line0) in seen or not 0 <= line0 < len(lines):
            continue
        seen.add((code, line0))
        old = lines[line0]
        new = add_ignore(old, code)
        if new == old:
            continue
        conv = server.converter(a)
        rng = T.Range(T.Position(line0, 0),
                      T.Position(line0, conv.to_client_char(line0, len(old))))
        out.append(T.CodeAction(
            title=f"Ignore {code} on this line", kind=T.CodeActionKind.QuickFix,
            diagnostics=[d],
            edit=T.WorkspaceEdit(changes={a.uri: [T.TextEdit(range=rng, new_text=new)]})))
    return out
