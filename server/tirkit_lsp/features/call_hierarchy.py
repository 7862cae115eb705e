"""Call hierarchy of an `@I.ir_module`'s functions: prepare on a call `Module.f` or on f's
`def`, then the functions that call f (each call's range) and the functions f calls."""
from __future__ import annotations

from lsprotocol import types as T

from ..render import function_signature
from .definition import symbol_at


def _item(a, conv, sym) -> T.CallHierarchyItem:
    f = sym.func
    return T.CallHierarchyItem(name=sym.name, kind=T.SymbolKind.Function, uri=a.uri,
                               range=conv.range(f.span), selection_range=conv.range(sym.def_span),
                               detail=function_signature(f), data={"name": sym.name})


def prepare(server, a, pos):
    sym, conv = symbol_at(server, a, pos)
    if sym is None or sym.kind != "function":
        return None
    return [_item(a, conv, sym)]


def _symbol(a, item):
    name = (item.data or {}).get("name") if isinstance(item.data, dict) else item.name
    return a.index.function_symbol(name or item.name)


def incoming(server, a, item):
    sym = _symbol(a, item)
    if sym is None:
        return []
    conv = server.converter(a)
    out = []
    for f, uses in a.index.callers(sym):
        caller = a.index.function_symbol(f.name)
        if caller is not None:
            out.append(T.CallHierarchyIncomingCall(
                from_=_item(a, conv, caller), from_ranges=[conv.range(u) for u in uses]))
    return out


def outgoing(server, a, item):
    sym = _symbol(a, item)
    if sym is None:
        return []
    conv = server.converter(a)
    return [T.CallHierarchyOutgoingCall(to=_item(a, conv, g),
                                        from_ranges=[conv.range(u) for u in uses])
            for g, uses in a.index.callees(sym)]


def setup(server) -> None:
    @server.safe_feature(T.TEXT_DOCUMENT_PREPARE_CALL_HIERARCHY)
    async def prepare_call_hierarchy(params: T.CallHierarchyPrepareParams):
        a = await server.analysis(params.text_document.uri)
        if a is None:
            return None
        return await server.run_sync(prepare, server, a, params.position)

    for method, answer in ((T.CALL_HIERARCHY_INCOMING_CALLS, incoming),
                           (T.CALL_HIERARCHY_OUTGOING_CALLS, outgoing)):
        _on_item(server, method, answer)


def _on_item(server, method, answer) -> None:
    """Register `answer(server, analysis, item)` for a request about a hierarchy item."""
    @server.safe_feature(method, default=list)
    async def calls(params):
        a = await server.analysis(params.item.uri)
        if a is None:
            return []
        return await server.run_sync(answer, server, a, params.item)
