"""Hover: kernels (on a kernel's name: signature, FLOPs, time, blocks, diagnostics), block
signatures with costs (on a block's name, its `with` line or an iterator), loops (on a loop
variable or `for`), buffers, variables, constants and `T.` names."""
from __future__ import annotations

from lsprotocol import types as T

from tirkit.ir import stmt as S
from tirkit.script.namespace import DOCS, NAMES

from .. import render
from . import asymptotic
from .configuration import document_intrinsics, document_target


def _tir_aliases(a) -> set:
    al = a.result.aliases               # read once per file, by the parse
    return set(al.tir) | {"T"}


def hover_at(server, a, pos: T.Position):
    if not a.has_kernels:
        return None
    conv = server.converter(a)
    line, col = conv.line_col(pos)
    index = a.index
    func = index.function_at(line)
    if func is None:
        return None
    target = server.settings.roofline_target(func, document_target(server, a))
    dirs = document_intrinsics(server, a)
    name = func.header_span
    if name is not None and name.line == line and name.column <= col <= name.end_column:
        return kernel_hover(server, a, func, target, conv.range(name))
    hit = index.token_at(line, col)
    text, span = None, None
    if hit is not None:
        tok, sym = hit
        span = tok.span
        call = _intrinsic_call_at(a, func, line, col) if tok.attribute else None
        if call is not None:
            text, span = call
        elif tok.attribute and tok.base in _tir_aliases(a):
            text = t_name_markdown(tok.base, tok.name)
        elif sym is not None:
            text = symbol_markdown(a, sym, target, dirs)
    sparse = asymptotic.hover_markdown(func, line, a.result.has_errors(func))
    if sparse is not None and (text is None or index.block_at_line(line) is None):
        text, span = sparse, None
    if text is None:
        blk = index.at(line, col) if hit is None else None
        if blk is not None and blk.kind == "block":
            text, span = symbol_markdown(a, blk, target, dirs), blk.def_span
        else:
            b = index.block_at_line(line)
            if b is not None:
                text, span = symbol_markdown(a, b, target, dirs), None
            else:
                loop = index.loop_at_line(line)
                if loop is not None:
                    text = _loop_markdown(a, func, loop)
    if text is None:
        return None
    return T.Hover(contents=T.MarkupContent(kind=T.MarkupKind.Markdown, value=text),
                   range=conv.range(span) if span is not None else None)


def kernel_hover(server, a, func, target, rng):
    """On a kernel's name: its signature, FLOPs, estimated time, blocks, diagnostics (those
    the client is shown now: the full set for a saved version in the `onSave` mode)."""
    from tirkit.analysis.summary import kernel_summary

    from ..render_kernel import kernel_markdown
    from .diagnostics import wants_full
    from .suppressions import visible_diagnostics
    from tirkit.cost.predict import predict_kernels
    summary = kernel_summary(func, target, a.costs(func))
    # a kernel holding errors is partial IR: no figures are estimated or predicted for it
    partial = a.result.has_errors(func)
    (predicted,) = predict_kernels([func]) if target == "llvm" and not partial else (None,)
    sp = func.span
    diags = [d for d in visible_diagnostics(server, a, wants_full(server, a))
             if d.span is not None and sp.line <= d.span.line <= sp.end_line]
    fsym = a.index.function_symbol(func.name)
    callers = render.callers_text(a.index.callers(fsym)) if fsym is not None else ""
    text = kernel_markdown(func, summary, diags, a.result.module.name, predicted, partial,
                           callers)
    return T.Hover(contents=T.MarkupContent(kind=T.MarkupKind.Markdown, value=text), range=rng)


def _intrinsic_call_at(a, func, line, col):
    """(markdown, the name's span) on the name of a call of PTX's warp instructions or of
    TVM's tensor-core builtins (what `tirkit.codegen.cuda.describe` says it does), or None."""
    from tirkit.codegen.cuda.describe import describe
    from tirkit.diagnostics import Span
    from tirkit.ir import expr as E
    from tirkit.ir.visit import find_first
    lines = a.index.lines
    text = lines[line - 1] if 0 < line <= len(lines) else ""

    def name_end(x):
        """The 1-based column where a call's name ends (its "(")."""
        return text.find("(", x.span.column - 1) + 1

    call = find_first(func.body, lambda x: x.span is not None and x.span.line == line and
                      x.span.column <= col <= name_end(x), E.Call)
    if call is None:
        return None
    span = Span(line, call.span.column, line, name_end(call), call.span.file)
    lines_md = describe(call)
    if lines_md is None:
        return None
    return f"**`{text[span.column - 1:span.end_column - 1]}`**\n\n" + "\n".join(lines_md), span


def t_name_markdown(alias: str, name: str):
    doc = DOCS.get(name)
    if doc is None:
        if name not in NAMES:
            return None
        doc = "A name of the TVMScript TIR namespace."
    return f"**`{alias}.{name}`**\n\n{doc}"


def symbol_markdown(a, sym, target, dirs=()):
    func = sym.func
    if sym.kind == "function":
        cost = None if a.result.has_errors(func) else a.costs(func).total
        return render.function_markdown(func, a.result.module.name, a.index.callers(sym), cost)
    if sym.kind == "block":
        partial = a.result.has_errors(func)     # partial IR: no regions, cost or intrinsics
        text = _block_markdown(a, func, sym.node, target, partial)
        return text if partial else text + _tensorize(sym.node, target, dirs)
    if sym.kind == "buffer":
        text = render.buffer_markdown(func, sym.node, sym.role)
        const = _constant_of(func, sym.node.data)
        if const is not None:         # a buffer over a constant: its values too
            stats = render.constant_markdown(func, const, a.result.module.constants)
            text += "\n" + "\n".join(x for x in stats.split("\n")
                                      if x.startswith(("- min", "- max", "- mean")))
        return text
    if sym.role == "iter" and isinstance(sym.owner, S.Block):
        return _block_markdown(a, func, sym.owner, target, a.result.has_errors(func))
    if sym.role == "loop" and isinstance(sym.owner, S.For):
        return _loop_markdown(a, func, sym.owner)
    if sym.role == "const" and isinstance(sym.owner, S.AllocateConst):
        return render.constant_markdown(func, sym.owner, a.result.module.constants)
    return render.var_markdown(func, sym.node, sym.role)


def _loop_markdown(a, func, loop) -> str:
    """A loop's hover; in a kernel holding errors the loops under it may be missing from
    its IR, so no trip count is given."""
    trip = render.NOT_ESTIMATED if a.result.has_errors(func) else render.loop_trip_count(loop)
    return render.loop_markdown(func, loop, trip)


def _block_markdown(a, func, block, target, partial) -> str:
    cost = None if partial else a.costs(func).block(block)
    return render.block_markdown(func, block, cost, target, partial=partial)


def _tensorize(block, target, dirs) -> str:
    """The intrinsics that can serve the block (with their mapping), the first reason each
    other one cannot (`tirkit.tensorize.suggest`)."""
    from tirkit.tensorize.suggest import hover_lines
    lines = hover_lines(block, target, list(dirs) or None)
    return "\n\n**Tensorize**\n\n" + "\n".join(lines) if lines else ""


def _constant_of(func, data_var):
    from tirkit.ir.visit import find_first
    return find_first(func.body, lambda x: x.buffer_var is data_var, S.AllocateConst)


def setup(server) -> None:
    @server.safe_feature(T.TEXT_DOCUMENT_HOVER)
    async def hover(params: T.HoverParams):
        a = await server.analysis(params.text_document.uri)
        if a is None:
            return None
        return await server.run_sync(hover_at, server, a, params.position)
