"""References: every place a buffer, variable or block is named in its kernel."""
from __future__ import annotations

from lsprotocol import types as T

from .definition import symbol_at


def references(server, a, pos, include_declaration: bool):
    sym, conv = symbol_at(server, a, pos)
    if sym is None:
        return []
    spans = [u for u in sym.uses
             if include_declaration or (u.line, u.column) != (sym.def_span.line,
                                                             sym.def_span.column)]
    return [T.Location(uri=a.uri, range=conv.range(s)) for s in spans]


def setup(server) -> None:
    @server.safe_feature(T.TEXT_DOCUMENT_REFERENCES, default=list)
    async def refs(params: T.ReferenceParams):
        a = await server.analysis(params.text_document.uri)
        if a is None:
            return []
        incl = bool(params.context and params.context.include_declaration)
        return await server.run_sync(references, server, a, params.position, incl)
