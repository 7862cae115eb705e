"""A code lens on each kernel: its FLOPs and roofline time on the configured target, and the
cost model's predicted time for CPU kernels ("predicted 1.9 ms (model), roofline 0.7 ms on
llvm")."""
from __future__ import annotations

from lsprotocol import types as T

from tirkit.analysis.cost import format_seconds, roofline_seconds
from tirkit.cost.predict import predict_kernels

from ..render import NOT_ESTIMATED
from .configuration import document_target
from .tune_kernel import tune_lenses


def code_lenses(server, a) -> list:
    if not a.has_kernels:
        return []
    conv = server.converter(a)
    out = []
    configured = document_target(server, a)
    funcs = [f for f in a.functions() if f.span is not None]
    targets = [server.settings.roofline_target(f, configured) for f in funcs]
    # a kernel holding errors is partial IR: no figures are estimated or predicted for it
    partial = [a.result.has_errors(f) for f in funcs]
    it = iter(predict_kernels([f for f, t, bad in zip(funcs, targets, partial)
                               if t == "llvm" and not bad]))
    for f, target, bad in zip(funcs, targets, partial):
        span = f.header_span or f.span
        if bad:
            out.append(T.CodeLens(range=conv.range(span),
                                  command=T.Command(title=NOT_ESTIMATED, command="")))
            continue
        cost = a.costs(f).total
        flops = cost.flops.value
        ftext = f"{flops:,}" if flops is not None else str(cost.flops)
        roof = format_seconds(roofline_seconds(cost, target))
        p = next(it) if target == "llvm" else None
        if p is not None:
            title = (f"{ftext} FLOPs · predicted {format_seconds(p)} (model), roofline {roof} "
                     f"on {target}")
        else:
            title = f"{ftext} FLOPs · ~{roof} on {target}"
        out.append(T.CodeLens(range=conv.range(span),
                              command=T.Command(title=title, command="")))
    return out + tune_lenses(server, a)


def setup(server) -> None:
    @server.safe_feature(T.TEXT_DOCUMENT_CODE_LENS, T.CodeLensOptions(resolve_provider=False),
                         default=list)
    async def lenses(params: T.CodeLensParams):
        a = await server.analysis(params.text_document.uri)
        if a is None:
            return []
        return await server.run_sync(code_lenses, server, a)
