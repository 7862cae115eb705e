"""Go to definition of a buffer, variable or block."""
from __future__ import annotations

from lsprotocol import types as T


def symbol_at(server, a, pos):
    if not a.has_kernels:
        return None, None
    conv = server.converter(a)
    line, col = conv.line_col(pos)
    return a.index.at(line, col), conv


def definition(server, a, pos):
    sym, conv = symbol_at(server, a, pos)
    if sym is None:
        return None
    return [T.Location(uri=a.uri, range=conv.range(sym.def_span))]


def setup(server) -> None:
    @server.safe_feature(T.TEXT_DOCUMENT_DEFINITION)
    async def goto(params: T.DefinitionParams):
        a = await server.analysis(params.text_document.uri)
        if a is None:
            return None
        return await server.run_sync(definition, server, a, params.position)
