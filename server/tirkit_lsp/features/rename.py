"""Rename a buffer or variable inside its kernel; names that would clash are refused."""
from __future__ import annotations

from lsprotocol import types as T
from pygls.exceptions import JsonRpcException

from .definition import symbol_at


class RenameRefused(JsonRpcException):
    CODE = -32803           # RequestFailed


def prepare(server, a, pos):
    sym, conv = symbol_at(server, a, pos)
    if sym is None or sym.kind == "block":
        return None
    line, col = conv.line_col(pos)
    for u in sym.uses:
        if u.line == line and u.column <= col <= u.end_column:
            return T.PrepareRenamePlaceholder(range=conv.range(u), placeholder=sym.name)
    return T.PrepareRenamePlaceholder(range=conv.range(sym.def_span), placeholder=sym.name)


def rename(server, a, pos, new_name: str):
    sym, conv = symbol_at(server, a, pos)
    if sym is None:
        return None
    if sym.kind == "block":
        raise RenameRefused(message="blocks are renamed by editing their name string")
    why = a.index.rename_conflict(sym, new_name)
    if why:
        raise RenameRefused(message=f"cannot rename '{sym.name}': {why}")
    edits = [T.TextEdit(range=conv.range(s), new_text=new_name) for s in sym.uses]
    return T.WorkspaceEdit(changes={a.uri: edits})


def setup(server) -> None:
    @server.safe_feature(T.TEXT_DOCUMENT_PREPARE_RENAME)
    async def prepare_rename(params: T.PrepareRenameParams):
        a = await server.analysis(params.text_document.uri)
        if a is None:
            return None
        return await server.run_sync(prepare, server, a, params.position)

    @server.safe_feature(T.TEXT_DOCUMENT_RENAME, T.RenameOptions(prepare_provider=True))
    async def do_rename(params: T.RenameParams):
        a = await server.analysis(params.text_document.uri)
        if a is None:
            return None
        return await server.run_sync(rename, server, a, params.position, params.new_name)
