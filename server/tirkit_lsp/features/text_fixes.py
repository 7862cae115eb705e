"""Quick fixes that are text edits, computed by the core (`tirkit.verify.fixes`): "Declare
`vj` a reduction iterator" for a block that accumulates over a spatial iterator
(`signature/iter-type`), "Initialize `acc[vi]` to 0 in a T.init()" for a block that updates
an allocated buffer it never initialized (`dataflow/uncovered-read`), "Convert `B[i]` to
float32 with T.Cast" for a scalar passed to a module function as another dtype than its
parameter's (`type/mismatch`), "Remove the unused allocation of `temp`" for a buffer nothing
touches and "Remove `Z` and block 'rowsum'" for one nothing reads (`dataflow/unused-buffer`), "Make loop 'i' serial" for a `T.parallel` or
`T.vectorized` loop whose iterations depend on each other (`loop-nest/parallel-race`,
`loop-nest/vector-dependence`).  Each carries its edit
(no resolve step) and is the preferred fix of its diagnostic.  The code-action feature calls
this module; it registers no handler."""
from __future__ import annotations

from lsprotocol import types as T

from tirkit.verify.fixes import text_fixes

_SEVERITY = {T.DiagnosticSeverity.Error: "error", T.DiagnosticSeverity.Warning: "warning",
             T.DiagnosticSeverity.Information: "information", T.DiagnosticSeverity.Hint: "hint"}


def quick_fixes(server, a, diagnostics) -> list:
    """[CodeAction] for the diagnostics of the request that have a text fix."""
    out = []
    conv = server.converter(a)
    for d in diagnostics or []:
        if d.source not in (None, "tirkit") or d.code is None:
            continue
        line, col = conv.line_col(d.range.start)
        fixes = text_fixes(a.result, str(d.code), _SEVERITY.get(d.severity, "error"), line, col)
        for fix in fixes:
            edits = []
            for ln, c, end_ln, end_c, new in fix.edits:
                edits.append(T.TextEdit(
                    range=T.Range(T.Position(ln - 1, conv.to_client_char(ln - 1, c - 1)),
                                  T.Position(end_ln - 1,
                                             conv.to_client_char(end_ln - 1, end_c - 1))),
                    new_text=new))
            out.append(T.CodeAction(title=fix.title, kind=T.CodeActionKind.QuickFix,
                                    diagnostics=[d], is_preferred=True,
                                    edit=T.WorkspaceEdit(changes={a.uri: edits})))
    return out
