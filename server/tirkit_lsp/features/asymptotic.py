"""Sparse iterations in the editor: hover shows the asymptotic cost of a `T.sp_iter` (and the
cheaper orders, if any); the quick fix of `cost/asymptotically-dominated` rewrites the
iteration in a cheaper order.  The costs and the rewritten text come from the core
(`tirkit.analysis.asymptotic`, `tirkit.sparse.reorder`); hover and code actions call the two
functions here."""
from __future__ import annotations

from lsprotocol import types as T

from tirkit.analysis.asymptotic.iteration import CODE, iteration_at, iteration_cost

from ..render import NOT_ESTIMATED
from .formatting import line_edits


def hover_markdown(func, line: int, partial=False):
    """Markdown for the sparse iteration on or around `line` of func, or None.  `partial`:
    the kernel holds errors, its IR may lack statements, and no cost is given."""
    if func is None or not getattr(func, "sparse_axes", ()):
        return None
    it = iteration_at(func, line)
    if it is None:
        return None
    if partial:
        return (f"**sparse iteration `{it.name}`**\n\n"
                f"asymptotic cost: {NOT_ESTIMATED}")
    r = iteration_cost(func, it)
    if r is None:
        return None
    cur = r.current
    kinds = "".join("R" if v.is_reduction else "S" for v in it.sp_iter_vars)
    text = (f"**sparse iteration `{it.name}`** over [{', '.join(cur.axes)}] (`{kinds}`)\n\n"
            f"asymptotic cost: `{cur.text}`")
    if r.better:
        text += "\n\ncheaper for every sparsity pattern:\n" + "\n".join(
            f"- [{', '.join(b.axes)}]: `{b.text}`" for b in r.better)
    return text


def quick_fixes(server, a, diagnostics) -> list:
    """Code actions (with their edits) for the `cost/asymptotically-dominated` diagnostics."""
    from tirkit.sparse.reorder import cheaper_orders
    if not a.has_kernels:
        return []
    conv = server.converter(a)
    out = []
    for d in diagnostics or []:
        if str(d.code) != CODE:
            continue
        line, _ = conv.line_col(d.range.start)
        for fix in cheaper_orders(a.result, line):
            edits = line_edits(conv, a.text.split("\n"), fix.text.split("\n"))
            out.append(T.CodeAction(title=fix.title, kind=T.CodeActionKind.QuickFix,
                                    diagnostics=[d], is_preferred=not out,
                                    edit=T.WorkspaceEdit(changes={a.uri: edits})))
    return out


def setup(server) -> None:
    """Nothing to register: hover and code actions call `hover_markdown`/`quick_fixes`."""
