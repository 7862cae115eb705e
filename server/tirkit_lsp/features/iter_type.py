"""The quick fix of `signature/iter-type` where a block accumulates over a spatial iterator:
"Declare `vj` a reduction iterator" turns its letter of `T.axis.remap("SS", ...)` into "R"
(or `T.axis.spatial` into `T.axis.reduce`), the edit the core computes
(`tirkit.verify.iter_type.reduction_edit`).  The program runs as before: a loop nest runs
its instances in the same order whatever their declared kinds; only the signature stops
claiming that they are independent.  No `T.init()` is added, as that would change what the
kernel computes.  The code-action feature calls this module; it registers no handler."""
from __future__ import annotations

from lsprotocol import types as T

from tirkit.verify.iter_type import CODE, reduction_edit


def quick_fixes(server, a, diagnostics) -> list:
    """[CodeAction] for each `signature/iter-type` error of `diagnostics` whose iterator is
    declared in one of the forms `reduction_edit` knows."""
    out = []
    lines = a.text.split("\n")
    conv = server.converter(a)
    for d in diagnostics or []:
        if str(d.code) != CODE or d.source not in (None, "tirkit") or \
                d.severity != T.DiagnosticSeverity.Error:
            continue
        line, col = conv.line_col(d.range.start)
        edit = reduction_edit(lines, line, col)
        if edit is None:
            continue
        ln, start, end, new = edit
        end_line, end_col = conv.line_col(d.range.end)
        name = lines[line - 1][col - 1:end_col - 1] if end_line == line else ""
        rng = T.Range(T.Position(ln - 1, conv.to_client_char(ln - 1, start - 1)),
                      T.Position(ln - 1, conv.to_client_char(ln - 1, end - 1)))
        out.append(T.CodeAction(
            title=f"Declare `{name}` a reduction iterator" if name.isidentifier()
            else "Declare the iterator a reduction iterator",
            kind=T.CodeActionKind.QuickFix, diagnostics=[d], is_preferred=True,
            edit=T.WorkspaceEdit(changes={a.uri: [T.TextEdit(range=rng, new_text=new)]})))
    return out
