"""Document highlight: the symbol under the cursor, its definition written, its uses read."""
from __future__ import annotations

from lsprotocol import types as T

from .definition import symbol_at


def highlights(server, a, pos):
    sym, conv = symbol_at(server, a, pos)
    if sym is None:
        return []
    out = []
    for s in sym.uses:
        is_def = (s.line, s.column) == (sym.def_span.line, sym.def_span.column)
        out.append(T.DocumentHighlight(
            range=conv.range(s),
            kind=T.DocumentHighlightKind.Write if is_def else T.DocumentHighlightKind.Read))
    return out


def setup(server) -> None:
    @server.safe_feature(T.TEXT_DOCUMENT_DOCUMENT_HIGHLIGHT, default=list)
    async def highlight(params: T.DocumentHighlightParams):
        a = await server.analysis(params.text_document.uri)
        if a is None:
            return []
        return await server.run_sync(highlights, server, a, params.position)
