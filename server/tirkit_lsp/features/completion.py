"""Completion of the `T.` namespace (whatever the file's alias), with documentation, and of
the functions of an `@I.ir_module` after its class name (`Module.`), with their signatures."""
from __future__ import annotations

import functools
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


@functools.cache            # built once, read by every request's thread
def _items() -> tuple:
    items = []
    for name in sorted(NAMES):
        doc = DOCS.get(name)
        kind = T.CompletionItemKind.Function if name[:1].islower() else T.CompletionItemKind.Class
        items.append(T.CompletionItem(
            label=name, kind=kind, detail="TVMScript TIR",
            documentation=T.MarkupContent(kind=T.MarkupKind.Markdown, value=doc) if doc else None,
            sort_text=("0" if doc else "1") + name))
    return tuple(items)


def _module_functions(kernel, prefix: str) -> list:
    """The prim_funcs of the module `kernel` that start with `prefix`, in the order they
    are defined, with their signatures (render.module_signatures)."""
    from ..render import module_signatures
    return [T.CompletionItem(label=name, kind=T.CompletionItemKind.Function, detail=detail,
                             sort_text=f"{i:05d}")
            for i, (name, detail) in enumerate(module_signatures(kernel))
            if name.startswith(prefix)]


def complete(server, a, pos: T.Position):
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
    kernel = a.kernel_at(line)
    if m and kernel is not None and kernel.module_name is not None and \
            m.group(1) == kernel.module_name:
        return T.CompletionList(is_incomplete=False,
                                items=_module_functions(kernel, m.group(2) or ""))
    if not m or m.group(1) not in aliases:
        return None
    prefix = m.group(2) or ""
    items = [i for i in _items() if i.label.startswith(prefix)] if prefix else list(_items())
    return T.CompletionList(is_incomplete=False, items=items)


def setup(server) -> None:
    @server.safe_feature(T.TEXT_DOCUMENT_COMPLETION,
                         T.CompletionOptions(trigger_characters=["."]))
    async def completion(params: T.CompletionParams):
        a = await server.analysis(params.text_document.uri)
        if a is None:
            return None
        return await server.run_sync(complete, server, a, params.position)
