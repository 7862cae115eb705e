"""Completion of the `T.` namespace (whatever the file's alias), with documentation."""
from __future__ import annotations

import re

from lsprotocol import types as T

from tirkit.script.namespace import DOCS, NAMES

_BEFORE = re.compile(r"([A-Za-z_]\w*)\.\s*([A-Za-z_]\w*)?$")
_AXIS = re.compile(r"([A-Za-z_]\w*)\.axis\.\s*([A-Za-z_]\w*)?$")
AXIS_DOCS = {
    "spatial": "`T.axis.spatial(dom, binding)`: a data-parallel block iterator.",
    "reduce": "`T.axis.reduce(dom, binding)`: a reduction block iterator.",
    "scan": "`T.axis.scan(dom, binding)`: an ordered (scan) block iterator.",
    "opaque": "`T.axis.opaque(dom, binding)`: an iterator of unknown kind.",
    "remap": '`T.axis.remap(kinds, loops)`: one iterator per loop, kinds spelled "S"/"R".',
}


def _items():
    items = []
    for name in sorted(NAMES):
        doc = DOCS.get(name)
        kind = T.CompletionItemKind.Function if name[:1].islower() else T.CompletionItemKind.Class
        items.append(T.CompletionItem(
            label=name, kind=kind, detail="TVMScript TIR",
            documentation=T.MarkupContent(kind=T.MarkupKind.Markdown, value=doc) if doc else None,
            sort_text=("0" if doc else "1") + name))
    return items


_ALL = None


def complete(server, a, pos: T.Position):
    global _ALL
    conv = server.converter(a)
    line, col = conv.line_col(pos)
    text = a.lines[line - 1][:col - 1] if line - 1 < len(a.lines) else ""
    aliases = set(a.result.aliases.tir) | {"T"}       # read once per file, by the parse
    m = _AXIS.search(text)
    if m and m.group(1) in aliases:
        prefix = m.group(2) or ""
        return T.CompletionList(is_incomplete=False, items=[
            T.CompletionItem(label=n, kind=T.CompletionItemKind.Function, detail="block iterator",
                             documentation=T.MarkupContent(kind=T.MarkupKind.Markdown, value=d))
            for n, d in AXIS_DOCS.items() if n.startswith(prefix)])
    m = _BEFORE.search(text)
    if not m or m.group(1) not in aliases:
        return None
    if _ALL is None:
        _ALL = _items()
    prefix = m.group(2) or ""
    items = [i for i in _ALL if i.label.startswith(prefix)] if prefix else _ALL
    return T.CompletionList(is_incomplete=False, items=items)


def setup(server) -> None:
    @server.safe_feature(T.TEXT_DOCUMENT_COMPLETION,
                         T.CompletionOptions(trigger_characters=["."]))
    async def completion(params: T.CompletionParams):
        a = await server.analysis(params.text_document.uri)
        if a is None:
            return None
        return await server.run_sync(complete, server, a, params.position)
