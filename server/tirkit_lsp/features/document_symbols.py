"""Document symbols: the module (an `@I.ir_module` class), its kernels, their blocks (nested
as in the source) and buffers."""
from __future__ import annotations

from lsprotocol import types as T

from tirkit.ir import stmt as S
from tirkit.ir.visit import walk


def _sym(conv, name, kind, span, sel_span, detail=None, children=None):
    return T.DocumentSymbol(name=name, kind=kind, range=conv.range(span),
                            selection_range=conv.range(sel_span or span), detail=detail,
                            children=children or [])


def _blocks(conv, stmt) -> list:
    """Blocks directly under `stmt` (not under another block), nested by the source."""
    out = []

    def fn(x):
        if isinstance(x, S.Block):
            if x.span is not None and x.name_hint != "root":
                kids = _blocks(conv, (x.init, x.body))
                for b in x.alloc_buffers:
                    if b.span is not None:
                        kids.insert(0, _sym(conv, b.name, T.SymbolKind.Array, b.span, None,
                                            f"{b.dtype} {b.scope}"))
                out.append(_sym(conv, x.name_hint, T.SymbolKind.Struct, x.span, x.name_span,
                                "block", kids))
                return False
            return True
        return True
    walk(stmt, fn)
    return out


def document_symbols(server, a) -> list:
    if not a.has_kernels:
        return []
    conv = server.converter(a)
    kernels = []
    for f in a.functions():
        if f.span is None:
            continue
        kids = []
        for _, b in f.buffer_map:
            if b.span is not None:
                kids.append(_sym(conv, b.name, T.SymbolKind.Variable, b.span, None,
                                 f"{b.dtype} {tuple(getattr(d, 'value', d) for d in b.shape)}"))
        root = f.body.block if isinstance(f.body, S.BlockRealize) else None
        if root is not None:
            for b in root.alloc_buffers:
                if b.span is not None:
                    kids.append(_sym(conv, b.name, T.SymbolKind.Array, b.span, None,
                                     f"{b.dtype} {b.scope}"))
        kids += _blocks(conv, f.body)
        kernels.append(_sym(conv, f.name, T.SymbolKind.Function, f.span, f.header_span,
                            "prim_func", kids))
    out = []
    for k in a.result.kernels:
        if k.module_name:
            c = k.chunk
            span_lines = (c.start_line, c.end_line)
            members = [s for s in kernels
                       if span_lines[0] <= s.range.start.line + 1 <= span_lines[1]]
            for m in members:
                kernels.remove(m)
            end_len = len(a.lines[c.end_line - 1]) if c.end_line - 1 < len(a.lines) else 0
            rng = T.Range(T.Position(c.start_line - 1, 0), T.Position(c.end_line - 1, end_len))
            out.append(T.DocumentSymbol(name=k.module_name, kind=T.SymbolKind.Module,
                                        range=rng, selection_range=rng, detail="ir_module",
                                        children=members))
    return out + kernels


def setup(server) -> None:
    @server.safe_feature(T.TEXT_DOCUMENT_DOCUMENT_SYMBOL, default=list)
    async def symbols(params: T.DocumentSymbolParams):
        a = await server.analysis(params.text_document.uri)
        if a is None:
            return []
        return await server.run_sync(document_symbols, server, a)
