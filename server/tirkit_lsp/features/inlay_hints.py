"""Inlay hints: the trip count after each loop's `for` line (none in a kernel holding errors,
whose IR may lack the loops under it), each block iterator's domain and kind after its
name, and before each argument of a call `Module.f(...)` f's parameter name (none where the
argument is written as that name, or as its `.data`)."""
from __future__ import annotations

from lsprotocol import types as T

from tirkit.ir import stmt as S
from tirkit.verify.module_calls import call_arguments

from .. import render


def inlay_hints(server, a, rng: T.Range) -> list:
    if not a.has_kernels:
        return []
    conv = server.converter(a)
    first, last = rng.start.line + 1, rng.end.line + 1
    out = []
    index = a.index
    seen_lines = set()
    partial = [f.span for _, f in a.result.module.prim_funcs()
               if f.span is not None and a.result.has_errors(f)]
    for loop in index.loops_in(first, last):
        sp = loop.span
        if not (first <= sp.line <= last) or sp.line in seen_lines or any(
                k.line <= sp.line <= k.end_line for k in partial):
            continue
        seen_lines.add(sp.line)
        text = a.lines[sp.line - 1] if sp.line - 1 < len(a.lines) else ""
        end = len(text.rstrip())
        if "#" in text:
            end = len(text[:text.index("#")].rstrip())
        out.append(T.InlayHint(position=T.Position(sp.line - 1,
                                                   conv.to_client_char(sp.line - 1, end)),
                               label=f" {render.loop_trip_count(loop)} iterations",
                               kind=None, padding_left=True))
    for sym in index.symbols_in(first, last):
        if sym.role != "iter" or not isinstance(sym.owner, S.Block):
            continue
        sp = sym.def_span
        if not (first <= sp.line <= last):
            continue
        iv = next((v for v in sym.owner.iter_vars if v.var is sym.node), None)
        if iv is None:
            continue
        pr = render.printer_for(sym.func)
        out.append(T.InlayHint(
            position=conv.position(sp.end_line, sp.end_column),
            label=f": {render.KIND.get(iv.kind, iv.kind)} {render.domain_text(pr, iv.dom)}",
            kind=T.InlayHintKind.Type))
    out.extend(_parameter_hints(a, conv, first, last))
    return out


def _parameter_hints(a, conv, first: int, last: int) -> list:
    """`dst:` before each argument of the module's function calls on lines first..last."""
    module = a.result.module
    shown = [f for _, f in module.prim_funcs()
             if f.span is not None and f.span.end_line >= first and f.span.line <= last]
    out = []
    for g, _, p, s in call_arguments(module, shown):
        if s is None or s.line != s.end_line or not first <= s.line <= last or \
                s.line > len(a.lines):
            continue
        name = g.param_name(p)
        if a.lines[s.line - 1][s.column - 1:s.end_column - 1] in (name, name + ".data"):
            continue
        out.append(T.InlayHint(position=conv.position(s.line, s.column), label=f"{name}:",
                               kind=T.InlayHintKind.Parameter, padding_right=True))
    return out


def setup(server) -> None:
    @server.safe_feature(T.TEXT_DOCUMENT_INLAY_HINT, default=list)
    async def hints(params: T.InlayHintParams):
        a = await server.analysis(params.text_document.uri)
        if a is None:
            return []
        return await server.run_sync(inlay_hints, server, a, params.range)
